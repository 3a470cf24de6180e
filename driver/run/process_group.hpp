// `kvdrive run --processes N`: the same run in N processes that share one run group.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "run/run.hpp"

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
// incomplete by the reopening of the file. Prints nothing but log lines. With --hdr-log the
// processes write none; the group's logs are written once they have all ended
// (write_group_hdr_logs). Once `stop` is set (SIGINT/SIGTERM, maybe to this process alone) the
// processes still running are sent kGroupStopSignal: each ends as at a Ctrl-C.
GroupRecord run_process_group(const RunOptions& opts, int argc, char** argv,
                              const std::atomic<bool>& stop);

// `--hdr-log PREFIX` with `--processes N`: one interval log per target, PREFIX.<N>.hlog as
// without --processes, for the whole group, from the results file: per wall second and op the
// sum of the group's processes' histograms of that second (second_latency_buckets, each bucket
// at its upper bound but never above the second's largest max, as one process's log), a
// "#[Phase …: phase_id A B …]" comment (one phase id per process) before each phase. So
// HdrHistogram's tools, which read one log per source, see the group's load as one client's.
// Throws std::runtime_error when a file cannot be created or written.
void write_group_hdr_logs(Database& db, const std::string& run_group, const std::string& prefix);

}  // namespace kv::drive
