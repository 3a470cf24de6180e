// PhasePlan: what one phase of a workload sends (how many requests, how long, at what rate),
// built from the workload spec. Read by engine/ (the phase runner, workers) and results/ (the
// phases row); apart from the phase runner so that neither has to include engine/.
#pragma once

#include <cstdint>

#include "workload/workload.hpp"

namespace kv::drive {

struct PhasePlan {
  PhaseKind kind = PhaseKind::load;
  uint64_t requests = 0;    // in all; 0 with a duration means "until the duration ends"
  int64_t duration_us = 0;  // 0: end by requests
  double rate = 0;          // requests/s over all workers; 0: closed loop
  int64_t warmup_us = 0;    // rounded up to whole seconds
  uint64_t max_errors = 0;  // errors + timeouts that fail the phase; 0: no limit
  // Fail the phase when requests kept failing and none was answered for this long (a store
  // that died for good); 0: never. A store that comes back sooner is reconnected and the phase
  // goes on.
  int64_t give_up_us = 0;
  // Open loop: latency from each request's intended send time, slip, queue and drops counted:
  // a --rate, or a trace replayed at its recorded timing.
  bool open_loop() const noexcept { return kind == PhaseKind::trace ? !trace_fast : rate > 0; }
  bool trace_fast = false;  // a trace phase: --trace-timing fast
  // A replay at recorded timing: the trace's mean rate (its requests over its time / --speed),
  // the phases row's rate (what the open loop was asked for); 0 otherwise.
  double trace_rate = 0;
};

// Builds the plan of phase `kind` from the workload (load: every key once; read/mixed:
// --requests, or --duration, or one request per key).
PhasePlan plan_phase(PhaseKind kind, const WorkloadSpec& w);

}  // namespace kv::drive
