#include "engine/worker.hpp"

#include "engine/loop/event_worker.hpp"

namespace kv::drive {

// One engine since #16: every worker is an event loop over its connections.
void run_worker(const WorkerContext& ctx) { run_event_worker(ctx); }

}  // namespace kv::drive
