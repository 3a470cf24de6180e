#include "kvbench/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "kvbench/usage_error.hpp"

namespace kv {
namespace {

struct Split {
  double number;
  std::string suffix;  // lower-cased
};

[[noreturn]] void fail(std::string_view what, std::string_view text, std::string_view expected) {
  throw UsageError("invalid " + std::string(what) + " '" + std::string(text) + "': expected " +
                   std::string(expected));
}

// Splits "1.5 MB" into 1.5 and "mb". Rejects empty, signs, NaN, and junk.
Split split(std::string_view what, std::string_view text, std::string_view expected) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
    ++i;
  if (i == 0) fail(what, text, expected);
  double number = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, number);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(number))
    fail(what, text, expected);
  size_t j = i;
  while (j < text.size() && text[j] == ' ') ++j;
  std::string suffix;
  for (; j < text.size(); ++j) {
    if (!std::isalpha(static_cast<unsigned char>(text[j]))) fail(what, text, expected);
    suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(text[j])));
  }
  return {number, suffix};
}

uint64_t to_whole(std::string_view what, std::string_view text, double value) {
  if (value >= 1.8e19)
    throw UsageError(std::string(what) + " '" + std::string(text) + "' is too large");
  double rounded = std::round(value);
  if (std::fabs(value - rounded) > 1e-6 * std::max(1.0, value))
    throw UsageError(std::string(what) + " '" + std::string(text) + "' is not a whole number");
  return static_cast<uint64_t>(rounded);
}

}  // namespace

uint64_t parse_size(std::string_view text) {
  constexpr std::string_view expected = "a size such as 100, 20KB, 1.5M or 2GiB";
  Split s = split("size", text, expected);
  double mult = 0;
  if (s.suffix.empty() || s.suffix == "b")
    mult = 1;
  else if (s.suffix == "k" || s.suffix == "kb" || s.suffix == "kib")
    mult = 1024.0;
  else if (s.suffix == "m" || s.suffix == "mb" || s.suffix == "mib")
    mult = 1024.0 * 1024;
  else if (s.suffix == "g" || s.suffix == "gb" || s.suffix == "gib")
    mult = 1024.0 * 1024 * 1024;
  else
    fail("size", text, expected);
  return to_whole("size", text, s.number * mult);
}

uint64_t parse_count(std::string_view text) {
  constexpr std::string_view expected = "a count such as 1000, 100k or 5M";
  Split s = split("count", text, expected);
  double mult = 0;
  if (s.suffix.empty())
    mult = 1;
  else if (s.suffix == "k")
    mult = 1e3;
  else if (s.suffix == "m")
    mult = 1e6;
  else if (s.suffix == "g" || s.suffix == "b")
    mult = 1e9;
  else
    fail("count", text, expected);
  return to_whole("count", text, s.number * mult);
}

int64_t parse_duration_us(std::string_view text) {
  constexpr std::string_view expected = "a duration such as 500ms, 10s, 2m or 1h";
  Split s = split("duration", text, expected);
  double mult = 0;
  if (s.suffix.empty() || s.suffix == "s")
    mult = 1e6;
  else if (s.suffix == "us")
    mult = 1;
  else if (s.suffix == "ms")
    mult = 1e3;
  else if (s.suffix == "m" || s.suffix == "min")
    mult = 60e6;
  else if (s.suffix == "h")
    mult = 3600e6;
  else
    fail("duration", text, expected);
  // Far below int64's 292,000 years of microseconds on purpose: callers turn durations into
  // nanoseconds and add them to clock readings (2562048h overflowed there).
  double us = s.number * mult;
  if (us > static_cast<double>(kMaxDurationUs))
    throw UsageError("duration '" + std::string(text) + "' is too large (at most " +
                     format_duration_us(kMaxDurationUs) + ")");
  return static_cast<int64_t>(std::llround(us));
}

int64_t parse_whole_number(std::string_view name, std::string_view text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < lo || v > hi)
    throw UsageError("invalid " + std::string(name) + " '" + std::string(text) +
                     "': expected a whole number from " + std::to_string(lo) +
                     (hi == INT64_MAX ? " up" : " to " + std::to_string(hi)));
  return v;
}

std::string format_size(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0 || v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", v, units[u]);
  return buf;
}

std::string format_duration_us(int64_t us) {
  struct Unit {
    int64_t us;
    const char* name;
  };
  const Unit units[] = {{3'600'000'000, "h"}, {60'000'000, "min"}, {1'000'000, "s"}, {1000, "ms"}};
  for (const auto& u : units)
    if (us >= u.us && us % u.us == 0) return std::to_string(us / u.us) + " " + u.name;
  return std::to_string(us) + " us";
}

std::string fmt_int(double v) {
  if (std::isnan(v)) return "-";
  auto n = static_cast<long long>(std::llround(v));
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string fmt_fixed(double v, int decimals) {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace kv
