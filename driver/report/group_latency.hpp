// The latency of a run group (`kvdrive run --group LABEL` on several hosts, brought together by
// `kvdrive merge`, or `--processes N`) as ONE distribution per phase and op: the runs' per-second
// histograms (second_latency_buckets, warm-up seconds left out) added bucket by bucket, then the
// percentiles of the sum, clamped to the group's smallest and largest latency. Never a mean of
// the runs' percentiles, which is not the group's (shown beside it only to say so).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/percentiles.hpp"

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

// The rows of each of `groups`, as a text table (nothing for none).
void print_group_latency(Database& db, const std::vector<std::string>& groups,
                         const PercentileList& list, std::ostream& out);

}  // namespace kv::drive
