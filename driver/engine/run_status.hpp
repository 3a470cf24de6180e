// How a phase or a run ended: one enum, one table giving each its name in the results file
// (runs.status, phases.status; schema/001_initial.sql's CHECK also allows 'running' and
// 'incomplete', which only the writer's defaults and recovery set) and kvdrive's exit code for
// a run that ended so (kvbench/exit_codes.hpp).
#pragma once

#include <array>
#include <string>

#include "kvbench/exit_codes.hpp"

namespace kv::drive {

enum class RunStatus { completed, interrupted, failed };

struct RunStatusInfo {
  RunStatus status;
  const char* name;  // as written in the results file and printed
  int exit_code;     // of a run that ended so
};

// Every RunStatus once, in enum order.
inline constexpr std::array<RunStatusInfo, 3> kRunStatuses{{
    {RunStatus::completed, "completed", kExitOk},
    {RunStatus::interrupted, "interrupted", kExitInterrupted},
    {RunStatus::failed, "failed", kExitFailed},
}};

constexpr const RunStatusInfo& run_status_info(RunStatus s) {
  return kRunStatuses.at(static_cast<size_t>(s));
}

// "completed", "interrupted" or "failed".
constexpr const char* run_status_name(RunStatus s) { return run_status_info(s).name; }

// kExitOk, kExitInterrupted or kExitFailed.
constexpr int run_status_exit_code(RunStatus s) { return run_status_info(s).exit_code; }

// How a phase or a run ended, and why when it did not complete ("interrupted by signal", or the
// failed phase's label and reason).
struct RunEnd {
  RunStatus status = RunStatus::completed;
  std::string error;
  bool completed() const { return status == RunStatus::completed; }
};

}  // namespace kv::drive
