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

enum class PhaseStatus { completed, interrupted };

struct PhasePlan {
  PhaseKind kind = PhaseKind::load;
  uint64_t keys = 0;
  uint64_t value_size = 0;
  uint32_t ttl_s = 0;
  std::string key_prefix;
};

struct PhaseResult {
  PhaseStatus status = PhaseStatus::completed;
  int64_t started_ts_us = 0;
  int64_t ended_ts_us = 0;
  IntervalStats totals;  // the whole phase
};

// Called on the collecting thread once per second (and once for the final partial second)
// with the interval's start (ts_us), its length and what every worker measured in it.
using SecondCallback = std::function<void(int64_t ts_us, int64_t interval_us, const IntervalStats&)>;

// Runs the phase with one worker per client (clients must be connected). Each worker takes a
// contiguous share of the keys. Returns when every worker is done or `stop` became true (then
// the status is interrupted); the result's totals equal the sum of every second passed to
// `on_second`. `started_ts_us` is reported through `on_start` before the first request.
PhaseResult run_phase(const PhasePlan& plan, std::vector<std::unique_ptr<StoreClient>>& clients,
                      const ValueTable& values, const std::atomic<bool>& stop,
                      const std::function<void(int64_t started_ts_us)>& on_start,
                      const SecondCallback& on_second);

}  // namespace kv::drive
