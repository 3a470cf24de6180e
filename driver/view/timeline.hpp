// What the HTML report's timeline draws of one run, read back from the results file: the run's
// wall-time window, its targets and phases, the driver's seconds, and what kvmon and the stores
// saw in that window (process samples, cgroup memory, the store's own memory figure, the host's
// load, kvmon's events). Times are wall-clock µs as stored; NULL stays std::nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// From the run's start to its end, or to the end of its last driver second if that is later (a
// run still running, or cut off, has no end); never before the start.
struct TimelineWindow {
  int64_t start_us = 0, end_us = 0;
};
TimelineWindow timeline_window(Database& db, int64_t run_id);

// One target (store) of the run.
struct TimelineTarget {
  int64_t target_id = 0;
  int ordinal = 0;  // 0-based position in the run
  std::string uri, protocol;
};
// The run's targets in ordinal order.
std::vector<TimelineTarget> timeline_targets(Database& db, int64_t run_id);

// One phase of the run, in phase_id order.
struct TimelinePhase {
  std::string protocol;  // its target's
  std::string name;
  int64_t started_us = 0;
  int64_t ended_us = 0;             // its start when it has not ended
  std::optional<std::string> step;  // the scenario step; nullopt outside scenarios
  int target_ordinal = 0;
};
std::vector<TimelinePhase> timeline_phases(Database& db, int64_t run_id);

// One driver second of one op, warm-up seconds included.
struct TimelineSecond {
  int64_t target_id = 0;
  int target_ordinal = 0;
  std::string uri;
  std::string op;  // "set" or "get"
  int64_t ts_us = 0, interval_us = 0;
  int64_t ops = 0;  // requests completed, any outcome
  int64_t phase_id = 0;
  std::optional<double> hits, misses;
  int64_t phase_max_interval_us = 0;  // the longest second of its phase (all ops)
};
// The run's seconds ordered by target ordinal, op (set before get), time.
std::vector<TimelineSecond> timeline_seconds(Database& db, int64_t run_id);

// One event kvmon recorded about a store's process: of its cgroup's memory (high, max, oom,
// oom_kill, failcnt, under_oom, swap_max, swap_fail, psi_trigger) or its exit and restart.
struct StoreEvent {
  int64_t ts_us = 0;
  std::string kind, message;
};
// The events of process instance `instance_id` within `w`, by time.
std::vector<StoreEvent> store_events(Database& db, int64_t instance_id, const TimelineWindow& w);

// One kvmon sample of a store's process.
struct StoreProcessSample {
  int64_t ts_us = 0;
  int64_t pid = 0;
  std::optional<int64_t> rss_kib, swap_kib;
  std::optional<int64_t> cpu_us;  // user + system, cumulative
};
// The samples of process instance `instance_id` within `w`, by time.
std::vector<StoreProcessSample> store_process_samples(Database& db, int64_t instance_id,
                                                      const TimelineWindow& w);

// One kvmon sample of the cgroup a store's process runs in.
struct CgroupMemorySample {
  int64_t ts_us = 0;
  std::optional<double> memory_bytes;
  std::optional<double> limit_bytes;  // memory.max; nullopt: unknown, or no limit ("max")
};
// The cgroup samples of process instance `instance_id` within `w`, by time.
std::vector<CgroupMemorySample> store_cgroup_memory(Database& db, int64_t instance_id,
                                                    const TimelineWindow& w);

// The store's own figure of its memory: Redis's used_memory, memcached's bytes.
struct StoreOwnMemory {
  std::string stat;                                              // "used_memory" or "bytes"
  std::vector<std::pair<int64_t, std::optional<double>>> bytes;  // (ts_us, bytes), by time
};
// Of target `target_id` (of `protocol`: "redis" or "memcached") within `w`.
StoreOwnMemory store_own_memory(Database& db, int64_t target_id, const std::string& protocol,
                                const TimelineWindow& w);

// The load average (1 min) of one host kvmon watched for the run.
struct HostLoad {
  std::string host;
  std::vector<std::pair<int64_t, std::optional<double>>> load1;  // (ts_us, load1), by time
};
// One per monitor session of the run (in session order), its samples within `w`.
std::vector<HostLoad> host_load(Database& db, int64_t run_id, const TimelineWindow& w);

}  // namespace kv::drive
