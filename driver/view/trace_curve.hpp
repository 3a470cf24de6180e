// A replay's trace sized (trace_curves) beside what the stores showed: the LRU miss-ratio curve
// kept with the run, and each store's measured miss ratio of the trace's gets. Empty for a run
// that replayed no trace, or a file from before migration 021 opened read-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

struct TraceCurvePoint {
  double fraction = 0;  // of the trace's working set
  int64_t objects = 0, bytes = 0;
  double objects_miss_ratio = 0, bytes_miss_ratio = 0;
};
struct TraceCurveView {
  std::string trace;                    // the --trace file
  std::vector<TraceCurvePoint> points;  // by fraction
  struct Measured {
    std::string store;
    int target_ordinal = 0;
    double miss_ratio = 0;  // the gets of its trace phases, warm-up left out
  };
  std::vector<Measured> measured;  // stores whose trace phase answered a get
};
std::vector<TraceCurveView> load_trace_curves(Database& db, int64_t run_id);

}  // namespace kv::drive
