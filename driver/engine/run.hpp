// `kvdrive run`: benchmarks each target in turn with the same workload and records everything
// in the results file.
#pragma once

#include <atomic>
#include <ostream>
#include <string>
#include <vector>

#include "store/store_client.hpp"
#include "workload/scenario.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

struct RunOptions {
  std::string db_path;
  std::vector<std::string> targets;  // URIs
  std::string name;
  std::vector<RunStep> steps;  // one, unnamed, outside scenarios
  std::string scenario;        // --scenario, or empty
  double scale = 1.0;
  ClientOptions client;
  std::string command_line;
  bool progress = false;              // a live line on stderr (only when it is a terminal)
  bool json = false;                  // print the summary as JSON instead of tables
  std::vector<std::string> monitors;  // kvmon HOST:PORT to pull samples from
  std::string monitor_token_file;
  bool monitor_optional = false;  // an unreachable kvmon is a warning, not an error
  std::string run_group;          // set in each process of a --processes group
  int process_index = 0, process_count = 1;
  bool quiet = false;       // no summary (a group member: the parent prints it)
  uint64_t max_errors = 0;  // failed requests (errors + timeouts) that fail a phase; 0: no limit
  // Fail a phase when requests kept failing and none was answered for this long; 0: never.
  int64_t give_up_us = 30'000'000;
};

// Exit codes, as documented in --help.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;  // a store unreachable, or the run failed
constexpr int kExitUsage = 2;   // bad arguments: nothing was written
constexpr int kExitInterrupted = 130;

// Checks everything about `opts` that needs no store: --db, the target URIs and memcached's
// limits, --monitor addresses and the token file. Returns the parsed targets. Throws
// std::invalid_argument naming the option and the value; writes nothing.
std::vector<TargetSpec> check_run_options(const RunOptions& opts);

// Runs the benchmark; prints the summary to `out`. Returns an exit code. Bad target URIs throw
// std::invalid_argument before anything is written; an unreachable store throws
// std::runtime_error before anything is written. Once the run row exists, failures are recorded
// in it (status failed) before they are reported.
int run_benchmark(const RunOptions& opts, const std::atomic<bool>& stop, std::ostream& out);

// For a signal handler (async-signal-safe): the second Ctrl-C. While run_benchmark is recording
// a run, its watcher thread marks the run and its running phases `interrupted` on a connection
// of its own and exits kExitInterrupted at once; otherwise the process exits now.
void leave_now_on_signal() noexcept;

// --processes N: runs `argv` (this kvdrive's own command line) as N processes that share one
// run group in the results file, waits for all, and prints the group's summary. Returns the
// worst exit code of the processes.
int run_process_group(const RunOptions& opts, int argc, char** argv, std::ostream& out);

}  // namespace kv::drive
