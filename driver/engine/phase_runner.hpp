// Runs one phase of a workload against one target: starts one worker thread per client, and on
// the calling thread collects every worker's stats once per second and hands them to a sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "engine/client_options.hpp"
#include "engine/loop_clock.hpp"
#include "engine/run_status.hpp"
#include "stats/interval_stats.hpp"
#include "stats/second_report.hpp"
#include "workload/phase_plan.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

struct PhaseResult {
  RunStatus status = RunStatus::completed;
  std::string error;  // why it failed
  int64_t started_ts_us = 0;
  int64_t ended_ts_us = 0;
  IntervalStats totals;  // the whole phase after warm-up
  uint64_t ops = 0;      // every request completed, warm-up included
  uint64_t failed = 0;   // of which errors + timeouts
};

// Runs the phase with w.threads workers, each owning w.connections consecutive clients (which
// must be connected). Returns when every worker is done, the duration is over (measured on the
// monotonic clock: a stepped wall clock moves the rows, not the end), `stop` became
// true (interrupted), or the phase failed: the error limit was passed, no request was answered
// for plan.give_up_us, or every request failed. Every request completed is in exactly one
// SecondReport. Rows are cut on whole seconds of the common time base (wall clock, re-anchored
// every second), from the phase's start to its end, one per second whatever completed in it;
// on_second is called on a thread of its own in row order, so a slow sink (a locked results
// file) delays the writing, never the cutting. If on_second throws, the phase is stopped and
// the exception rethrown here. `clock` is every clock the phase reads and every wait (the
// rows' times, SecondCutter; the workers' loops; the collector's waits): a test's simulated
// clock runs the phase in virtual time, and may step or slew its wall clock.
PhaseResult run_phase(const PhasePlan& plan, const WorkloadSpec& w,
                      std::vector<std::unique_ptr<EventClient>>& clients, const ValueTable& values,
                      const std::atomic<bool>& stop,
                      const std::function<void(int64_t started_ts_us)>& on_start,
                      const std::function<void(const SecondReport&)>& on_second,
                      LoopClock& clock = system_loop_clock());

// A worker's share of an interval on a CPU or runnable waiting for one (SecondReport's
// busiest_thread_wanted): its schedstat run + wait growth less its spinning, over the interval,
// at most 1. The kernel adds a wait to the run delay when the wait ends, so the interval in
// which a long wait ended grows by more than its length: that excess was earlier intervals'.
double thread_wanted_fraction(uint64_t wanted_delta_ns, uint64_t spin_ns, double interval_s);

}  // namespace kv::drive
