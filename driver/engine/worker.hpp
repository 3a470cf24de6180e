// One worker thread's request loop (the event-loop engine, loop/event_worker.hpp): every
// connection is an independent user with its own queue of in-flight requests (depth =
// --pipeline) and, in rate mode, its own open-loop schedule. Nothing is allocated per request.
// Timing, in every mode: a request's latency starts when it is queued for sending (rate mode:
// at its intended send time); rate mode also records its slip (queued - intended) and the time
// spent spinning for send times (StatsSlot::add_spin). With a duration the worker returns at
// the phase's end, not before (rate mode: even when its next send time lies beyond the end).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>

#include "engine/client_options.hpp"
#include "engine/loop_clock.hpp"
#include "stats/interval_stats.hpp"
#include "workload/phase_plan.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

struct WorkerContext {
  const PhasePlan& plan;
  const WorkloadSpec& workload;
  const ValueTable& values;
  std::span<const std::unique_ptr<EventClient>> clients;  // this worker's EventClients
  StatsSlot& slot;
  uint64_t index;                  // this worker, 0..count-1
  uint64_t count;                  // workers in the phase
  int64_t start_ns;                // steady_ns() when the phase started
  const std::atomic<bool>& stop;   // Ctrl-C
  const std::atomic<bool>& abort;  // the phase is over (duration, error limit)
  LoopClock& clock;                // every time the worker reads, every sleep of its loop
};

}  // namespace kv::drive
