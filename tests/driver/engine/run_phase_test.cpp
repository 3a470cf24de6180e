// run_phase, the measurement core, driven end to end in process: EventClients whose links reach
// a scripted store through FakeTransports (tests/support/sim_loop.hpp), on a simulated clock.
// Every figure is exact: the store's replies come when the script says, and virtual time moves
// only when every thread of the phase waits. No socket, no sleep; each test runs in
// milliseconds. (The real-server integration tests prove the same counts against the stores.)
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "engine/loop/event_client.hpp"
#include "engine/phase_runner.hpp"
#include "sim_loop.hpp"
#include "workload/phase_plan.hpp"

namespace kv::drive {
namespace {

using test::SimClock;
using test::SimStore;

constexpr int64_t kMs = 1'000'000;  // ns
constexpr int64_t kSecondUs = 1'000'000;

// One phase against one SimStore: the workload and plan a test adjusts, then run().
struct SimPhase {
  SimClock clock;
  SimStore store;
  WorkloadSpec w;
  ClientOptions options;
  std::vector<std::unique_ptr<EventClient>> clients;
  std::vector<SecondReport> rows;
  std::atomic<bool> stop{false};

  explicit SimPhase(int64_t wall_start_us = 1'700'000'000'000'000) : clock(wall_start_us) {
    w.keys = 1000;
    w.threads = 1;
    w.connections = 1;
    options.timeout_us = 500'000;
    spec.protocol = Protocol::memcached;
    spec.servers = {HostPort{"sim", 11211}};
    spec.display = "memcached://sim:11211";
  }
  TargetSpec spec;

  PhasePlan plan(PhaseKind kind) const { return plan_phase(kind, w); }

  PhaseResult run(const PhasePlan& plan) {
    if (clients.empty()) {
      const auto n = static_cast<size_t>(w.threads) * static_cast<size_t>(w.connections);
      for (size_t i = 0; i < n; ++i) {
        auto c = std::make_unique<EventClient>(spec, options);
        c->set_transports(store.transports(clock));
        clients.push_back(std::move(c));
      }
    }
    rows.clear();
    const ValueTable values(w.values.largest(), w.seed);
    return run_phase(
        plan, w, clients, values, stop, [](int64_t) {},
        [this](const SecondReport& r) { rows.push_back(r); }, clock);
  }
  PhaseResult run(PhaseKind kind) { return run(plan(kind)); }

