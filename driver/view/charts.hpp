// What the HTML report's charts beside the timeline draw, read back from the results file: a
// scenario's figures per step, the latency histograms behind the percentile curves, each second
// of several runs to overlay, and each second of one run's stores side by side. Plain numbers
// and names; NULL stays std::nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// One scenario step of one store (step_summary): its answered requests and value MiB per wall
// second of the step's sets (writes) and gets (reads); nullopt where the step had none.
struct StepThroughput {
  std::string step;
  int64_t target_id = 0;
  std::string store;  // the target's URI
  int target_ordinal = 0;
  std::optional<double> write_req_per_s, read_req_per_s;
  std::optional<double> write_mib_per_s, read_mib_per_s;
};
// The run's rows (a step of a store each) in the order of their first phases.
std::vector<StepThroughput> step_throughput(Database& db, int64_t run_id);

// One bucket of the phases' latency histograms (latency_buckets) of one store, op and step added
// together: latency from the actual send, in rate mode from the intended send time.
struct LatencyBucket {
  std::string uri;
  int target_ordinal = 0;
  std::string op;       // "set" or "get"
  std::string step;     // "" outside scenarios
  double upper_us = 0;  // the bucket's upper bound, µs
  int64_t count = 0;    // requests in it
};
// The run's buckets by target ordinal, op (set before get), then the first phase holding the
// bucket (so a step's buckets follow the steps' order).
std::vector<LatencyBucket> latency_buckets(Database& db, int64_t run_id);

// One driver second of one op, on its run's own clock, to overlay runs.
struct OverlaySecond {
  int target_ordinal = 0;
  std::string uri;
  std::string op;                        // "set" or "get"
  int64_t offset_us = 0;                 // its start after the run's start, µs
  int64_t interval_us = 0;               // its length, µs (a phase's last one may be short)
  int64_t ok = 0;                        // requests answered (ok, hit or miss)
  std::optional<double> p50_us, p99_us;  // the stored columns, µs
  int64_t phase_max_interval_us = 0;     // the longest second of its phase (all ops), µs
};
// The run's seconds (warm-up included) by target ordinal, op (set before get), time.
std::vector<OverlaySecond> overlay_seconds(Database& db, int64_t run_id);

// How many targets (stores) the run has.
int64_t target_count(Database& db, int64_t run_id);

// One full driver second (0.5 s or more) of one op outside the warm-up, on its phase's clock.
struct SideBySideSecond {
  std::string phase;  // its name: the same in each store's run of it
  std::string uri;
  int target_ordinal = 0;
  std::string op;                // "set" or "get"
  double seconds = 0;            // its start after its phase's start, s
  double ok_per_s = 0;           // requests answered (ops - errors - timeouts) per second
  std::optional<double> p99_ms;  // the stored p99, ms
};
// The run's seconds by phase name (the name's first place among a target's phases), target
// ordinal, op (set before get), time.
std::vector<SideBySideSecond> side_by_side_seconds(Database& db, int64_t run_id);

}  // namespace kv::drive
