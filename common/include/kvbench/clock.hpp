// Clocks. Every stored time is ts_us: integer microseconds since the Unix epoch (UTC).
#pragma once

#include <cstdint>
#include <string>

namespace kv {

// Wall-clock time now, as ts_us.
int64_t now_ts_us();
// Monotonic time in microseconds (arbitrary origin): for intervals and deadlines.
int64_t steady_us();
// Monotonic time in nanoseconds (arbitrary origin): for request latencies.
int64_t steady_ns();
// Sleeps until the wall clock reads ts_us (at once if it does): to within 2 ms, then in 100 µs
// slices, so a start time shared by several processes is met within ~100 µs by each.
void sleep_until_ts_us(int64_t ts_us);
// "2026-11-30T20:30:00.123Z" (UTC, millisecond precision).
std::string format_ts_us(int64_t ts_us);

}  // namespace kv
