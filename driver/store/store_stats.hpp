// Store-side counters: a poller that asks one target for them every interval (which counters
// are kept and what each means: schema/README.md, "store_stats"), so a run can set the driver's
// own op counts beside the store's. The replies' parsers are in store/stats_parsers.hpp, the
// connections to each server (Redis, memcached, TLS) in store/stats_sources.hpp.
//
// Thread-safety: StoreStatsPoller runs its own thread with its own connection(s); drain() and
// latest() may be called from any thread while it runs. start()/stop() are for the owning
// thread only.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "store/stat_sample.hpp"
#include "store/stats_parsers.hpp"  // parse_redis_info, parse_memcached_stats
#include "store/target_uri.hpp"

namespace kv::drive {

// Polls one target's own counters on its own connection and thread every interval_us, on
// absolute deadlines (a slow poll does not shift later ones; missed ticks are skipped, not
// bunched). A poll that fails (server down, stalled, auth error) is logged once per outage with
// kv::log_warn, and its connection is dropped; the next tick connects anew. Recovery is logged
// with kv::log_info. No exception leaves the thread.
//
// Each server's poll (connect + request + reply) is bounded by timeout_us, so stop() returns
// within about one timeout per server of the target. For a memcached pool every server is
// polled in turn; with more than one server the names are prefixed "host:port/" (one server:
// plain names). A sample is queued when at least one server answered. A Redis Cluster target
// (redis+cluster://) polls every master named by CLUSTER SLOTS when the poller starts, one row
// per node: every name is prefixed "host:port/" (nothing is summed across nodes; a node's
// cmdstat_set_calls is "127.0.0.1:7000/cmdstat_set_calls"). A TLS target is polled over TLS
// (its TlsContext is built when the thread starts; a bad CA / cert file stops the poller with
// one logged line); a TLS cluster (rediss+cluster://) too.
//
// Samples wait in a bounded queue (kMaxQueued; the oldest are dropped, with one warning) until
// drain() takes them.
class StoreStatsPoller {
 public:
  static constexpr size_t kMaxQueued = 3600;

  // Throws UsageError if the target has no server or interval_us / timeout_us <= 0.
  StoreStatsPoller(TargetSpec target, int64_t interval_us = 1'000'000,
                   int64_t timeout_us = 1'000'000);
  ~StoreStatsPoller();  // stops and joins
  StoreStatsPoller(const StoreStatsPoller&) = delete;
  StoreStatsPoller& operator=(const StoreStatsPoller&) = delete;

  // Starts the thread; the first poll is immediate. No-op while running.
  void start();
  // Wakes the thread, lets it poll one last time (at most one timeout per server; skipped
  // when !last_poll, e.g. at Ctrl-C) and joins it; idempotent. A poll under way is finished.
  void stop(bool last_poll = true);
  // Returns and clears the samples gathered since the last call (oldest first).
  std::vector<StoreStatsSample> drain();
  // The most recent value of `name` (as named in the samples), if any.
  std::optional<double> latest(const std::string& name) const;

 private:
  void run();
  void publish(StoreStatsSample sample);

  const TargetSpec target_;
  const int64_t interval_us_;
  const int64_t timeout_us_;
  std::thread thread_;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable wake_;
  bool stopping_ = false;
  bool last_poll_ = true;
  bool dropped_warned_ = false;
  std::deque<StoreStatsSample> queue_;
  std::unordered_map<std::string, double> latest_;
};

}  // namespace kv::drive
