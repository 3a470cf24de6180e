// A cache trace's LRU miss-ratio curve at fractions of its working set (run/trace_mrc makes it,
// `kvdrive mrc` prints it, a replay's run keeps it in the results file: trace_curves).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kv::drive {

struct TraceCurve {
  uint64_t requests = 0, reads = 0;
  size_t keys_followed = 0;
  double sampling_rate = 1;
  double keys = 0;   // distinct keys (estimated: followed / rate)
  double bytes = 0;  // their largest sizes added up (estimated likewise): the working set
  struct Row {
    double fraction;  // of the working set
    uint64_t objects;
    double objects_miss_ratio;
    uint64_t bytes;
    double bytes_miss_ratio;
  };
  std::vector<Row> rows;
};

// The fractions of the working set a curve is given at: 1 % to 100 %.
inline const std::vector<double>& curve_fractions() {
  static const std::vector<double> f = {0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4,
                                        0.5,  0.6,  0.7,  0.8, 0.9, 1.0};
  return f;
}

}  // namespace kv::drive
