// The capacity search's verdicts on synthetic steps (no servers): latency bounds and whose time
// missed them, errors, a client that could not send or was starved, the store's distress (its
// CPU, cgroup events and throttling, memory). The search itself: search_rate_test.cpp.
#include "search/search.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kvbench/usage_error.hpp"
#include "search_test_util.hpp"

namespace kv::drive {
namespace {

// The store's own latency of a step: its calls and percentiles (buckets' upper bounds).
ServerLatency server_latency(double calls, double p50, double p90, double p99, double p999) {
  ServerLatency s;
  s.calls = calls;
  s.p50_us = p50;
  s.p90_us = p90;
  s.p99_us = p99;
  s.p999_us = p999;
  return s;
}

TEST(SearchVerdict, AStepWithinEveryBoundPasses) {
  auto v = judge_step(options(), step(1000, 1000, 500));
  EXPECT_EQ(v.verdict, Verdict::pass);
  EXPECT_EQ(v.limit, "");
}

TEST(SearchVerdict, ALatencyBoundPassedFailsNamingThePercentile) {
  auto v = judge_step(options("p99=1ms,p99.9=5ms"), step(1000, 1000, 2000));
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "p99");
  EXPECT_NE(v.reason.find("p99 2.0"), std::string::npos) << v.reason;
}

// Every request of the step split into its parts (µs): client send, wire, client recv.
void split_all(StepMeasure& m, double send_us, double wire_us, double recv_us) {
  for (uint64_t i = 0; i < m.ops; ++i)
    m.part_bins.record(static_cast<uint64_t>((send_us + wire_us + recv_us) * 1e3), 0,
                       static_cast<uint64_t>(send_us * 1e3), static_cast<uint64_t>(wire_us * 1e3),
                       static_cast<uint64_t>(recv_us * 1e3));
}

TEST(SearchVerdict, ABoundMissedOnlyByKvdrivesOwnTimeIsClientBoundNotFailed) {
  // p99 1.5 ms > 1 ms, of which 1.2 ms kvdrive's: the store's 0.3 ms meets the objective.
  auto m = step(1000, 1000, 1500);
  split_all(m, 1000, 300, 200);
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::invalid);
  EXPECT_EQ(v.limit, "client-latency");
  EXPECT_NE(v.reason.find("in kvdrive"), std::string::npos) << v.reason;
  ASSERT_TRUE(v.client_share_pct.has_value());
  EXPECT_NEAR(*v.client_share_pct, 80, 0.5);
}

TEST(SearchVerdict, ABoundTheStoresPartAloneMissesFails) {
  // p99 1.5 ms, of which 1.2 ms on the wire: the store's part alone misses 1 ms.
  auto m = step(1000, 1000, 1500);
  split_all(m, 200, 1200, 100);
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "p99");
  ASSERT_TRUE(v.client_share_pct.has_value());
  EXPECT_NEAR(*v.client_share_pct, 20, 0.5);
  // Unknown parts (TLS): judged on the latency alone, as before.
  EXPECT_EQ(judge_step(options(), step(1000, 1000, 1500)).limit, "p99");
  EXPECT_FALSE(judge_step(options(), step(1000, 1000, 1500)).client_share_pct.has_value());
}

TEST(SearchVerdict, AStepThatCannotBeSentFails) {
  auto v = judge_step(options(), step(1000, 900, 100));
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "achieved");
}

TEST(SearchVerdict, AFailWithEveryConnectionBusySaysSo) {
  auto m = step(10'000, 5'000, 2000);
  m.in_flight_slots = 4;
  m.sent_latency_mean_us = 800;  // 5,000/s x 0.8 ms = 4 requests in flight: every slot
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_NE(v.reason.find("all 4 connections x pipeline were busy"), std::string::npos) << v.reason;
  m.sent_latency_mean_us = 100;
  EXPECT_EQ(judge_step(options(), m).reason.find("busy"), std::string::npos);
}

