// `kvdrive run --search --processes N`: the parent decides each step, the N processes run it.
// Each process runs its share of the load phase (started in all of them at once, as the phase
// barrier of a --processes run: run/phase_barrier.hpp), says "loaded", then runs each step the
// parent sends it (the whole step's rate: each process's threads take their share of it, as in any
// --processes rate run) and reports the step's client side on a pipe. The parent judges the
// step on the group: the processes' latency histograms of the step (latency_buckets, warm-up
// left out) added bucket by bucket, their requests and achieved rates summed, the worst
// process's slip and busiest thread (client-bound if any process was), and the store's signs
// over the span of their windows. Steps and the result are recorded on process 0's run.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "search/search_run.hpp"

namespace kv::drive {

// The signal a group's parent sends its processes when SIGINT/SIGTERM reached it alone: each
// stops as at a first Ctrl-C. Not SIGINT/SIGTERM themselves: after a terminal's Ctrl-C, which
// reaches every process, they would be a second signal and make the processes leave at once.
inline constexpr int kGroupStopSignal = SIGUSR1;

// A process's side (--search-follow IN,OUT): after the load, writes "loaded RUN TARGET" on
// out_fd, then for each "RATE TS" read from in_fd runs `run_step` from the wall time TS (every
// process starts the step at once) and writes its line (or "stopped" when the step did not
// complete, and returns false). Returns true at EOF on in_fd (the search is over).
bool follow_search(int in_fd, int out_fd, int64_t run_id, int64_t target_id,
                   const StepRunner& run_step);

// The two ends the parent keeps of one process's pipes.
struct FollowerPipes {
  int to_child = -1;    // rates
  int from_child = -1;  // the load's "ready T P", "loaded" and step lines
  pid_t pid = -1;       // the process, told to stop (kGroupStopSignal) when `stop` is set
};

// The parent's side: runs the search over `followers` (closing each pipe when it is over, so
// the processes end their runs) and records it on process 0's run. Returns false when a process
// did not get to or through a step (the search stops there, as without --processes). Once
// `stop` is set (SIGINT/SIGTERM, maybe to the parent alone) it sends no more rates and tells
// every process to stop as at a Ctrl-C: the step under way ends interrupted, the steps judged
// so far stay recorded, and false is returned.
bool lead_search(const SearchOptions& s, const std::string& db_path, const std::string& target_uri,
                 std::vector<FollowerPipes> followers, const std::atomic<bool>& stop);

}  // namespace kv::drive
