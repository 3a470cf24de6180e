#include "workload/phase_plan.hpp"

namespace kv::drive {

PhasePlan plan_phase(PhaseKind kind, const WorkloadSpec& w) {
  PhasePlan p;
  p.kind = kind;
  p.rate = w.rate;
  p.warmup_us = w.warmup_us;
  if (kind == PhaseKind::load) {
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