TEST(SearchVerdict, ErrorsAboveTheBoundFail) {
  auto m = step(1000, 1000, 100);
  m.failed = m.ops / 100;  // 1 % > 0.1 %
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "errors");
}

TEST(SearchVerdict, ABusyClientThreadMakesTheStepInvalidNotFailed) {
  auto m = step(1000, 500, 5000);  // would fail on latency and achieved
  m.busiest_thread_cpu = 0.97;
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::invalid);
  EXPECT_EQ(v.limit, "client-cpu");
}

TEST(SearchVerdict, AThreadStarvedOfCpuByALoadedMachineIsAClientLimit) {
  auto m = step(1000, 500, 5000);
  m.busiest_thread_cpu = 0.4;
  m.busiest_thread_wanted = 0.97;  // ran 40 %, waited for a CPU 57 %
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::invalid);
  EXPECT_EQ(v.limit, "client-cpu");
  EXPECT_NE(v.reason.find("waiting for a CPU 97 %"), std::string::npos) << v.reason;
}

TEST(SearchVerdict, SlipIsAClientLimitOnlyWhenTheThreadWasBusy) {
  auto m = step(1000, 1000, 500);
  m.slip_p99_us = 20'000;
  m.busiest_thread_cpu = 0.1;  // waited on replies: the store's pace, judged on latency
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  m.busiest_thread_wanted = 0.6;  // and for a CPU at times (a loaded machine): still the store
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  m.busiest_thread_cpu = 0.8;
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::invalid);
  EXPECT_EQ(v.limit, "slip");
}

TEST(SearchVerdict, TooFewRequestsForAPercentileIsInvalid) {
  // 500 requests cannot say what a p99.9 is.
  auto v = judge_step(options("p99.9=5ms"), step(100, 100, 100, 5));
  EXPECT_EQ(v.verdict, Verdict::invalid);
  EXPECT_EQ(v.limit, "samples");
  EXPECT_NE(v.reason.find("n/a"), std::string::npos);
}

TEST(SearchVerdict, ServerDistressFailsEvenWithinTheObjective) {
  auto m = step(1000, 1000, 100);
  m.server.swap_in_pages_per_s = 250;
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "server: swap-in");
  EXPECT_NE(v.server.find("swap-in 250"), std::string::npos) << v.server;

  m.server = {};
  m.server.store_cpu_cores = 0.97;
  m.server.store_cores = 1;
  EXPECT_EQ(judge_step(options(), m).limit, "server: store CPU");
  m.server.store_cpu_cores = 0.5;
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  m.server = {};
  m.server.psi_memory_full_pct = 30;
  EXPECT_EQ(judge_step(options(), m).limit, "server: memory PSI full");
  m.server = {};
  m.server.major_faults_per_s = 5000;
  EXPECT_EQ(judge_step(options(), m).limit, "server: major faults");
}

