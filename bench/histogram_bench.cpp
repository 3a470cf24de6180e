// What recording one request's latency costs on kvdrive's request path: LatencyHistogram::record
// alone, and StatsSlot::record (lock + counters + histogram), the call every worker makes per
// request. Latencies are drawn from a realistic spread (20 µs .. 20 ms, log-uniform) so bucket
// indexes vary as they do under load. Goal (issue 9): under 50 ns per call.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <thread>
#include <vector>

#include "kvbench/histogram.hpp"
#include "stats/interval_stats.hpp"

namespace {

std::vector<uint64_t> latencies() {
  std::vector<uint64_t> v(4096);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> exp10(4.3, 7.3);  // 20 µs .. 20 ms
  for (auto& x : v) x = static_cast<uint64_t>(std::pow(10.0, exp10(rng)));
  return v;
}

void BM_LatencyHistogram_record(benchmark::State& state) {
  auto v = latencies();
  kv::LatencyHistogram h;
  size_t i = 0;
  for (auto _ : state) {
    h.record(v[i++ & 4095]);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_LatencyHistogram_record);

void BM_StatsSlot_record(benchmark::State& state) {
  auto v = latencies();
  kv::drive::StatsSlot slot(false);
  kv::drive::RequestRecord r{};
  size_t i = 0;
  for (auto _ : state) {
    r.status = (i % 11) ? kv::drive::OpStatus::hit : kv::drive::OpStatus::ok;
    r.latency_ns = r.sent_latency_ns = v[i & 4095];
    r.bytes_out = 10;
    r.bytes_in = 100;
    slot.record((i % 11) ? kv::OpType::get : kv::OpType::set, r);
    ++i;
  }
}
BENCHMARK(BM_StatsSlot_record);

// The same with the collector swapping buffers once per 1 ms on another thread (1000 x more
// often than kvdrive's once per second), to show the lock stays uncontended in practice.
void BM_StatsSlot_record_with_collector(benchmark::State& state) {
  auto v = latencies();
  kv::drive::StatsSlot slot(false);
  std::atomic<bool> done{false};
  std::thread collector([&] {
    kv::drive::IntervalStats into;
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      slot.drain_into(into);
    }
  });
  kv::drive::RequestRecord r{};
  r.status = kv::drive::OpStatus::hit;
  size_t i = 0;
  for (auto _ : state) {
    r.latency_ns = r.sent_latency_ns = v[i++ & 4095];
    slot.record(kv::OpType::get, r);
  }
  done = true;
  collector.join();
}
BENCHMARK(BM_StatsSlot_record_with_collector)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
