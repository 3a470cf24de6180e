// A run's own row read back for the head of its report section: its name, status, times, host,
// command line, scenario and error. NULL stays std::nullopt.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

struct RunHeader {
  std::optional<std::string> name;  // --name
  std::string status;               // running, completed, interrupted, failed, incomplete
  int64_t started_us = 0;           // wall clock, µs
  std::optional<int64_t> ended_us;  // nullopt while running (or cut off)
  std::string client_host;
  std::string command_line;
  std::optional<std::string> scenario;  // --scenario NAME
  std::optional<double> scale;          // its --scale factor
  std::optional<std::string> error;     // why it failed or was interrupted
  // --repeat N: the rounds' shared group, this run's round (1-based) and N; nullopt alone.
  std::optional<std::string> repeat_group;
  int round = 0, rounds = 0;
};
// Run `run_id`'s header; all defaults for a run not in the file.
RunHeader run_header(Database& db, int64_t run_id);

}  // namespace kv::drive
