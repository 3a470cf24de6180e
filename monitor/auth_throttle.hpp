// Failed tokens, per client address, for kvmon's listeners (the kvmon link and /metrics): the
// first 3 failures cost nothing (a mistyped token), each one after that shuts the address out
// for 1 s, doubling to 60 s; a success forgets them, and so do 10 minutes without one. Attempts
// are logged as one line per address and 10 s, with their counts, not one line each (at most
// 4096 addresses are remembered). Not thread-safe: one io_context thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace kv::mon {

class AuthThrottle {
 public:
  // `who`: how log lines name a peer ("metrics client").
  explicit AuthThrottle(std::string who) : who_(std::move(who)) {}
  // Whether `address` is shut out now (counted for the summary); the microseconds left in
  // *wait_us. A shut-out address's token is not even compared.
  bool blocked(const std::string& address, int64_t* wait_us);
  // A wrong or missing token from `peer` (address:port) at `address`.
  void failed(const std::string& address, const std::string& peer);
  void succeeded(const std::string& address) { records_.erase(address); }
  // Logs the counts of addresses whose period has passed (all of them if `all`); forgets
  // quiet ones.
  void log_summaries(bool all);
  size_t addresses() const { return records_.size(); }

 private:
  struct Record {
    int failures = 0;             // since the last success or 10 minutes of quiet
    int64_t last_failure_us = 0;  // steady clock
    int64_t blocked_until_us = 0;
    int64_t unlogged_failures = 0, unlogged_refusals = 0;
    int64_t last_log_us = 0;
  };
  void summarize(const std::string& address, Record& r, int64_t now);

  std::string who_;
  std::map<std::string, Record> records_;
};

}  // namespace kv::mon
