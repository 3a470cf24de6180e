#include "phase_runner.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
};

void worker_loop(const PhasePlan& plan, StoreClient& client, const ValueTable& values,
                 uint64_t begin, uint64_t end, const std::atomic<bool>& stop, StatsSlot& slot) {
  KeyFormatter keys(plan.key_prefix);
  for (uint64_t i = begin; i < end; ++i) {
    if (stop.load(std::memory_order_relaxed)) break;
    std::string_view key = keys.format(i);
    if (plan.kind == PhaseKind::load) {
      std::string_view value = values.value_for(i, plan.value_size);
      int64_t t0 = steady_ns();
      OpStatus st = client.set(key, value, plan.ttl_s);
      auto ns = static_cast<uint64_t>(steady_ns() - t0);
      slot.record(OpType::set, st, ns, key.size() + value.size(), 0);
    } else {
      size_t len = 0;
      int64_t t0 = steady_ns();
      OpStatus st = client.get(key, &len);
      auto ns = static_cast<uint64_t>(steady_ns() - t0);
      slot.record(OpType::get, st, ns, key.size(), st == OpStatus::hit ? len : 0);
    }
  }
}

}  // namespace

PhaseResult run_phase(const PhasePlan& plan, std::vector<std::unique_ptr<StoreClient>>& clients,
                      const ValueTable& values, const std::atomic<bool>& stop,
                      const std::function<void(int64_t)>& on_start,
                      const SecondCallback& on_second) {
  const size_t n = clients.size();
  std::vector<std::unique_ptr<StatsSlot>> slots;
  for (size_t i = 0; i < n; ++i) slots.push_back(std::make_unique<StatsSlot>());
  Shared shared;
  shared.running = static_cast<int>(n);

  PhaseResult result;
  result.started_ts_us = now_ts_us();
  on_start(result.started_ts_us);
  const int64_t start_steady_us = steady_us();

  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t) {
    uint64_t begin = plan.keys * t / n;
    uint64_t end = plan.keys * (t + 1) / n;
    threads.emplace_back([&, t, begin, end] {
      worker_loop(plan, *clients[t], values, begin, end, stop, *slots[t]);
      std::lock_guard<std::mutex> lock(shared.mu);
      --shared.running;
      shared.cv.notify_all();
    });
  }

  IntervalStats second;
  int64_t interval_start_steady = start_steady_us;
  int64_t interval_start_ts = result.started_ts_us;
  for (int64_t k = 1;; ++k) {
    const int64_t boundary = start_steady_us + k * 1'000'000;
    bool done = false;
    {
      std::unique_lock<std::mutex> lock(shared.mu);
      auto deadline = std::chrono::steady_clock::time_point(std::chrono::microseconds(boundary));
      done = shared.cv.wait_until(lock, deadline, [&] { return shared.running == 0; });
    }
    const int64_t now_steady = steady_us();
    for (auto& s : slots) s->drain_into(second);
    const int64_t interval_us = now_steady - interval_start_steady;
    on_second(interval_start_ts, interval_us, second);
    result.totals.merge(second);
    second.reset();
    interval_start_ts += interval_us;
    interval_start_steady = now_steady;
    if (done) break;
  }
  for (auto& t : threads) t.join();
  result.ended_ts_us = interval_start_ts;
  result.status = stop.load() ? PhaseStatus::interrupted : PhaseStatus::completed;
  return result;
}

}  // namespace kv::drive
