// kvmon's command line, parsed into a MonitorConfig. CLI11 stays inside options.cpp.
#pragma once

#include <optional>

#include "monitor.hpp"

namespace kv::mon {

struct Options {
  MonitorConfig config;
  std::string log_level = "info";
  std::vector<std::string> warnings;  // to log once the whole command line is accepted
};

// Parses argv. Returns nullopt after printing help or the version (exit 0). Throws
// UsageError with one clear line for any bad argument (exit 2).
std::optional<Options> parse_options(int argc, const char* const* argv);

}  // namespace kv::mon