  // A figure summed over the rows, for one op or both.
  template <class F>
  uint64_t sum(F f) const {
    uint64_t n = 0;
    for (const SecondReport& r : rows) n += f(r);
    return n;
  }
  uint64_t ops() const {
    return sum([](const SecondReport& r) { return r.ops(); });
  }
  uint64_t ok() const {
    return sum([](const SecondReport& r) { return r.ok(); });
  }
  uint64_t of(OpType op, uint64_t OpSecond::*field) const {
    return sum([&](const SecondReport& r) { return r[op].*field; });
  }
};

// --- counts -----------------------------------------------------------------------------------

TEST(RunPhase, ALoadPhaseSetsEveryKeyOnceAndTheStoreCountsAsManySets) {
  SimPhase s;
  const PhaseResult r = s.run(PhaseKind::load);
  EXPECT_EQ(r.status, RunStatus::completed);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(r.failed, 0U);
  EXPECT_EQ(s.store.cmd_set.load(), 1000U);
  EXPECT_EQ(s.of(OpType::set, &OpSecond::ok), 1000U);
  EXPECT_EQ(s.of(OpType::get, &OpSecond::ops), 0U);
  EXPECT_EQ(s.store.connections.load(), 1U);
}

TEST(RunPhase, AReadPhaseAfterTheLoadHitsEveryKeyItWrote) {
  SimPhase s;
  s.run(PhaseKind::load);
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.status, RunStatus::completed);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(s.store.cmd_get.load(), 1000U);
  EXPECT_EQ(s.store.get_hits.load(), 1000U);
  EXPECT_EQ(s.of(OpType::get, &OpSecond::hits), 1000U);
  EXPECT_EQ(s.of(OpType::get, &OpSecond::misses), 0U);
}

TEST(RunPhase, HitsAndMissesEqualTheStoresCountsAtAHitRateOfAHalf) {
  SimPhase s;
  s.w.hit_rate = 0.5;
  s.run(PhaseKind::load);
  s.run(PhaseKind::read);
  const uint64_t hits = s.of(OpType::get, &OpSecond::hits);
  const uint64_t misses = s.of(OpType::get, &OpSecond::misses);
  EXPECT_EQ(hits, s.store.get_hits.load());
  EXPECT_EQ(hits + misses, s.store.cmd_get.load());
  EXPECT_GT(hits, 400U);
  EXPECT_GT(misses, 400U);
}

TEST(RunPhase, AMixedPhaseSendsSetsAndGetsAsTheStoreCountsThem) {
  SimPhase s;
  s.w.ratio_sets = 1;
  s.w.ratio_gets = 9;
  s.w.requests = 2000;
  s.run(PhaseKind::load);
  const uint64_t sets_before = s.store.cmd_set.load();
  const PhaseResult r = s.run(PhaseKind::mixed);
  EXPECT_EQ(r.ops, 2000U);
  const uint64_t sets = s.of(OpType::set, &OpSecond::ops);
  const uint64_t gets = s.of(OpType::get, &OpSecond::ops);
  EXPECT_EQ(sets, s.store.cmd_set.load() - sets_before);
  EXPECT_EQ(gets, s.store.cmd_get.load());
  EXPECT_EQ(sets + gets, 2000U);
  EXPECT_GT(sets, 150U);
  EXPECT_LT(sets, 250U);
}

TEST(RunPhase, TwoWorkersSplitTheKeysAndTheirCountsAddUp) {
  SimPhase s;
  s.w.threads = 2;
  s.w.connections = 2;
  const PhaseResult r = s.run(PhaseKind::load);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(s.store.cmd_set.load(), 1000U);
  EXPECT_EQ(s.store.connections.load(), 4U);
  EXPECT_EQ(s.ops(), 1000U);
}

// --- time -------------------------------------------------------------------------------------

TEST(RunPhase, EveryRequestsLatencyIsTheStoresServiceTime) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return 2 * kMs; };
  const PhaseResult r = s.run(PhaseKind::load);
  ASSERT_EQ(r.ops, 1000U);
  const LatencyHistogram& h = r.totals[OpType::set].latency;
  EXPECT_EQ(h.count(), 1000U);
  // The histogram's buckets are 1/128 of their value wide.
  EXPECT_NEAR(static_cast<double>(h.percentile_ns(0.5)), 2e6, 2e6 / 128);
  EXPECT_NEAR(static_cast<double>(h.percentile_ns(0.0)), 2e6, 2e6 / 128);
  // The first request also waited for the connection (50 µs): it was queued before.
  EXPECT_NEAR(static_cast<double>(h.percentile_ns(1.0)), 2.05e6, 2.05e6 / 128);
}

TEST(RunPhase, AClosedLoopConnectionDoesOneRequestPerServiceTime) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = 2 * kSecondUs;
  const PhaseResult r = s.run(PhaseKind::read);
  // Requests leave while the phase lasts: from the connect (50 µs) on, one per millisecond.
  EXPECT_EQ(r.ops, 2000U);
  EXPECT_EQ(s.store.cmd_get.load(), 2000U);
  EXPECT_EQ(r.ended_ts_us - r.started_ts_us, 2 * kSecondUs + 50);
}

TEST(RunPhase, APipelineOfFourDoesFourTimesTheRequests) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = kSecondUs;
  s.w.pipeline = 4;
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, 4000U);
  EXPECT_EQ(s.store.cmd_get.load(), 4000U);
  EXPECT_NEAR(static_cast<double>(r.totals[OpType::get].latency.percentile_ns(0.99)), 1e6,
              1e6 / 128);
}

TEST(RunPhase, ThreeConnectionsOfOneWorkerEachKeepTheirOwnPace) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = kSecondUs;
  s.w.connections = 3;
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, 3000U);
  EXPECT_EQ(s.store.connections.load(), 3U);
}

