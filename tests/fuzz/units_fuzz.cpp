// libFuzzer target for the unit parsers (kvbench/units.hpp): sizes, counts and durations typed on
// the command line and in config / scenario files. Anything but std::invalid_argument escaping is
// a crash; whatever parses must re-parse to the same value from its plain decimal form, and a
// duration must survive format_duration_us -> parse_duration_us. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kvbench/units.hpp"

namespace {

void check_size(std::string_view text) {
  uint64_t n = 0;
  try {
    n = kv::parse_size(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (kv::parse_size(std::to_string(n)) != n) std::abort();
  if (kv::parse_size(std::to_string(n) + " B") != n) std::abort();
  (void)kv::format_size(n);
}

void check_count(std::string_view text) {
  uint64_t n = 0;
  try {
    n = kv::parse_count(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (kv::parse_count(std::to_string(n)) != n) std::abort();
}

void check_duration(std::string_view text) {
  int64_t us = 0;
  try {
    us = kv::parse_duration_us(text);
  } catch (const std::invalid_argument&) {
    return;
  }
  if (us < 0) std::abort();
  if (kv::parse_duration_us(std::to_string(us) + "us") != us) std::abort();
  if (kv::parse_duration_us(kv::format_duration_us(us)) != us) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check_size(text);
  check_count(text);
  check_duration(text);
  return 0;
}
