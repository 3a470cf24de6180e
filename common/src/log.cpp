#include "kvbench/log.hpp"

#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>

#include "kvbench/clock.hpp"
#include "kvbench/usage_error.hpp"

namespace kv {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::info)};
std::string g_program = "kvbench";  // set once at startup, before threads
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warn:
      return "warning";
    case LogLevel::error:
      return "error";
    case LogLevel::off:
      break;
  }
  return "";
}
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }
void set_log_program(std::string_view name) { g_program = std::string(name); }

LogLevel parse_log_level(std::string_view name) {
  if (name == "debug") return LogLevel::debug;
  if (name == "info") return LogLevel::info;
  if (name == "warn" || name == "warning") return LogLevel::warn;
  if (name == "error") return LogLevel::error;
  if (name == "off") return LogLevel::off;
  throw UsageError("unknown log level '" + std::string(name) +
                   "' (expected debug, info, warn, error or off)");
}

LogLine::LogLine(LogLevel level)
    : level_(level), enabled_(static_cast<int>(level) >= g_level.load(std::memory_order_relaxed)) {}

LogLine::~LogLine() {
  if (!enabled_) return;
  std::string line = g_program + " " + format_ts_us(now_ts_us()) + " " + level_name(level_) + ": " +
                     out_.str() + "\n";
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(STDERR_FILENO, p, left);
    if (n <= 0) break;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace kv
