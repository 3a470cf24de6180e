// Hints for a run's report: things the data shows that a reader should not miss, each found by
// a simple, stated rule (the rule travels with the hint, so the report can print it):
//
//  - cliff:        scenario runs: between two adjacent steps (in run order) a store's write or
//                  read req/s drops by more than 5x;
//  - swap_onset:   the store's process (see store_instance) has a kvmon sample with swap_kib > 0
//                  while the store was benchmarked, after samples with 0 (or at the first
//                  sample); with the store's req/s before and after that moment;
//  - cgroup_limit: the store's cgroup memory peak against its limit, when it has one;
//  - cgroup_memory: the first cgroup_high / cgroup_max / cgroup_failcnt / cgroup_oom_kill event of
//                  the store's process while it was benchmarked, with req/s 5 s before and after
//                  (only with >= 3 seconds of requests each side);
//  - persistence:  Redis began a BGSAVE or AOF rewrite (store_stats *_in_progress 0 -> 1) and p99
//                  more than doubled against the 5 s before (>= 3 s), with fork time and COW;
//  - latency:      Redis's latency monitor (store_stats latency_*): each event it recorded
//                  while the store was benchmarked (a new latency_<event>_ts: fork, aof-fsync,
//                  command ...), with its ms; or "monitoring off" when the store's
//                  latency-monitor-threshold was 0 (it records nothing then);
//  - client_stall: `client_stall` events (a second whose p99 was mostly kvdrive's own time,
//                  kvbench/client_stall.hpp): how many, and the first one's figures;
//  - client_bound: a `client_bound` event of the run, or client_seconds with
//                  busiest_thread_cpu_pct > 90 (kvdrive, not the store, was the bottleneck);
//  - cluster_redirects: a Redis Cluster target's client_seconds count MOVED / ASK redirects
//                  (slots moved while it was benchmarked), with the totals and the peak per s;
//  - pool_server: a memcached pool's server with failed requests or probes in
//                  pool_server_seconds: from when, how they failed, the probes, and the
//                  requests rehashed to other servers (on-failure=eject);
//  - store_failed: a second with errors + timeouts > 0 after seconds without any, or a phase
//                  or the run marked failed.
//
// Also here: which monitored process is a target's store, shared with the HTML report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

struct Hint {
  std::string kind;              // cliff, swap_onset, cgroup_memory, persistence, client_bound, ...
  std::string store;             // the target's uri; empty for run-wide hints
  std::string message;           // a sentence for people, with the numbers
  std::string rule;              // the rule that fired, in words
  std::optional<int64_t> ts_us;  // when, if the hint is about a moment
};

// The hints of one run, in the order above (by store within a kind), advice about a store's
// settings (a latency hint with no moment: monitoring off) last.
std::vector<Hint> compute_hints(Database& db, int64_t run_id);

// The kvmon process instance that is target `target_id`'s store: the instance whose pid the
// store reported about itself (store_stats 'process_id' from Redis INFO, 'pid' from memcached
// stats), else one named 'redis-server' (protocol redis) or 'memcached' (protocol memcached).
// Only instances of the run's own kvmon sessions (view run_sessions: in a merged file, not
// another client host's copy). Among several candidates, the one with most samples during the
// run. Fork children (Redis's BGSAVE) are never chosen. nullopt when kvmon did not watch it.
std::optional<int64_t> store_instance(Database& db, int64_t target_id);

}  // namespace kv::drive
