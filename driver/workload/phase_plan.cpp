#include "workload/phase_plan.hpp"

#include <algorithm>

namespace kv::drive {

PhasePlan plan_phase(PhaseKind kind, const WorkloadSpec& w) {
  PhasePlan p;
  p.kind = kind;
  p.rate = w.rate;
  p.warmup_us = w.warmup_us;
  if (kind == PhaseKind::trace) {
    // The trace's requests (scan_trace counted them), or the first --requests of them; the
    // replay ends with the trace or at --duration.
    p.rate = 0;
    p.trace_fast = w.trace.fast;
    p.duration_us = w.duration_us;
    p.requests = w.requests > 0 ? std::min(w.requests, w.trace.requests) : w.trace.requests;
    if (!w.trace.fast && w.trace.span_s > 0)
      p.trace_rate = static_cast<double>(w.trace.requests) * w.trace.speed /
                     static_cast<double>(w.trace.span_s);
  } else if (kind == PhaseKind::load) {
    // Every key once, and every counter key once more when a mixed phase incrs or decrs.
    p.requests = w.uses_counters() ? 2 * w.keys : w.keys;
  } else if (w.duration_us > 0) {
    p.duration_us = w.duration_us;
    p.requests = w.requests;  // 0: until the duration ends
  } else {
    p.requests = w.requests > 0 ? w.requests : w.keys;
  }
  return p;
}

}  // namespace kv::drive