TEST(RunPhase, RowsAreCutOnTheWallClocksWholeSeconds) {
  SimPhase s(1'700'000'000'300'000);  // the phase starts 0.3 s into a second
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = 3 * kSecondUs;
  const PhaseResult r = s.run(PhaseKind::read);
  ASSERT_EQ(s.rows.size(), 4U);  // 0.7 s, 1 s, 1 s, 0.3 s (and the last reply)
  EXPECT_EQ(s.rows[0].ts_us, r.started_ts_us);
  EXPECT_EQ(s.rows[0].interval_us, 700'000);
  for (size_t i = 1; i < s.rows.size(); ++i) {
    EXPECT_EQ(s.rows[i].ts_us % kSecondUs, 0) << i;
    EXPECT_EQ(s.rows[i].ts_us, s.rows[i - 1].ts_us + s.rows[i - 1].interval_us) << i;
  }
  EXPECT_EQ(s.rows[1].ops(), 1000U);
  EXPECT_EQ(s.rows[2].ops(), 1000U);
  EXPECT_EQ(s.ops(), r.ops);
}

TEST(RunPhase, AWallClockSteppedMidPhaseLosesNoRequestAndTheRowsSayTheStep) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = 3 * kSecondUs;
  s.clock.step_wall_at(s.clock.steady_ns() + 1'500 * kMs, 5 * kSecondUs);
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, 3000U);
  EXPECT_EQ(s.ops(), 3000U);
  ASSERT_GE(s.rows.size(), 2U);
  for (size_t i = 1; i < s.rows.size(); ++i) EXPECT_GT(s.rows[i].ts_us, s.rows[i - 1].ts_us);
  EXPECT_EQ(s.rows.back().clock_offset_us - s.rows.front().clock_offset_us, 5 * kSecondUs);
}

TEST(RunPhase, AWallClockSlewedMidPhaseKeepsWholeSecondRows) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = 4 * kSecondUs;
  s.clock.slew_at(s.clock.steady_ns(), 0.0005);  // 500 µs/s faster
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, s.ops());
  for (const SecondReport& row : s.rows) {
    if (row.ts_us == r.started_ts_us) continue;
    EXPECT_EQ(row.ts_us % kSecondUs, 0);
  }
  const int64_t drift = s.rows.back().clock_offset_us - s.rows.front().clock_offset_us;
  EXPECT_GT(drift, 1'000);
  EXPECT_LT(drift, 2'500);
}

TEST(RunPhase, TheWarmUpsRowsAreMarkedAndLeftOutOfTheTotals) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return kMs; };
  s.w.duration_us = 3 * kSecondUs;
  PhasePlan plan = s.plan(PhaseKind::read);
  plan.warmup_us = kSecondUs;
  const PhaseResult r = s.run(plan);
  uint64_t warm = 0, measured = 0;
  for (const SecondReport& row : s.rows) (row.warmup ? warm : measured) += row.ops();
  EXPECT_GT(warm, 900U);
  EXPECT_EQ(r.totals[OpType::get].ops, measured);
  EXPECT_EQ(warm + measured, r.ops);
  EXPECT_TRUE(s.rows.front().warmup);
  EXPECT_FALSE(s.rows.back().warmup);
}

// --- rate mode --------------------------------------------------------------------------------

TEST(RunPhase, RateModeSendsEveryRequestOnItsScheduleWithNoSlip) {
  SimPhase s;
  s.w.duration_us = 2 * kSecondUs;
  s.w.rate = 1000;
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, 2000U);
  EXPECT_EQ(s.of(OpType::get, &OpSecond::dropped), 0U);
  const OpStats& t = r.totals[OpType::get];
  EXPECT_EQ(t.slip.percentile_ns(1.0), 0U);
  EXPECT_NEAR(static_cast<double>(t.latency.percentile_ns(0.99)), 1e5, 1e5 / 128);
  // The first also waited for the connection (50 µs), sent on time all the same.
  EXPECT_NEAR(static_cast<double>(t.latency.percentile_ns(1.0)), 1.5e5, 1.5e5 / 128);
}

TEST(RunPhase, RateModeAgainstASlowStoreChargesTheQueueAndAnswersOrDropsEveryDueRequest) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return 2 * kMs; };  // 500/s on one connection
  s.w.duration_us = 2 * kSecondUs;
  s.w.rate = 1000;
  const PhaseResult r = s.run(PhaseKind::read);
  const uint64_t dropped = s.of(OpType::get, &OpSecond::dropped);
  EXPECT_EQ(r.ops + dropped, 2000U);  // every due request: answered or dropped
  EXPECT_GT(dropped, 0U);
  EXPECT_EQ(r.ops, s.store.cmd_get.load());
  // Coordinated omission corrected: latency from the intended send time includes the queue.
  const OpStats& t = r.totals[OpType::get];
  EXPECT_GT(t.latency.percentile_ns(1.0), 400 * static_cast<uint64_t>(kMs));
  EXPECT_NEAR(static_cast<double>(t.sent_latency.percentile_ns(0.5)), 2e6, 2e6 / 128);
}

TEST(RunPhase, RateModeWithAPipelineKeepsUpWithAStoreSlowerThanTheInterval) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return 2 * kMs; };
  s.w.duration_us = 2 * kSecondUs;
  s.w.rate = 1000;
  s.w.pipeline = 4;  // 2,000/s on one connection
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.ops, 2000U);
  EXPECT_EQ(s.of(OpType::get, &OpSecond::dropped), 0U);
  EXPECT_EQ(r.totals[OpType::get].slip.percentile_ns(1.0), 0U);
}

