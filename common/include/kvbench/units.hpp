// Parsing of the numbers people type: sizes ("100", "20KB", "1.5M"), counts ("5M", "100k") and
// durations ("500ms", "2m"). Each throws UsageError whose message names the input and
// says what was expected; nothing is silently clamped or rounded to zero.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kv {

// Bytes. Suffixes are binary and case-insensitive: K, KB, KiB = 1024; M, MB, MiB = 1024^2;
// G, GB, GiB = 1024^3; B or none = bytes. Fractions are allowed ("1.5M") if the result is whole.
uint64_t parse_size(std::string_view text);
// Counts. Suffixes are decimal: k/K = 1e3, m/M = 1e6, g/G/b/B = 1e9. "5M" = 5,000,000.
uint64_t parse_count(std::string_view text);
// The longest duration parse_duration_us accepts: 87,600 h (10 years). A phase, warm-up,
// timeout or TTL beyond it is a typo; as nanoseconds added to a clock reading it stays far
// from int64's limit (292 years).
inline constexpr int64_t kMaxDurationUs = 87'600LL * 3'600'000'000LL;
// Durations, as microseconds. Suffixes: us, ms, s, m, h; a bare number means seconds. At most
// kMaxDurationUs.
int64_t parse_duration_us(std::string_view text);
// A plain whole number in [lo, hi] (no suffix, no sign other than '-', no fraction), for ids,
// indexes and limits; the message names `name` ("--run") and the text as typed.
int64_t parse_whole_number(std::string_view name, std::string_view text, int64_t lo, int64_t hi);

// "20 KiB", "1.5 MiB", "100 B": for reports.
std::string format_size(uint64_t bytes);

// "12,345" (rounded, thousands separated) and "1.23" (`decimals` places); "-" for NaN (a
// figure that is not known).
std::string fmt_int(double v);
std::string fmt_fixed(double v, int decimals);
// "500 ms", "2 s", "1 h": the inverse of parse_duration_us for round values.
std::string format_duration_us(int64_t us);

}  // namespace kv
