// Logging to stderr with levels. One line per message, written with a single write(2) so lines
// from several threads never interleave. Thread-safe.
#pragma once

#include <sstream>
#include <string_view>

namespace kv {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3, off = 4 };

// Sets the lowest level that is printed (default: info). Call before starting threads.
void set_log_level(LogLevel level);
LogLevel log_level();
// Parses "debug", "info", "warn", "error", "off"; throws UsageError otherwise.
LogLevel parse_log_level(std::string_view name);
// Sets the program name printed at the start of each line (default: "kvbench").
void set_log_program(std::string_view name);

// Usage: kv::LogLine(kv::LogLevel::warn) << "pid " << pid << " vanished";
class LogLine {
 public:
  explicit LogLine(LogLevel level);
  ~LogLine();
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;

  template <typename T>
  LogLine& operator<<(const T& v) {
    if (enabled_) out_ << v;
    return *this;
  }

 private:
  LogLevel level_;
  bool enabled_;
  std::ostringstream out_;
};

inline LogLine log_debug() { return LogLine(LogLevel::debug); }
inline LogLine log_info() { return LogLine(LogLevel::info); }
inline LogLine log_warn() { return LogLine(LogLevel::warn); }
inline LogLine log_error() { return LogLine(LogLevel::error); }

}  // namespace kv
