// The pieces of kvdrive's progress line for one second of a phase (the line itself is
// progress.hpp's ProgressLine).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "run/progress.hpp"
#include "stats/second_report.hpp"
#include "store/store_stats.hpp"

namespace kv::drive {

// The phase's label (with "(warm-up)"), elapsed/planned seconds, requests done/planned, req/s
// (answered requests per wall second of `sec`), the worst p99 of the ops in `sec`, errors.
// `planned` 0: no request count; `planned_s` 0: no planned duration.
std::vector<ProgressField> progress_fields(const std::string& label, double elapsed_s,
                                           const SecondReport& sec, uint64_t done, uint64_t planned,
                                           double planned_s);

// The store's own memory figure: "  store mem X" from used_memory (Redis) or bytes (memcached),
// empty when the poller has neither (yet).
std::string store_memory_text(const StoreStatsPoller& stats);

}  // namespace kv::drive
