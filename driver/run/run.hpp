// `kvdrive run`: benchmarks each target in turn with the same workload and records everything
// in the results file.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/client_options.hpp"
#include "engine/phase_runner.hpp"
#include "engine/run_status.hpp"
#include "kvbench/sqlite.hpp"
#include "store/target_uri.hpp"
#include "workload/scenario.hpp"
#include "workload/search_options.hpp"
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
  bool quiet = false;       // no summary (a group member: the parent prints it; read by cli/)
  uint64_t max_errors = 0;  // failed requests (errors + timeouts) that fail a phase; 0: no limit
  // Fail a phase when requests kept failing and none was answered for this long; 0: never.
  int64_t give_up_us = 30'000'000;
  SearchOptions search;  // --search: steps of the last phase at rising rates
  // --search in a process of a --processes group: the parent sends each step's rate on the
  // first descriptor and reads the step's report from the second (search/search_group.hpp).
  int search_follow_in = -1, search_follow_out = -1;
  // In a process of a --processes group (not a search): the parent's "go" for each phase is
  // read from the first descriptor, this process's "ready" written to the second
  // (run/phase_barrier.hpp).
  int phase_barrier_in = -1, phase_barrier_out = -1;
  // --hdr-log PREFIX: each target's seconds also as an HdrHistogram interval log,
  // PREFIX.<target ordinal>.hlog (hdr_log_path); empty: none.
  std::string hdr_log_prefix;
  // --segment I/N: this kvdrive runs segment I (1-based) of N of the run (each step's workload
  // carries its share: WorkloadSpec::worker_first / worker_total). 1/1: not split.
  int segment_index = 1, segment_count = 1;
  // --start-at: wall time (µs since the epoch) at which the first phase starts, after the
  // stores are connected; 0: at once.
  int64_t start_at_ts_us = 0;
  // --repeat N: this run is round `round` (1-based) of `rounds`, all of them in repeat_group;
  // the targets run in their order rotated by round - 1. Empty group: a run made once.
  std::string repeat_group;
  int round = 1, rounds = 1;
};

// --repeat: the order in which round `round` (1-based) runs `targets` targets: their positions
// rotated left by round - 1 (A B C, then B C A, then C A B ...).
std::vector<size_t> round_target_order(size_t targets, int round);

// The HdrHistogram interval log of target `ordinal` (0-based, targets.ordinal) for `prefix`.
inline std::string hdr_log_path(const std::string& prefix, int ordinal) {
  return prefix + "." + std::to_string(ordinal) + ".hlog";
}

// Checks everything about `opts` that needs no store: --db, the target URIs and memcached's
// limits, --monitor addresses and the token file. Returns the parsed targets. Throws
// UsageError naming the option and the value; writes nothing.
std::vector<TargetSpec> check_run_options(const RunOptions& opts);
// --io auto settled for this host: uring where io_uring_refusal() finds nothing against it and
// the step needs no epoll (--wire-start kernel), epoll otherwise. Before the run, once.
void resolve_io(std::vector<RunStep>& steps);

// What a run did; cli/ prints it (report/'s summary of run_id read from `db`).
struct RunRecord {
  int64_t run_id = 0;
  RunStatus status = RunStatus::completed;  // of the run: its first phase not completed
  std::string error;                        // why it failed or was interrupted
  Database db;  // the results file the run wrote, still open (its path may have been replaced)
};

// Runs the benchmark and records it; prints nothing but log lines. Bad target URIs throw
// UsageError before anything is written; an unreachable store throws
// std::runtime_error before anything is written. Once the run row exists, failures are recorded
// in it (status failed) and returned, not thrown.
RunRecord run_benchmark(const RunOptions& opts, const std::atomic<bool>& stop);

}  // namespace kv::drive
