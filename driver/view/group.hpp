// A run group (`kvdrive run --group LABEL` on several hosts, brought together by `kvdrive merge`,
// or `--processes N`) read back: its members, and its latency as ONE distribution per phase and
// op: the runs' per-second
// histograms (second_latency_buckets, warm-up seconds left out) added bucket by bucket, then the
// percentiles of the sum, clamped to the group's smallest and largest latency. Never a mean of
// the runs' percentiles, which is not the group's (shown beside it only to say so).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {

// One phase of the group: the phases of its runs at the same place (target ordinal, phase
// ordinal), one op.
struct GroupPhaseLatency {
  std::string group;
  int64_t target = 0;  // ordinal in each run
  std::string store;   // the target's URI (the first one, if the runs' differ)
  int64_t phase = 0;   // ordinal within the target
  std::string phase_name;
  std::string op;
  int64_t runs = 0;                                // runs with latency rows for it
  int64_t requests = 0;                            // counted in the added histograms
  std::vector<std::optional<double>> percentiles;  // µs, as `list`
  std::optional<double> max_us;
  std::optional<double> mean_of_runs_p99_us;  // each run's own p99, averaged: NOT the group's
};

// Rows of `group` in (target, phase, op) order; empty for a group without histogram rows.
std::vector<GroupPhaseLatency> group_latency(Database& db, const std::string& group,
                                             const PercentileList& list);

// One run of the group.
struct GroupMember {
  int64_t run_id = 0;
  std::string host;     // runs.client_host
  std::string segment;  // "I/N" (run_metadata segment, else process_index + 1 / process_count)
  std::string status;
  std::optional<int64_t> start_offset_us;  // its first phase's start after the group's earliest
  std::optional<int64_t> end_offset_us;    // its last phase's end after the group's earliest end
  std::optional<int64_t> busy_us;          // first phase start to last phase end
  int64_t requests = 0;                    // completed, warm-up left out
  int64_t failed = 0;
  double share = 0;  // of the group's requests
  int64_t threads = 0;
  int64_t client_bound_seconds = 0;  // its client_bound events
  std::optional<double> p99_us;      // its own (the group's is in group_latency)
  std::vector<std::string> flags;    // "started 2.1 s late", "lagged: ...", "client-bound ..."
};

// A run starting (or, beyond its late start, ending) this much after the group's earliest one is
// flagged: hosts started together by --start-at are within the clocks' error of each other.
inline constexpr int64_t kGroupLateUs = 1'000'000;

// The runs of `group` in segment order; empty when no run has that label.
std::vector<GroupMember> group_members(Database& db, const std::string& group);

}  // namespace kv::drive
