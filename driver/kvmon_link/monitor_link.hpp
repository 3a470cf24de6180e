// kvdrive's link to one kvmon (--monitor HOST:PORT, docs/protocol.md): a network thread
// connects, measures the clock offset (8 time exchanges, lowest round trip; again every
// minute), subscribes with backfill from kvmon's history, and reconnects with backoff when the
// link drops, backfilling from the last tick it received. It never touches the Database: what
// arrives waits in a mutex-protected queue until the thread that owns the Database calls
// flush_into. A kvmon that restarted has lost its history: a 'monitor_gap' event says so.
//
// Thread-safety: start() and stop() from one thread; flush_into() from the Database's owner
// (may be another thread); all three may run concurrently with the network thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

struct MonitorLinkOptions {
  int connect_timeout_ms = 3000;
  int64_t resync_interval_us = 60'000'000;  // re-measure the clock offset this often
  int64_t max_backoff_us = 5'000'000;       // reconnect delay doubles up to this
};

class MonitorLink {
 public:
  // host_port: "host:port" or "[v6]:port"; token: sent in hello (may be empty). Throws
  // UsageError if host_port does not parse.
  MonitorLink(std::string host_port, std::string token, bool optional,
              MonitorLinkOptions options = {});
  ~MonitorLink();  // stops the thread if stop() was not called
  MonitorLink(const MonitorLink&) = delete;
  MonitorLink& operator=(const MonitorLink&) = delete;

  // Call once. Connects and measures the clock offset. Throws std::runtime_error with a clear
  // message if kvmon is unreachable or refuses (wrong token, version) and the link is not optional;
  // an optional link logs a warning and keeps trying in the background.
  void start();
  // Writes what arrived since the last call, at most max_items of it (the rest waits for the
  // next call, so a flood never holds the caller up for long), into db in short write
  // transactions and returns the latest RSS/swap (KiB) per remote instance name. Throws
  // SqliteError (the rows stay queued for the next call).
  struct Latest {
    std::string name;
    std::optional<int64_t> rss_kib, swap_kib;
  };
  static constexpr size_t kAll = SIZE_MAX;
  std::vector<Latest> flush_into(kv::Database& db, size_t max_items = kAll);
  // Stops the network thread; the caller's next flush_into writes the rest and completes the
  // session row. With until_ts_us (kvdrive's clock), first waits for kvmon's tick scheduled at
  // or after it, so the samples cover the run to its end: at most kvmon's interval plus a
  // second; not for a kvmon sampling slower than every 4 s, nor while the link is down.
  void stop(std::optional<int64_t> until_ts_us = std::nullopt);

  const std::string& host_port() const;
  // The latest clock estimate (offset to add to kvmon's times, uncertainty), once measured.
  struct Clock {
    int64_t offset_us, uncertainty_us, rtt_us;
  };
  std::optional<Clock> clock() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kv::drive
