// Runs one phase of a workload against one target: starts one worker thread per client, and on
// the calling thread collects every worker's stats once per second and hands them to a sink.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "interval_stats.hpp"
#include "store_client.hpp"
#include "workload.hpp"

namespace kv::drive {

enum class PhaseStatus { completed, interrupted, failed };
const char* phase_status_name(PhaseStatus s);

struct PhasePlan {
  PhaseKind kind = PhaseKind::load;
  uint64_t requests = 0;    // in all; 0 with a duration means "until the duration ends"
  int64_t duration_us = 0;  // 0: end by requests
  double rate = 0;          // requests/s over all workers; 0: closed loop
  int64_t warmup_us = 0;    // rounded up to whole seconds
  uint64_t max_errors = 0;  // errors + timeouts that fail the phase; 0: no limit
};

// Builds the plan of phase `kind` from the workload (load: every key once; read/mixed:
// --requests, or --duration, or one request per key).
PhasePlan plan_phase(PhaseKind kind, const WorkloadSpec& w);

// What the collector hands over once per second (and once for the final partial second).
struct SecondReport {
  int64_t ts_us;        // start of the interval
  int64_t interval_us;
  bool warmup;          // inside the phase's warm-up: not part of its totals
  const IntervalStats& stats;
  double cpu_user_s;    // kvdrive's CPU time in the interval, all threads
  double cpu_system_s;
  double busiest_thread_cpu;  // the busiest worker thread's CPU, fraction of one core
};

struct PhaseResult {
  PhaseStatus status = PhaseStatus::completed;
  std::string error;      // why it failed
  int64_t started_ts_us = 0;
  int64_t ended_ts_us = 0;
  IntervalStats totals;   // the whole phase after warm-up
};

// Runs the phase with w.threads workers, each owning w.connections consecutive clients (which
// must be connected). Returns when every
// worker is done, the duration is over, `stop` became true (interrupted) or the error limit
// was passed (failed); every request completed is in exactly one SecondReport.
PhaseResult run_phase(const PhasePlan& plan, const WorkloadSpec& w,
                      std::vector<std::unique_ptr<StoreClient>>& clients, const ValueTable& values,
                      const std::atomic<bool>& stop,
                      const std::function<void(int64_t started_ts_us)>& on_start,
                      const std::function<void(const SecondReport&)>& on_second);

}  // namespace kv::drive
