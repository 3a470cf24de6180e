// The workload's options by name ("keys", "value-size", ...): one table shared by the command
// line, config files and scenario files, so each is parsed and checked in one place.
#pragma once

#include <string_view>
#include <vector>

#include "workload.hpp"

namespace kv::drive {

struct WorkloadOption {
  const char* name;  // as on the command line, without "--"
  const char* help;
  const char* default_text;
  bool flag;         // takes no value on the command line ("verify")
};

// Every workload option, in --help order.
const std::vector<WorkloadOption>& workload_options();
// Sets one option from its text. Throws std::invalid_argument naming the option and the value
// (or "unknown option" for a name not in workload_options()).
void set_workload_option(WorkloadSpec& w, std::string_view name, std::string_view value);
// Checks how the options combine (threads vs keys, rate vs pipelining, warm-up vs duration).
// Throws std::invalid_argument.
void check_workload(const WorkloadSpec& w);
// Shrinks (or grows) key counts, request counts and durations by `factor`, keeping at least
// one key per thread, one request and one second.
void scale_workload(WorkloadSpec& w, double factor);

}  // namespace kv::drive
