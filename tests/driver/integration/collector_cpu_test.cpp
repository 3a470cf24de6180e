// The collector's CPU figures against a real memcached, with a collector that wakes late: a
// worker thread's share of a core is its CPU over the time between two readings, never more
// than the time it had. A loaded machine wakes the collector 100 ms and more after a row ends;
// dividing the CPU read then by the row's length alone once showed "2,341 % of a core".
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "engine/loop/event_client.hpp"
#include "engine/phase_runner.hpp"
#include "kvdrive_test_util.hpp"
#include "store/target_uri.hpp"
#include "workload/phase_plan.hpp"

namespace kv::drive {
namespace {
using namespace kv::test;

// The machine's clocks, but the collector's every wait ends `late_ns` after its deadline (a
// worker ending still wakes it at once).
class LateCollectorClock final : public LoopClock {
 public:
  explicit LateCollectorClock(int64_t late_ns) : late_ns_(late_ns) {}
  int64_t wall_us() override { return real_.wall_us(); }
  int64_t steady_ns() override { return real_.steady_ns(); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  int64_t deadline_ns, const std::function<bool()>& done) override {
    return real_.wait_until(lock, cv, deadline_ns + late_ns_, done);
  }
  void workers_begin(size_t n) override { real_.workers_begin(n); }
  void worker_done() override { real_.worker_done(); }
  std::unique_ptr<LoopWaiter> waiter(boost::asio::io_context& io, SpinMargin* lateness) override {
    return real_.waiter(io, lateness);
  }

 private:
  LoopClock& real_ = system_loop_clock();
  const int64_t late_ns_;
};

TEST(CollectorCpu, AThreadsShareOfACoreIsOfTheTimeBetweenReadingsWhenTheCollectorWakesLate) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  WorkloadSpec w;
  w.keys = 1000;
  w.threads = 1;
  w.connections = 1;
  w.duration_us = 2'500'000;
  ClientOptions options;
  options.timeout_us = 1'000'000;
  const TargetSpec spec = parse_target_uri(memcached.uri());
  std::vector<std::unique_ptr<EventClient>> clients = connect_event_clients(spec, 1, options);
  const ValueTable values(w.values.largest(), w.seed);
  std::atomic<bool> stop{false};
  std::vector<SecondReport> rows;
  // Start 900 ms into a wall-clock second: the first row is ~100 ms long, and the collector
  // reads it 400 ms after it ended, while the worker (closed loop, one connection) stays busy.
  const auto past = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() %
                    1'000'000;
  std::this_thread::sleep_for(std::chrono::microseconds((1'900'000 - past) % 1'000'000));
  LateCollectorClock clock(400'000'000);
  const PhaseResult r = run_phase(
      plan_phase(PhaseKind::read, w), w, clients, values, stop, [](int64_t) {},
      [&](const SecondReport& s) { rows.push_back(s); }, clock);
  ASSERT_EQ(r.status, RunStatus::completed) << r.error;
  ASSERT_GE(rows.size(), 3U);
  EXPECT_LT(rows.front().interval_us, 300'000) << "the first row should be short";
  double busiest = 0;
  for (const SecondReport& s : rows) {
    // A thread has at most the time between two readings (a collector preempted between its
    // reading of the clock and of the thread's clock could add a few ms to a 0.5 s window).
    EXPECT_LE(s.busiest_thread_cpu, 1.1)
        << "row at " << s.ts_us << " of " << s.interval_us << " us";
    EXPECT_LE(s.busiest_thread_wanted, 1.0);
    busiest = std::max(busiest, s.busiest_thread_cpu);
  }
  // The worker was measured: a closed loop on one connection keeps it on a CPU much of the time.
  EXPECT_GT(busiest, 0.05);
  EXPECT_GT(r.ops, 1000U);
}

}  // namespace
}  // namespace kv::drive
