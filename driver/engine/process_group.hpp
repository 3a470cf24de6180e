// `kvdrive run --processes N`: the same run in N processes that share one run group.
#pragma once

#include <string>
#include <vector>

#include "engine/run.hpp"
#include "kvbench/sqlite.hpp"

namespace kv::drive {

// What a process group did; cli/ prints it (report/'s group summary).
struct GroupRecord {
  int exit_code = kExitOk;            // the worst of the processes' (1 beats 130 and others)
  int processes = 0;                  // how many were started
  std::vector<std::string> failures;  // one line per process that did not complete
  Database db;                        // the results file, reopened after every process ended
};

// Runs `argv` (this kvdrive's own command line) as opts.process_count processes sharing
// opts.run_group in the results file and waits for all. Bad options and unreachable stores
// throw before the file is created (as in run_benchmark); a killed process's run is marked
// incomplete by the reopening of the file. Prints nothing but log lines.
GroupRecord run_process_group(const RunOptions& opts, int argc, char** argv);

}  // namespace kv::drive