// The store's cgroup: any memory.events high / max (v1 failcnt) / OOM in a step is distress, as
// is a CPU quota throttling more than a tenth of its periods; each is named.
TEST(SearchVerdict, CgroupEventsAndCpuThrottlingAreDistressNamedByCause) {
  auto m = step(1000, 1000, 100);
  m.server.cg_memory_high_events = 0;
  m.server.cg_memory_max_events = 0;
  m.server.cg_oom_events = 0;
  m.server.cg_cpu_throttled_fraction = 0.05;
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);

  m.server.cg_cpu_throttled_fraction = 0.8;
  m.server.cg_cpu_throttled_ms_per_s = 412;
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::fail);
  EXPECT_EQ(v.limit, "server: cgroup CPU quota");
  EXPECT_NE(v.server.find("throttled in 80 % of periods (412 ms/s)"), std::string::npos)
      << v.server;

  m.server.cg_cpu_throttled_fraction = 0;
  m.server.cg_memory_max_events = 3;
  v = judge_step(options(), m);
  EXPECT_EQ(v.limit, "server: cgroup memory.max");
  EXPECT_NE(v.reason.find("cgroup memory.max 3 events"), std::string::npos) << v.reason;
  m.server.cg_memory_max_events = 0;
  m.server.cg_memory_high_events = 1;
  EXPECT_EQ(judge_step(options(), m).limit, "server: cgroup memory.high");
  m.server.cg_oom_events = 1;  // the OOM first: the worst of the two
  EXPECT_EQ(judge_step(options(), m).limit, "server: cgroup OOM");

  m.server = {};
  m.server.cg_psi_memory_full_pct = 8;  // below the default 10 %
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  m.server.cg_psi_memory_full_pct = 25;
  v = judge_step(options(), m);
  EXPECT_EQ(v.limit, "server: cgroup memory PSI full");
  EXPECT_NE(v.server.find("cgroup memory PSI full 25.0 %"), std::string::npos) << v.server;

  // A latency failure stays the limit; the cgroup is in the reason beside it.
  auto slow = step(1000, 1000, 5000);
  slow.server.cg_cpu_throttled_fraction = 0.9;
  v = judge_step(options(), slow);
  EXPECT_EQ(v.limit, "p99");
  EXPECT_NE(v.reason.find("; server: cgroup CPU quota throttled in 90 %"), std::string::npos)
      << v.reason;

  // Limits raised or turned off.
  auto s = options();
  s.distress = parse_distress("cgroup-high=5,cgroup-oom=off,cpu-throttled=0.95");
  auto quiet = step(1000, 1000, 100);
  quiet.server.cg_memory_high_events = 5;
  quiet.server.cg_oom_events = 2;
  quiet.server.cg_cpu_throttled_fraction = 0.9;
  EXPECT_EQ(judge_step(s, quiet).verdict, Verdict::pass);
}

// A store in a cgroup with a CPU quota of half a core saturates at 50 %: the store-CPU rule
// takes the fewer of its threads' cores and its quota's.
TEST(SearchVerdict, StoreCpuIsJudgedAgainstTheCgroupQuotaWhenFewer) {
  auto m = step(1000, 1000, 100);
  m.server.store_cpu_cores = 0.49;
  m.server.store_cores = 1;
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  m.server.cg_cpu_quota_cores = 0.5;
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.limit, "server: store CPU");
  EXPECT_NE(v.server.find("store CPU 49 % of its cgroup's CPU quota of 0.50 cores"),
            std::string::npos)
      << v.server;
  m.server.store_cpu_cores = 0.4;  // below 95 % of the quota
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
  // A quota above the threads' cores: the threads are the limit.
  m.server.store_cpu_cores = 0.97;
  m.server.cg_cpu_quota_cores = 4;
  v = judge_step(options(), m);
  EXPECT_NE(v.server.find("store CPU 97 % of 1 core"), std::string::npos) << v.server;
  // Threads unknown (memcached without stats threads): the quota alone.
  m.server.store_cores.reset();
  m.server.store_cpu_cores = 1.9;
  m.server.cg_cpu_quota_cores = 2;
  EXPECT_EQ(judge_step(options(), m).limit, "server: store CPU");
}

// memory.max hit while the cgroup's anon + shmem is far below the limit is page cache being
// reclaimed (a store writing its AOF): not distress. Near the limit it is the store's memory.
TEST(SearchVerdict, MemoryMaxEventsCountOnlyWithAnonNearTheLimit) {
  auto m = step(1000, 1000, 100);
  m.server.cg_memory_max_events = 4000;
  m.server.cg_anon_of_max = 0.3;  // 19 MiB of a 64 MiB limit, the rest page cache
  auto v = judge_step(options(), m);
  EXPECT_EQ(v.verdict, Verdict::pass) << v.reason;
  m.server.cg_anon_of_max = 0.95;
  v = judge_step(options(), m);
  EXPECT_EQ(v.limit, "server: cgroup memory.max");
  EXPECT_NE(v.reason.find("cgroup memory.max 4,000 events (anon + shmem 95 % of it)"),
            std::string::npos)
      << v.reason;
  m.server.cg_anon_of_max.reset();  // unknown: counted, as before
  EXPECT_EQ(judge_step(options(), m).limit, "server: cgroup memory.max");
  // --distress cgroup-max-anon moves the threshold (off: every event counts).
  m.server.cg_anon_of_max = 0.3;
  auto lower = options();
  lower.distress = parse_distress("cgroup-max-anon=0.25");
  EXPECT_EQ(lower.distress.cgroup_max_anon_fraction, 0.25);
  EXPECT_EQ(judge_step(lower, m).limit, "server: cgroup memory.max");
  lower.distress = parse_distress("cgroup-max-anon=off");
  EXPECT_EQ(judge_step(lower, m).limit, "server: cgroup memory.max");
  EXPECT_EQ(parse_distress("swap-in=1").cgroup_max_anon_fraction, 0.9);
  EXPECT_THROW(parse_distress("cgroup-max-anon=1.5"), UsageError);
}

