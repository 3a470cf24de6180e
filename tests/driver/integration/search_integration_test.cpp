// `kvdrive run --search` against real redis-servers made small: one whose only path to kvdrive
// is a loopback held to 48 Mbit/s by a token bucket (tc tbf) in a network namespace the test
// makes, so it saturates at ~1,340 4 KiB requests/s on any machine: the search finds a knee
// that fixed-rate steps confirm (0.8x passes, 1.25x fails, as the tool itself judges them); one
// held to 2 % of a core by a CPU cgroup (v1 or v2): a client thread starved of CPU is reported
// client-bound; a step fails on the store's CPU seen in kvmon's samples, and on its cgroup's CPU
// quota; a memory cgroup's page cache reclaimed is recorded, not distress. Needs root for the
// namespace and the cgroups; skips elsewhere, fails in CI (KV_REQUIRE_SERVERS=1). The search's
// steps against a plain redis-server: search_steps_test.cpp.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cpu_cgroup.hpp"
#include "kvdrive_test_util.hpp"
#include "netns.hpp"
#include "nice_boost.hpp"

namespace kv::test {
namespace {

// The workload the searches here run: 4 KiB values (what each request costs the link or the
// store), mixed, on 16 connections: a store held by a CPU quota finds many requests waiting
// each time it gets a CPU, so its limit is its quota, not how long a loaded machine takes to
// wake it (with 2 connections the knee moved from 1,200 to 750 req/s within one test at load
// average 20).
// The objective is p90, not p99: on a loaded machine a 200 ms stall of kvdrive or the store
// (seen at load average 17) moves a step's p99 but not its p90, while past the knee the queue
// grows through the whole step and every percentile above the median goes with it.
std::vector<std::string> search_args(const std::string& db, const std::string& uri,
                                     const std::string& slo = "p90=300ms") {
  return {"run",
          "--db",
          db,
          "--target",
          uri,
          "--keys",
          "1000",
          "--value-size",
          "4K",
          "--threads",
          "2",
          "--connections",
          "8",
          "--search",
          "--slo",
          slo,
          "--min-achieved",
          "0.9",
          "--duration",
          "2s",
          "--warmup",
          "1s"};
}

std::string verdict_at(const std::string& db, int64_t run, double rate) {
  Database d = Database::open(db);
  return query_text(d,
                    "SELECT verdict || ' ' || COALESCE(limit_reason, '') FROM search_steps "
                    "WHERE run_id = " +
                        std::to_string(run) +
                        " AND offered_rate = " + std::to_string(std::llround(rate)));
}

// kvmon on `db` watching `pid`, flushing every second.
Process start_kvmon(const TempDir& dir, const std::string& db, pid_t pid) {
  return Process({std::string(KV_BINARY_DIR) + "/monitor/kvmon", "--db", db, "--pid",
                  std::to_string(pid), "--flush-interval", "1s"},
                 dir.file("kvmon.log"));
}

// SQL for wait_for_value: kvmon has a sample of the store with `column` set.
std::string sample_with(const std::string& column) {
  return "SELECT count(*) FROM process_samples WHERE " + column + " IS NOT NULL";
}

// The knee test's store: 4 KiB values (above) through a loopback that passes 48 Mbit/s, 6 MB/s:
// every request moves at least its 4,096 value bytes, so no more than 1,464 requests/s get
// through, whatever the machine's CPUs do. (Its first form held Redis to 2 % of a core with a
// CPU quota instead; that store's capacity drifted by a third within one test, 1,500 req/s in
// the search and 1,043 at 1,200 offered in the check that followed, and failed CI: a quota-held
// store's cost per request depends on how many requests each of its periods finds waiting, see
// docs/capacity-search.md. A token bucket is a clock, not a share of a CPU.)
constexpr double kLinkBytesPerSecond = 48e6 / 8;
constexpr double kMostRequestsPerSecond = kLinkBytesPerSecond / 4096;

TEST(KvdriveSearch, FindsAKneeThatFixedRateStepsConfirm) {
  TempDir dir;
  NetNamespace ns;
  std::string why;
  const std::string redis_bin = find_program("redis-server"), tc = find_program("tc");
  if (redis_bin.empty()) {
    why = "redis-server is not installed";
  } else if (tc.empty()) {
    why = "the tc command (iproute2) is missing";
  } else if (ns.create(dir, "kvbench-knee", 1500, &why) &&
             ns.run_inside({tc, "qdisc", "add", "dev", "lo", "root", "tbf", "rate", "48mbit",
                            "burst", "32kb", "latency", "500ms"}) != 0) {
    why = "tc cannot put a token bucket (tbf) on the namespace's loopback (see " + ns.log() + ")";
  }
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  NiceBoost boost(-10);  // the store and kvdrive, started below
  Process redis(ns.inside({redis_bin, "--port", "6379", "--bind", "127.0.0.1", "--save", "",
                           "--appendonly", "no", "--dir", dir.path()}),
                dir.file("redis.log"));
  ASSERT_TRUE(ns.accepts_within(6379, 15'000)) << slurp(dir.file("redis.log"));
  const std::string uri = "redis://127.0.0.1:6379";
  const std::string db = dir.file("search.db");
  auto kvdrive = [&](const std::vector<std::string>& args) {
    return run_kvdrive(dir, args, 300'000, ns.inside({}));
  };

  // The objective: p90 <= 50 ms. Below the bucket's rate a request waits a few ms at most (at
  // 1,000 req/s the p90 was 0.1-1.1 ms with both CPUs busy spinning beside it); past it the
  // queue grows through the whole step (at 1,375 offered, 2 % over, the p90 was 65-69 ms; at
  // 1,562, 400 ms), and the step fails on the achieved rate too (--min-achieved 0.9).
  auto args = search_args(db, uri, "p90=50ms");
  args.insert(args.end(), {"--search-start", "500", "--search-precision", "0.1"});
  Outcome out = kvdrive(args);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("capacity search: " + uri), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("maximum compliant rate: "), std::string::npos) << out.output;
  Database d = Database::open(db);
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM search_results WHERE run_id = 1"), 1);
  ASSERT_EQ(query_int(d, "SELECT client_bound_rate IS NULL FROM search_results"), 1) << out.output;
  const double found = query_double(d, "SELECT max_compliant_rate FROM search_results");
  // No step got more through than the bucket passes, and the knee is near it: a step passes
  // with 90 % of its offered rate achieved, and at half the bucket's rate nothing queues.
  EXPECT_LE(query_double(d, "SELECT max(achieved_rate) FROM search_steps"), kMostRequestsPerSecond)
      << out.output;
  EXPECT_LE(found, kMostRequestsPerSecond / 0.9) << out.output;
  EXPECT_GE(found, kMostRequestsPerSecond / 2) << out.output;
  // Every step is a rate-mode phase with its row; the curve view lists them by offered rate.
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_steps"),
            query_int(d, "SELECT count(*) FROM phases WHERE kind = 'mixed'"));
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_curve WHERE is_max_compliant"), 1);
  EXPECT_GE(query_int(d, "SELECT count(*) FROM search_steps WHERE verdict = 'fail'"), 1);

  // The second method: fixed rates around the knee, judged by the tool the same way.
  const double lower = std::round(found * 0.8), upper = std::round(found * 1.25);
  auto fixed = search_args(db, uri, "p90=50ms");
  fixed.insert(fixed.end(), {"--rates", std::to_string(std::llround(lower)) + "," +
                                            std::to_string(std::llround(upper))});
  Outcome check = kvdrive(fixed);
  ASSERT_EQ(check.exit_code, 0) << check.output;
  const int64_t run = query_int(d, "SELECT max(run_id) FROM runs");
  EXPECT_EQ(run, 2);
  EXPECT_EQ(verdict_at(db, run, lower), "pass ") << "at 0.8 x " << found << "\n"
                                                 << out.output << check.output;
  const std::string above = verdict_at(db, run, upper);
  EXPECT_EQ(above.rfind("fail", 0), 0u) << "at 1.25 x " << found << ": " << above << "\n"
                                        << out.output << check.output;
}

// One kvdrive thread offered far more than it can send, itself held to 2 % of a core by a CPU
// cgroup: it is runnable far more than it runs (94 % of the time, 2 % on a CPU, on the dev VM),
// so the step is the client's limit, invalid, and the search says so instead of blaming the
// store.
TEST(KvdriveSearch, AStarvedClientThreadIsReportedClientBound) {
  std::string why;
  if (geteuid() != 0) why = "needs root (a CPU cgroup)";
  CpuCgroup cg(1000, 50'000, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("starved.db");
  Process kvdrive(cg.command({kKvdrive, "run", "--db", db, "--target", redis.uri(), "--keys",
                              "1000", "--threads", "1", "--search", "--slo", "p99=1s", "--rates",
                              "2000000", "--duration", "2s", "--warmup", "1s"}),
                  dir.file("kvdrive.log"));
  const int code = kvdrive.wait(120'000);
  const std::string output = slurp(dir.file("kvdrive.log"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("client-bound at 2,000,000 req/s"), std::string::npos) << output;
  EXPECT_NE(output.find("add threads or processes"), std::string::npos) << output;
  Database d = Database::open(db);
  EXPECT_EQ(query_text(d, "SELECT verdict FROM search_steps"), "invalid");
  EXPECT_EQ(query_double(d, "SELECT client_bound_rate FROM search_results"), 2'000'000);
  // Held to 2 % of a core, its worker waited for a CPU most of each second, and the step says so.
  EXPECT_GE(query_int(d, "SELECT run_delay_max_us FROM search_steps"), 100'000);
  EXPECT_NE(output.find("cpu wait ms/s"), std::string::npos) << output;
}

// kvmon on the same file watches the store: each step is judged with the samples in its
// window. A store-CPU limit set below what 2,000 req/s cost makes the step fail on it.
TEST(KvdriveSearch, AStepFailsOnTheStoresCpuFromKvmonsSamples) {
  NiceBoost boost(-10);
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("distress.db");
  Process kvmon = start_kvmon(dir, db, redis.pid());
  ASSERT_TRUE(wait_for_value(db, "SELECT count(*) FROM process_samples"))
      << slurp(dir.file("kvmon.log"));
  Outcome out =
      run_kvdrive(dir,
                  {"run", "--db", db, "--target", redis.uri(), "--keys", "1000", "--threads", "2",
                   "--search", "--slo", "p90=1s", "--min-achieved", "0.5", "--rates", "2000",
                   "--duration", "3s", "--warmup", "1s", "--distress", "store-cpu=0.001",
                   // the client's limits off: this test is about the store's side
                   "--max-client-cpu", "1", "--max-slip", "1h"},
                  120'000);
  kvmon.stop();
  ASSERT_EQ(out.exit_code, 0) << out.output;
  Database d = Database::open(db);
  EXPECT_EQ(query_text(d, "SELECT verdict || ' ' || limit_reason FROM search_steps"),
            "fail server: store CPU")
      << out.output;
  EXPECT_GT(query_double(d, "SELECT store_cpu_pct FROM search_steps"), 0.1);
  EXPECT_NE(out.output.find("server: store CPU"), std::string::npos) << out.output;
}

// The store in a CPU cgroup of 10 % of a core, kvmon watching it: a step the quota serves
// easily (500 req/s of 4 KiB: a twentieth of what the quota serves) passes unthrottled, a step
// far above it is throttled and fails on the quota, named as the cause, while the store's CPU
// seen per process (10 % of a core) is far from the store-cpu limit. The objective is loose so
// that nothing but the cgroup can fail a step. (With 20 % of a core at load average 19 the
// store got less CPU than its quota, not throttled: then the quota is rightly not the cause.)
TEST(KvdriveSearch, ACpuQuotaThatThrottlesTheStoreIsNamedAsTheCause) {
  std::string why;
  if (geteuid() != 0) why = "needs root (a CPU cgroup)";
  CpuCgroup cg(5'000, 50'000, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  NiceBoost boost(-10);
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  ASSERT_TRUE(cg.add(redis.pid()));  // before kvmon starts: it finds the cgroup once
  TempDir dir;
  const std::string db = dir.file("throttled.db");
  Process kvmon = start_kvmon(dir, db, redis.pid());
  ASSERT_TRUE(wait_for_value(db, sample_with("cg_cpu_nr_periods"))) << slurp(dir.file("kvmon.log"));
  auto args = search_args(db, redis.uri(), "p90=1h");
  *(std::find(args.begin(), args.end(), "--min-achieved") + 1) = "0";
  args.insert(args.end(), {"--rates", "500,20000", "--max-error-rate", "1", "--max-client-cpu", "1",
                           "--max-slip", "1h"});
  Outcome out = run_kvdrive(dir, args, 120'000);
  kvmon.stop();
  ASSERT_EQ(out.exit_code, 0) << out.output;
  Database d = Database::open(db);
  EXPECT_EQ(verdict_at(db, 1, 500), "pass ") << out.output;
  EXPECT_LT(query_double(d, "SELECT cg_cpu_throttled_pct FROM search_steps WHERE ordinal = 0"), 10)
      << out.output;
  EXPECT_EQ(verdict_at(db, 1, 20000), "fail server: cgroup CPU quota") << out.output;
  // 45 % of periods and 37 ms/s on the dev VM (the store waits on its sockets part of a period).
  EXPECT_GT(query_double(d, "SELECT cg_cpu_throttled_pct FROM search_steps WHERE ordinal = 1"), 10)
      << out.output;
  EXPECT_GT(query_double(d, "SELECT cg_cpu_throttled_ms_per_s FROM search_steps WHERE ordinal = 1"),
            0)
      << out.output;
  EXPECT_LT(query_double(d, "SELECT store_cpu_pct FROM search_steps WHERE ordinal = 1"), 50)
      << out.output;
  EXPECT_NE(out.output.find("server: cgroup CPU quota throttled in "), std::string::npos)
      << out.output;
  // kvmon read the quota (v1 cpu.cfs_quota_us / v2 cpu.max) that the store-CPU rule takes.
  EXPECT_EQ(query_int(d, "SELECT MIN(cg_cpu_quota_us) FROM process_samples"), 5'000);
  EXPECT_EQ(query_int(d, "SELECT MAX(cg_cpu_period_us) FROM process_samples"), 50'000);
}

// Removes a cgroup directory on destruction, once the processes in it have exited (declare it
// before them); nothing when the path is empty.
struct CgroupDir {
  std::string path;
  ~CgroupDir() {
    if (path.empty()) return;
    for (int i = 0; i < 50 && ::rmdir(path.c_str()) != 0; ++i) ::usleep(100'000);
  }
};

// The store in a v1 memory cgroup of 64 MiB writing its AOF (appendfsync everysec, no
// rewrite): each set's bytes reach the page cache charged to the cgroup, which is at its limit
// from about the end of the first step and reclaims there (memory.failcnt grows; the store's
// own memory stays far below the limit, so no OOM: at 32 MiB it was OOM-killed once in five
// runs, its anon at 34 MiB). That is page cache being reclaimed, not the store's memory at its
// limit: kvmon's samples record the events in the second step, and they do not fail it (anon +
// shmem is far below kAnonNearMemoryMax of the limit; near it the rule fires: SearchVerdict.*).
// There is no swap on the dev VM (nor in CI): the swap-in rule is tested on synthetic
// steps only (SearchVerdict.*). The store's cgroup memory PSI (v2 memory.pressure beside v1)
// rose in this reclaim (full avg10 2-8 % by hand, host full 0.00) but not within every 4 s step
// (its 10 s average is updated every 2 s): the cgroup-psi-full rule is tested on synthetic
// steps too.
TEST(KvdriveSearch, TheStoresCgroupFullOfPageCacheIsRecordedNotDistress) {
  namespace fs = std::filesystem;
  std::string why;
  if (geteuid() != 0) why = "needs root (a memory cgroup)";
  const std::string v1 = "/sys/fs/cgroup/memory/kvbench-search-mem-" + std::to_string(::getpid());
  if (why.empty() && !fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    why = "no cgroup v1 memory controller at /sys/fs/cgroup/memory";
  std::error_code ec;
  CgroupDir v1_dir;
  if (why.empty()) {
    if (fs::create_directory(v1, ec)) v1_dir.path = v1;
    if (v1_dir.path.empty() ||
        !write_cgroup_file(v1 + "/memory.limit_in_bytes", std::to_string(64 << 20)))
      why = "cannot make the memory cgroup " + v1;
  }
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  NiceBoost boost(-10);  // kvdrive: at load average 19 its thread waited for a CPU (invalid)
  TempDir dir;
  StoreServer redis(StoreServer::Kind::redis,
                    {"--appendonly", "yes", "--appendfsync", "everysec",
                     "--auto-aof-rewrite-percentage", "0", "--dir", dir.path()});
  KV_START_OR_SKIP(redis);
  ASSERT_TRUE(write_cgroup_file(v1 + "/cgroup.procs", std::to_string(redis.pid())));
  const std::string db = dir.file("memory.db");
  Process kvmon = start_kvmon(dir, db, redis.pid());
  ASSERT_TRUE(wait_for_value(db, sample_with("cg_failcnt"))) << slurp(dir.file("kvmon.log"));
  // 1,500 sets/s of 16 KiB: 24 MiB/s into the AOF.
  Outcome out = run_kvdrive(dir,
                            {"run",
                             "--db",
                             db,
                             "--target",
                             redis.uri(),
                             "--keys",
                             "200",
                             "--value-size",
                             "16K",
                             "--ratio",
                             "1:1",
                             "--threads",
                             "2",
                             "--connections",
                             "4",
                             "--search",
                             "--slo",
                             "p90=1h",
                             "--min-achieved",
                             "0",
                             "--max-error-rate",
                             "1",
                             "--rates",
                             "3000,3000",
                             "--duration",
                             "3s",
                             "--warmup",
                             "1s",
                             "--max-client-cpu",
                             "1",
                             "--max-slip",
                             "1h"},
                            120'000);
  kvmon.stop();
  ASSERT_EQ(out.exit_code, 0) << out.output;
  Database d = Database::open(db);
  EXPECT_GT(query_double(d, "SELECT cg_memory_max_events FROM search_steps WHERE ordinal = 1"), 0)
      << out.output;
  EXPECT_EQ(query_int(d,
                      "SELECT count(*) FROM search_steps WHERE limit_reason = 'server: cgroup "
                      "memory.max' OR detail LIKE '%cgroup memory.max%'"),
            0)
      << out.output;
  EXPECT_EQ(query_double(d, "SELECT MAX(cg_oom_events) FROM search_steps"), 0) << out.output;
  EXPECT_EQ(out.output.find("server: cgroup memory.max "), std::string::npos) << out.output;
}

}  // namespace
}  // namespace kv::test
