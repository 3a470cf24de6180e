// Failed tokens, per client address, for kvmon's listeners (the kvmon link and /metrics): the
// first 3 failures cost nothing (a mistyped token), each one after that shuts the address out
// for 1 s, doubling to 60 s; a success forgets them, and so do 10 minutes without one. Attempts
// are logged as one line per address and 10 s, with their counts, not one line each (at most
// 4096 addresses are remembered). So is every other refusal of a client (garbage, a request
// before hello, a line too long, an unknown verb): the first with its reason, then counts, so
// no client can flood the log. Not thread-safe: one io_context thread.
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
  // The right token: its failures are forgotten (what refused() counts is kept, so a client
  // that authenticates and then floods is still summarised).
  void succeeded(const std::string& address);
  // Any other refusal of a client at `address` (`peer`: address:port; `why`: the reason sent
  // to it). Logged as failed() is, never shutting the address out.
  void refused(const std::string& address, const std::string& peer, const std::string& why);
  // Logs the counts of addresses whose period has passed (all of them if `all`); forgets
  // quiet ones.
  void log_summaries(bool all);
  size_t addresses() const { return records_.size(); }

 private:
  struct Record {
    int failures = 0;             // since the last success or 10 minutes of quiet
    int64_t last_failure_us = 0;  // steady clock
    int64_t blocked_until_us = 0;
    int64_t unlogged_failures = 0, unlogged_refusals = 0, unlogged_early = 0;
    int64_t last_log_us = 0;
    int64_t last_early_us = 0;  // the latest refused() (steady clock)
  };
  void summarize(const std::string& address, Record& r, int64_t now);

  std::string who_;
  std::map<std::string, Record> records_;
};

}  // namespace kv::mon