// Redis's own latency beside a failed bound: execution near the client's latency is the
// server's; far below it, the time is spent outside the command's execution.
TEST(SearchVerdict, AFailedBoundSaysWhetherTheLatencyIsInTheServer) {
  auto m = step(1000, 1000, 2000);  // p99 2 ms > 1 ms
  EXPECT_EQ(judge_step(options(), m).reason.find("server's own"), std::string::npos);
  m.server.latency = server_latency(5000, 8, 16, 32, 64);
  auto v = judge_step(options(), m);
  EXPECT_NE(v.reason.find("p99 2.000 ms > 1.000 ms, the server's own p99 <= 0.032 ms: the "
                          "latency is in queueing before the store reads a request"),
            std::string::npos)
      << v.reason;
  m.server.latency = server_latency(5000, 512, 1024, 2048, 4096);
  v = judge_step(options(), m);
  EXPECT_NE(v.reason.find("the server's own p99 <= 2.048 ms: the latency is in the server's "
                          "execution"),
            std::string::npos)
      << v.reason;
  EXPECT_EQ(v.limit, "p99");
}

TEST(SearchVerdict, ADistressLimitTurnedOffIsIgnored) {
  auto s = options();
  s.distress = parse_distress("swap-in=off");
  auto m = step(1000, 1000, 100);
  m.server.swap_in_pages_per_s = 250;
  EXPECT_EQ(judge_step(s, m).verdict, Verdict::pass);
}

TEST(SearchVerdict, UnknownServerFiguresAreNotDistress) {
  auto m = step(1000, 1000, 100);
  m.server.store_cpu_cores = 5;  // no core count known: not judged
  EXPECT_EQ(judge_step(options(), m).verdict, Verdict::pass);
}

TEST(SearchVerdict, AFailedLatencyBoundSaysWhereItsTimeWas) {
  auto m = step(1000, 1000, 2000);  // p99 2 ms > 1 ms
  auto v = judge_step(options(), m);
  ASSERT_TRUE(v.latency_us);
  EXPECT_NEAR(*v.latency_us, 2000, 20);
  EXPECT_EQ(v.latency_owner.rfind("the wire", 0), 0u) << v.latency_owner;
  m.server.latency = server_latency(5000, 512, 1024, 1900, 4096);  // the store's p99 1.9 ms
  EXPECT_EQ(judge_step(options(), m).latency_owner, "the store's execution");
  EXPECT_FALSE(judge_step(options(), step(1000, 1000, 500)).latency_us) << "passed: none";
  // Most of it kvdrive's (but not enough to meet the bound without it): the client's floor.
  auto c = step(1000, 1000, 3000);
  split_all(c, 1500, 1200, 300);  // 60 % kvdrive's; without it 1.2 ms, still above 1 ms
  EXPECT_EQ(judge_step(options(), c).verdict, Verdict::fail);
  EXPECT_EQ(judge_step(options(), c).latency_owner.rfind("kvdrive (client send + recv 60 %", 0), 0u)
      << judge_step(options(), c).latency_owner;
}

}  // namespace
}  // namespace kv::drive
