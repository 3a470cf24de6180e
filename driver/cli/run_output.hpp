// What `kvdrive run` prints once the engine is done: report/'s summary of the run or group.
#pragma once

#include <ostream>

#include "engine/process_group.hpp"
#include "engine/run.hpp"

namespace kv::drive {

// Prints the run's summary (nothing with opts.quiet; JSON with opts.json), a run that did not
// complete saying so first, and logs a failed run's error. Returns the run's exit code.
int print_run_record(RunRecord& rec, const RunOptions& opts, std::ostream& out);

// Prints the group's summary (JSON with opts.json) after one line per process that did not
// complete, and logs those lines. Returns the group's exit code.
int print_group_record(GroupRecord& rec, const RunOptions& opts, std::ostream& out);

}  // namespace kv::drive
