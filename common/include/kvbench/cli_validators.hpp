// CLI11 validators shared by kvdrive's and kvmon's command lines: each runs one of kvbench's own
// parsers, so a bad value is refused with that parser's message (CLI11 puts the option's name
// in front). CLI11 is a heavy header: include this only from the .cpp files that build a
// CLI::App (driver/cli/, monitor/options.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>

#include "kvbench/log.hpp"
#include "kvbench/units.hpp"

namespace kv::cli {

// Refuses an empty value ("--db ''").
inline CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "must not be empty" : ""; }, "");
}

// Accepts what `parse(s)` accepts; its exception's message is the error. `what` is CLI11's
// description of the validator (shown after the type in --help; may be empty).
template <typename Parse>
CLI::Validator parsed_by(Parse parse, const char* what = "") {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        try {
          parse(s);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      what);
}

// A value `parse` accepts, from `min` to `max`; out of range says "'TEXT': must be RANGE_TEXT".
template <typename Parse, typename T>
CLI::Validator parsed_between(Parse parse, T min, T max, const std::string& range_text) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        try {
          T v = parse(s);
          if (v < min || v > max) return "'" + s + "': must be " + range_text;
          return "";
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "");
}

// A plain whole number in [lo, hi] (parse_whole_number's rules).
inline CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return parsed_by([lo, hi](const std::string& s) { parse_whole_number("value", s, lo, hi); });
}

// debug, info, warn, error or off.
inline CLI::Validator log_level() {
  return parsed_by([](const std::string& s) { parse_log_level(s); });
}

}  // namespace kv::cli