// --- failures ---------------------------------------------------------------------------------

TEST(RunPhase, AStalledConnectionTimesOutWithoutDelayingTheOthers) {
  SimPhase s;
  s.w.duration_us = 2 * kSecondUs;
  s.w.connections = 2;
  s.options.timeout_us = 500'000;
  std::array<std::atomic<uint64_t>, 8> got{};
  s.store.service = [&got](size_t conn, uint64_t n) {
    ++got[conn];
    return conn == 0 && n == 10 ? SimStore::kNever : kMs;
  };
  const PhaseResult r = s.run(PhaseKind::read);
  const uint64_t timeouts = s.of(OpType::get, &OpSecond::timeouts);
  EXPECT_EQ(timeouts, 1U);
  EXPECT_EQ(r.failed, 1U);
  // The other connection kept its pace: one request per millisecond all along.
  EXPECT_EQ(got[1].load(), 2000U);
  // The stalled one lost the timeout (and a tick), then went on on a new connection.
  EXPECT_GT(got[0].load() + got[2].load(), 1400U);
  EXPECT_LT(got[0].load() + got[2].load(), 1500U);
  EXPECT_EQ(s.store.connections.load(), 3U);
}

TEST(RunPhase, AStoreThatNeverAnswersFailsThePhaseWithTimeouts) {
  SimPhase s;
  s.w.duration_us = kSecondUs;
  s.options.timeout_us = 100'000;
  s.store.service = [](size_t, uint64_t) { return SimStore::kNever; };
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_NE(r.error.find("every request failed"), std::string::npos) << r.error;
  const uint64_t timeouts = s.of(OpType::get, &OpSecond::timeouts);
  EXPECT_EQ(r.ops, timeouts);
  // One request per timeout (100 ms, seen on the next 5 ms tick) and reconnect.
  EXPECT_GE(timeouts, 9U);
  EXPECT_LE(timeouts, 10U);
}

TEST(RunPhase, TheErrorLimitStopsThePhase) {
  SimPhase s;
  s.w.duration_us = 10 * kSecondUs;
  s.options.timeout_us = 100'000;
  s.store.service = [](size_t, uint64_t) { return SimStore::kNever; };
  PhasePlan plan = s.plan(PhaseKind::read);
  plan.max_errors = 3;
  const PhaseResult r = s.run(plan);
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_NE(r.error.find("--max-errors 3"), std::string::npos) << r.error;
  EXPECT_GE(r.failed, 3U);
  EXPECT_LT(r.ended_ts_us - r.started_ts_us, 2 * kSecondUs);
}

TEST(RunPhase, AStoreThatRefusesEveryConnectIsGivenUpOn) {
  SimPhase s;
  s.w.duration_us = 30 * kSecondUs;
  s.store.refuse_connects = true;
  PhasePlan plan = s.plan(PhaseKind::read);
  plan.give_up_us = 2 * kSecondUs;
  const PhaseResult r = s.run(plan);
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_NE(r.error.find("gave up"), std::string::npos) << r.error;
  EXPECT_LT(r.ended_ts_us - r.started_ts_us, 4 * kSecondUs);
  EXPECT_EQ(r.ops, r.failed);
  EXPECT_GT(s.store.refused.load(), 1U);  // reconnects, backing off
  EXPECT_EQ(s.store.cmd_get.load(), 0U);
}

TEST(RunPhase, AWallClockSteppedWhileTheStoreIsDownDoesNotHastenTheGiveUp) {
  SimPhase s;
  s.w.duration_us = 30 * kSecondUs;
  s.store.refuse_connects = true;
  const int64_t begin = s.clock.steady_ns();
  s.clock.step_wall_at(begin + 500 * kMs, 10 * kSecondUs);
  PhasePlan plan = s.plan(PhaseKind::read);
  plan.give_up_us = 2 * kSecondUs;
  const PhaseResult r = s.run(plan);
  EXPECT_EQ(r.status, RunStatus::failed);
  EXPECT_NE(r.error.find("gave up"), std::string::npos) << r.error;
  const int64_t lasted = s.clock.steady_ns() - begin;
  EXPECT_GE(lasted, 2 * kSecondUs * 1000);
  EXPECT_LT(lasted, 4 * kSecondUs * 1000);
}

TEST(RunPhase, AStoreClosingConnectionsLosesOnlyTheRequestsInFlight) {
  SimPhase s;
  s.store.close_after = 100;
  const PhaseResult r = s.run(PhaseKind::load);
  const uint64_t errors = s.of(OpType::set, &OpSecond::errors);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(r.ops - errors, s.store.cmd_set.load());  // every answer the store counted
  EXPECT_GE(errors, 1U);
  EXPECT_GE(s.store.connections.load(), 10U);
}

