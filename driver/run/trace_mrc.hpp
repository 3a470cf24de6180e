// `kvdrive mrc`: the LRU miss-ratio curve of a cache trace (workload/trace), by SHARDS
// (stats/miss_ratio_curve): two passes over the file, the first choosing which keys to follow,
// the second building the curve; the sizes asked as fractions of the trace's working set.
#pragma once

#include <cstdint>
#include <string>
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

// The curve of the trace at `path` at each of `fractions` (0 < f <= 1) of its working set, in
// objects and in bytes (key size + value size), following at most `max_keys` keys. Throws
// TraceError for a file or line that cannot be read.
TraceCurve trace_miss_ratio_curve(const std::string& path, size_t max_keys,
                                  const std::vector<double>& fractions);

}  // namespace kv::drive
