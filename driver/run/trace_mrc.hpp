// `kvdrive mrc`: the LRU miss-ratio curve of a cache trace (workload/trace), by SHARDS
// (stats/miss_ratio_curve): two passes over the file, the first choosing which keys to follow,
// the second building the curve; the sizes asked as fractions of the trace's working set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "stats/trace_curve.hpp"

namespace kv::drive {

// The keys a replay's curve follows (kvdrive mrc's default --max-keys).
inline constexpr size_t kTraceCurveKeys = 8192;

// The curve of the trace at `path` at each of `fractions` (0 < f <= 1) of its working set, in
// objects and in bytes (key size + value size), following at most `max_keys` keys. Throws
// TraceError for a file or line that cannot be read.
TraceCurve trace_miss_ratio_curve(const std::string& path, size_t max_keys,
                                  const std::vector<double>& fractions);

}  // namespace kv::drive
