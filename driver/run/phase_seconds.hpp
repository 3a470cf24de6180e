// What kvdrive does with each second of a phase, on the phase runner's sink thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "kvbench/sqlite.hpp"
#include "kvmon_link/monitors.hpp"
#include "results/results_writer.hpp"
#include "run/progress.hpp"
#include "stats/hdr_log.hpp"
#include "stats/second_report.hpp"
#include "store/store_stats.hpp"
#include "workload/phase_plan.hpp"

namespace kv::drive {

// The sink of one phase's seconds (run_phase's on_second). For each second, in order:
//  1. writes the second's rows (and with --hdr-log, one interval per op it sends: tag OP,
//     the lat_* timing; in rate mode also OP-sent, from the actual send);
//  2. writes the store's own counters polled since the last second;
//  3. flushes the kvmon links' samples into the file;
//  4. finds the store's memory as kvmon sees it (the links' figures, else a kvmon on this host
//     writing the same file);
//  5. a second whose p99 was mostly kvdrive's own time (is_client_stall) gets a `client_stall`
//     event (and, the first in the phase, a warning); once per phase, when a worker thread used
//     more than 90 % of a core, warns and writes a `client_bound` event;
//  6. redraws the progress line.
// The phase must have begun (began()) before the first second.
class PhaseSeconds {
 public:
  struct Where {
    int64_t run_id, target_id;
    std::string label;        // "<target>[ [step]] <phase kind>"
    StoreStatsPoller* stats;  // the store's own counters, polled on their own connection
    Monitors* monitors;       // kvmon links (--monitor)
    Database* db;
    HdrLogWriter* hdr_log;  // --hdr-log: the target's interval log, or nullptr
  };
  PhaseSeconds(Where at, const PhasePlan& plan, ResultsWriter& writer, ProgressLine& progress);

  // The phase's row exists: its id and its start.
  void began(int64_t phase_id, int64_t started_ts_us);
  void operator()(const SecondReport& sec);

 private:
  void note_client_stall(const SecondReport& sec);

  Where at_;
  const PhasePlan& plan_;
  ResultsWriter& writer_;
  ProgressLine& progress_;
  int64_t phase_id_ = 0;
  int64_t started_ = 0;
  uint64_t done_ = 0;
  bool warned_cpu_ = false;
  bool warned_stall_ = false;
  std::set<std::string> said_notes_;  // the workers' notes already recorded as events
};

}  // namespace kv::drive
