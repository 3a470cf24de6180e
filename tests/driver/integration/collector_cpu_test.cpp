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
// worker ending still wakes it, 100 ms later: its thread has exited by then).
class LateCollectorClock final : public LoopClock {
 public:
  explicit LateCollectorClock(int64_t late_ns) : late_ns_(late_ns) {}
  int64_t wall_us() override { return real_.wall_us(); }
  int64_t steady_ns() override { return real_.steady_ns(); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  int64_t deadline_ns, const std::function<bool()>& done) override {
    const bool ended = real_.wait_until(lock, cv, deadline_ns + late_ns_, done);
    if (ended) {
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      lock.lock();
    }
    return ended;
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

// A 2.5 s closed-loop read phase of one worker on one memcached connection, started `offset_us`
// into a wall-clock second; its rows.
std::vector<SecondReport> closed_loop_rows(LoopClock& clock, int64_t offset_us, PhaseResult* r) {
  StoreServer memcached(StoreServer::Kind::memcached);
  if (std::string why; !memcached.start(&why)) {
    ADD_FAILURE() << why;
    return {};
  }
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
  const auto past = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count() %
                    1'000'000;
  std::this_thread::sleep_for(
      std::chrono::microseconds((1'000'000 + offset_us - past) % 1'000'000));
  *r = run_phase(
      plan_phase(PhaseKind::read, w), w, clients, values, stop, [](int64_t) {},
      [&](const SecondReport& s) { rows.push_back(s); }, clock);
  return rows;
}

TEST(CollectorCpu, AThreadsShareOfACoreIsOfTheTimeBetweenReadingsWhenTheCollectorWakesLate) {
  // Start 900 ms into a wall-clock second: the first row is ~100 ms long, and the collector
  // reads it 400 ms after it ended, while the worker (closed loop, one connection) stays busy.
  LateCollectorClock clock(400'000'000);
  PhaseResult r;
  const std::vector<SecondReport> rows = closed_loop_rows(clock, 900'000, &r);
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

TEST(CollectorCpu, TheLastRowHasTheWorkersCpuWhenItIsReadAfterTheThreadExited) {
  // Collector on time, but it reads the last row 100 ms after the worker ended (its thread has
  // exited: its handle would read the collector's own clock). Started 100 ms into a second, the
  // last row is ~0.6 s between readings with the worker busy for 0.5 s of it.
  LateCollectorClock clock(0);
  PhaseResult r;
  const std::vector<SecondReport> rows = closed_loop_rows(clock, 100'000, &r);
  ASSERT_EQ(r.status, RunStatus::completed) << r.error;
  ASSERT_GE(rows.size(), 3U);
  EXPECT_GT(rows.back().busiest_thread_cpu, 0.05)
      << "last row at " << rows.back().ts_us << " of " << rows.back().interval_us << " us";
  for (const SecondReport& s : rows) EXPECT_LE(s.busiest_thread_cpu, 1.1);
}

}  // namespace
}  // namespace kv::drive
