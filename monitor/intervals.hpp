// The sampling interval's bounds: kvmon's --interval (and the intervals derived from it), and
// the interval a link client may stream at. Its own header so that the server need
// not include the daemon loop's (monitor.hpp includes server.hpp).
#pragma once

#include <cstdint>

namespace kv::mon {

inline constexpr int64_t kMinIntervalUs = 10'000;         // 10 ms
inline constexpr int64_t kMaxIntervalUs = 3'600'000'000;  // 1 h

}  // namespace kv::mon
