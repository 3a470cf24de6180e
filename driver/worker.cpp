#include "worker.hpp"

#include <time.h>

#include "key_chooser.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

void sleep_until_ns(int64_t steady_deadline_ns) {
  timespec ts{static_cast<time_t>(steady_deadline_ns / 1'000'000'000),
              static_cast<long>(steady_deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

constexpr int64_t kLateNs = 1'000'000;  // a send more than 1 ms behind schedule is late

}  // namespace

void run_worker(const WorkerContext& ctx) {
  const PhasePlan& plan = ctx.plan;
  const WorkloadSpec& w = ctx.workload;
  const bool load = plan.kind == PhaseKind::load;
  const bool rate_mode = plan.rate > 0;
  // This worker's share of the requests (unbounded when the phase ends by duration).
  const uint64_t my_requests =
      plan.requests == 0 ? UINT64_MAX
                         : plan.requests * (ctx.index + 1) / ctx.count - plan.requests * ctx.index / ctx.count;
  const uint64_t key_begin = w.keys * ctx.index / ctx.count;
  const uint64_t key_end = w.keys * (ctx.index + 1) / ctx.count;
  const int64_t end_ns = plan.duration_us > 0 ? ctx.start_ns + plan.duration_us * 1000 : INT64_MAX;
  const double period_ns = rate_mode ? 1e9 * static_cast<double>(ctx.count) / plan.rate : 0;
  // Spread the workers' schedules over one period so they do not send in lockstep.
  const double phase_offset_ns = period_ns * static_cast<double>(ctx.index) / static_cast<double>(ctx.count);
  const uint32_t cycle = w.ratio_sets + w.ratio_gets;

  KeyChooser chooser(w.pattern, w.keys, key_begin, key_end, w.hit_rate, w.seed * 7919 + ctx.index);
  KeyFormatter keys(w.key_prefix);

  for (uint64_t i = 0; i < my_requests; ++i) {
    if (ctx.stop.load(std::memory_order_relaxed) || ctx.abort.load(std::memory_order_relaxed)) break;
    int64_t intended_ns = 0;
    if (rate_mode) {
      intended_ns = ctx.start_ns + static_cast<int64_t>(phase_offset_ns + static_cast<double>(i) * period_ns);
      if (intended_ns >= end_ns) break;
      if (steady_ns() < intended_ns) sleep_until_ns(intended_ns);
    }
    bool is_set = load || (plan.kind == PhaseKind::mixed && (i % cycle) < w.ratio_sets);
    uint64_t k = load ? key_begin + i : (is_set ? chooser.next_set() : chooser.next_get());
    if (load && k >= key_end) break;
    std::string_view key = keys.format(k);

    RequestRecord r{};
    int64_t t0 = steady_ns();
    if (is_set) {
      std::string_view value = ctx.values.value_for(k, w.values.size_for(k));
      r.status = ctx.client.set(key, value, w.ttl_s);
      r.bytes_out = key.size() + value.size();
    } else {
      std::string_view value;
      r.status = ctx.client.get(key, &value);
      r.bytes_out = key.size();
      if (r.status == OpStatus::hit) {
        r.bytes_in = value.size();
        if (w.verify) r.wrong = value != ctx.values.value_for(k, w.values.size_for(k));
      }
    }
    int64_t t1 = steady_ns();
    r.sent_latency_ns = static_cast<uint64_t>(t1 - t0);
    r.latency_ns = rate_mode ? static_cast<uint64_t>(t1 - intended_ns) : r.sent_latency_ns;
    r.late = rate_mode && t0 - intended_ns > kLateNs;
    ctx.slot.record(is_set ? OpType::set : OpType::get, r);
    if (!rate_mode && t1 >= end_ns) break;
  }
}

}  // namespace kv::drive