TEST(RunPhase, CtrlCEndsThePhaseInterruptedWithEveryRequestItSentAnswered) {
  SimPhase s;
  s.w.duration_us = 10 * kSecondUs;
  s.store.service = [&s](size_t, uint64_t n) {
    if (n == 500) s.stop = true;
    return kMs;
  };
  const PhaseResult r = s.run(PhaseKind::read);
  EXPECT_EQ(r.status, RunStatus::interrupted);
  EXPECT_EQ(r.ops, s.store.cmd_get.load());
  EXPECT_GE(r.ops, 500U);
  EXPECT_LT(r.ops, 520U);
}

TEST(RunPhase, EveryAnsweredRequestsTimeIsSplitAndTheWireIsTheStoresTime) {
  SimPhase s;
  s.store.service = [](size_t, uint64_t) { return 3 * kMs; };
  const PhaseResult r = s.run(PhaseKind::load);
  const OpStats& t = r.totals[OpType::set];
  EXPECT_EQ(t.unsplit, 0U);
  EXPECT_EQ(t.wire.count(), 1000U);
  // The reply is read the moment it arrives: nothing of it is the client's receive path.
  EXPECT_NEAR(static_cast<double>(t.wire.percentile_ns(0.5)), 3e6, 3e6 / 128);
  EXPECT_EQ(t.client_recv.percentile_ns(1.0), 0U);
}

// --- a memcached pool -------------------------------------------------------------------------

// Two servers of one pool, each counted apart (pool_server_seconds).
void make_pool(SimPhase& s) {
  s.spec.servers = {HostPort{"sim-a", 11211}, HostPort{"sim-b", 11211}};
  s.spec.display = "memcached://sim-a:11211,sim-b:11211";
}

uint64_t pool_count(const SimPhase& s, size_t server, PoolCount c) {
  return s.sum([&](const SecondReport& r) {
    return static_cast<uint64_t>(r.pool.at(server).n.at(static_cast<size_t>(c)));
  });
}

TEST(RunPhase, APoolsAnswersPerServerEqualEachServersCount) {
  SimPhase s;
  make_pool(s);
  const PhaseResult r = s.run(PhaseKind::load);
  EXPECT_EQ(r.ops, 1000U);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(pool_count(s, i, PoolCount::answered), s.store.by_server[i].load()) << i;
    EXPECT_GT(s.store.by_server[i].load(), 300U) << i;  // ketama spreads the keys
  }
  EXPECT_EQ(s.store.by_server[0].load() + s.store.by_server[1].load(), 1000U);
}

TEST(RunPhase, ADeadPoolServersShareFailsWhileTheOtherKeepsAnswering) {
  SimPhase s;
  make_pool(s);
  s.store.refuse_server = 1;
  const PhaseResult r = s.run(PhaseKind::load);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(s.store.by_server[1].load(), 0U);
  EXPECT_EQ(pool_count(s, 0, PoolCount::answered), s.store.by_server[0].load());
  EXPECT_EQ(r.ops - r.failed, s.store.by_server[0].load());
  // Its share failed, nearly all at once while it backed off (no I/O), with a probe per step.
  EXPECT_EQ(pool_count(s, 1, PoolCount::failed) + pool_count(s, 1, PoolCount::failed_fast),
            r.failed);
  EXPECT_GT(pool_count(s, 1, PoolCount::failed_fast), 0U);
  EXPECT_GT(pool_count(s, 1, PoolCount::probes), 0U);
}

TEST(RunPhase, WithEjectADeadPoolServersKeysGoToTheLiveOne) {
  SimPhase s;
  make_pool(s);
  s.spec.eject_on_failure = true;
  s.store.refuse_server = 1;
  const PhaseResult r = s.run(PhaseKind::load);
  EXPECT_EQ(r.ops, 1000U);
  EXPECT_EQ(s.store.by_server[1].load(), 0U);
  // Only what waited for its first connect failed; the rest went to server 0.
  EXPECT_LE(r.failed, 1U);
  EXPECT_EQ(s.store.by_server[0].load(), r.ops - r.failed);
  // Counted where they went: server 0 got server 1's keys.
  EXPECT_GT(pool_count(s, 0, PoolCount::rehashed), 300U);
  EXPECT_EQ(pool_count(s, 1, PoolCount::rehashed), 0U);
  EXPECT_EQ(pool_count(s, 1, PoolCount::failed_fast), 0U);
}

}  // namespace
}  // namespace kv::drive
