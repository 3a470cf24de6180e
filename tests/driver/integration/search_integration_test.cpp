// `kvdrive run --search` against a real redis-server held to 2 % of a core by a CPU cgroup
// (v1 or v2), so it saturates at a few thousand requests/s on any machine: the search finds a
// knee that fixed-rate steps confirm (0.8x passes, 1.25x fails, as the tool itself judges
// them); a client thread starved of CPU is reported client-bound; a step fails on the store's
// CPU seen in kvmon's samples; bad search
// options are one line and exit 2. Needs root for the cgroup; skips elsewhere, fails in CI
// (KV_REQUIRE_SERVERS=1).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "kvdrive_test_util.hpp"

namespace kv::test {
namespace {

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return static_cast<bool>(f);
}

// A CPU cgroup limited to quota/period of one core, removed on destruction (declare it before
// the processes it holds, so they are gone first).
class CpuCgroup {
 public:
  CpuCgroup(int64_t quota_us, int64_t period_us, std::string* why) {
    const std::string name = "kvbench-search-" + std::to_string(::getpid());
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists("/sys/fs/cgroup/cpu/cgroup.procs", ec)) {  // v1
      dir_ = "/sys/fs/cgroup/cpu/" + name;
      fs::create_directory(dir_, ec);
      if (!ec && write_file(dir_ + "/cpu.cfs_period_us", std::to_string(period_us)) &&
          write_file(dir_ + "/cpu.cfs_quota_us", std::to_string(quota_us)))
        return;
    } else if (fs::exists("/sys/fs/cgroup/cgroup.controllers", ec)) {  // v2
      write_file("/sys/fs/cgroup/cgroup.subtree_control", "+cpu");
      dir_ = "/sys/fs/cgroup/" + name;
      fs::create_directory(dir_, ec);
      if (!ec &&
          write_file(dir_ + "/cpu.max", std::to_string(quota_us) + " " + std::to_string(period_us)))
        return;
    }
    *why = "no CPU cgroup can be made (needs root and a cgroup v1 cpu or v2 cpu controller)";
    dir_.clear();
  }
  ~CpuCgroup() {
    if (dir_.empty()) return;
    // Empty once its processes have exited (a store stopped by its own destructor first).
    for (int i = 0; i < 50 && ::rmdir(dir_.c_str()) != 0; ++i) ::usleep(100'000);
  }
  bool ok() const { return !dir_.empty(); }
  bool add(pid_t pid) { return write_file(procs_file(), std::to_string(pid)); }
  std::string procs_file() const { return dir_ + "/cgroup.procs"; }

 private:
  std::string dir_;
};

// Raises this process's priority (nice) for its lifetime; processes started meanwhile inherit
// it. On a loaded machine (load average 20 on the 2-core dev VM: eight engineers building) a
// store at nice 0 waits tens of ms for a CPU at every wake-up, so its knee followed the load
// (2,000 -> 1,400 req/s within one test); at nice -10 it runs when woken and its knee is its
// CPU quota. Needs root; without it the priority stays.
class NiceBoost {
 public:
  explicit NiceBoost(int nice) : old_(getpriority(PRIO_PROCESS, 0)) {
    setpriority(PRIO_PROCESS, 0, nice);
  }
  ~NiceBoost() { setpriority(PRIO_PROCESS, 0, old_); }
  NiceBoost(const NiceBoost&) = delete;
  NiceBoost& operator=(const NiceBoost&) = delete;

 private:
  int old_;
};

// The workload every search here runs: 4 KiB values (the store's cost per request), mixed, on
// 16 connections: each time the store gets a CPU it finds many requests to serve, so its knee
// is its CPU quota, not how long a loaded machine takes to wake it (with 2 connections the
// knee moved from 1,200 to 750 req/s within one test at load average 20).
// The objective is p90, not p99: on a loaded machine a 200 ms stall of kvdrive or the store
// (seen at load average 17) moves a step's p99 but not its p90, while past the knee the queue
// grows through the whole step and every percentile above the median goes with it.
std::vector<std::string> search_args(const std::string& db, const std::string& uri) {
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
          "p90=300ms",
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

TEST(KvdriveSearch, FindsAKneeThatFixedRateStepsConfirm) {
  std::string why;
  if (geteuid() != 0) why = "needs root (a CPU cgroup)";
  CpuCgroup cg(1000, 50'000, &why);  // 2 % of a core
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  NiceBoost boost(-10);  // the store and kvdrive, started below
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  ASSERT_TRUE(cg.add(redis.pid()));
  TempDir dir;
  const std::string db = dir.file("search.db");

  auto args = search_args(db, redis.uri());
  args.insert(args.end(), {"--search-start", "500", "--search-precision", "0.1"});
  Outcome out = run_kvdrive(dir, args, 300'000);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("capacity search: " + redis.uri()), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("maximum compliant rate: "), std::string::npos) << out.output;
  Database d = Database::open(db);
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM search_results WHERE run_id = 1"), 1);
  ASSERT_EQ(query_int(d, "SELECT client_bound_rate IS NULL FROM search_results"), 1) << out.output;
  const double found = query_double(d, "SELECT max_compliant_rate FROM search_results");
  // 2 % of a core serves about a thousand 4 KiB requests/s, never 100,000.
  EXPECT_GT(found, 100) << out.output;
  EXPECT_LT(found, 100'000) << out.output;
  // Every step is a rate-mode phase with its row; the curve view lists them by offered rate.
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_steps"),
            query_int(d, "SELECT count(*) FROM phases WHERE kind = 'mixed'"));
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_curve WHERE is_max_compliant"), 1);
  EXPECT_GE(query_int(d, "SELECT count(*) FROM search_steps WHERE verdict = 'fail'"), 1);

  // The second method: fixed rates around the knee, judged by the tool the same way. A loaded
  // machine (eight builds on two cores) can disturb one step near the knee: one retry.
  const double lower = std::round(found * 0.8), upper = std::round(found * 1.25);
  std::string below, above, checks;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto fixed = search_args(db, redis.uri());
    fixed.insert(fixed.end(), {"--rates", std::to_string(std::llround(lower)) + "," +
                                              std::to_string(std::llround(upper))});
    Outcome check = run_kvdrive(dir, fixed, 120'000);
    ASSERT_EQ(check.exit_code, 0) << check.output;
    checks += check.output.substr(check.output.find("capacity search"));
    const int64_t run = query_int(d, "SELECT max(run_id) FROM runs");
    below = verdict_at(db, run, lower);
    above = verdict_at(db, run, upper);
    if (below == "pass " && above.rfind("fail", 0) == 0) break;
  }
  EXPECT_EQ(below, "pass ") << "at 0.8 x " << found << "\n" << out.output << checks;
  EXPECT_EQ(above.rfind("fail", 0), 0u) << "at 1.25 x " << found << ": " << above << "\n"
                                        << out.output << checks;
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
  // The shell joins the cgroup, then becomes kvdrive: every thread of it is born inside.
  Process kvdrive({"/bin/sh",       "-c",         "echo $$ > \"$0\" && exec \"$@\"",
                   cg.procs_file(), kKvdrive,     "run",
                   "--db",          db,           "--target",
                   redis.uri(),     "--keys",     "1000",
                   "--threads",     "1",          "--search",
                   "--slo",         "p99=1s",     "--rates",
                   "2000000",       "--duration", "2s",
                   "--warmup",      "1s"},
                  dir.file("kvdrive.log"));
  const int code = kvdrive.wait(120'000);
  const std::string output = slurp(dir.file("kvdrive.log"));
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("client-bound at 2,000,000 req/s"), std::string::npos) << output;
  EXPECT_NE(output.find("add threads or processes"), std::string::npos) << output;
  Database d = Database::open(db);
  EXPECT_EQ(query_text(d, "SELECT verdict FROM search_steps"), "invalid");
  EXPECT_EQ(query_double(d, "SELECT client_bound_rate FROM search_results"), 2'000'000);
}

// kvmon on the same file watches the store: each step is judged with the samples in its
// window. A store-CPU limit set below what 2,000 req/s cost makes the step fail on it.
TEST(KvdriveSearch, AStepFailsOnTheStoresCpuFromKvmonsSamples) {
  NiceBoost boost(-10);
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("distress.db");
  Process kvmon({std::string(KV_BINARY_DIR) + "/monitor/kvmon", "--db", db, "--pid",
                 std::to_string(redis.pid()), "--flush-interval", "1s"},
                dir.file("kvmon.log"));
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

TEST(KvdriveSearch, BadSearchOptionsAreOneLineAndExit2WithNothingWritten) {
  TempDir dir;
  const std::string db = dir.file("bad.db");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slo", "p99=1ms"}, "--slo needs --search"},
      {{"--search"}, "--search needs an objective"},
      {{"--search", "--slo", "p99=soon"}, "invalid --slo 'p99=soon'"},
      {{"--search", "--slo", "p99=1ms", "--rate", "100"}, "drop --rate"},
      {{"--search", "--rates", "1000,zero"}, "invalid --rates 'zero'"},
      {{"--search", "--slo", "p99=1ms", "--min-achieved", "2"}, "invalid --min-achieved '2'"},
      {{"--search", "--slo", "p99=1ms", "--distress", "heat=1"}, "invalid --distress 'heat=1'"},
      {{"--search", "--slo", "p99=1ms", "--phases", "load"}, "must be read or mixed"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"run", "--db", db, "--target", "redis://127.0.0.1:1"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome out = run_kvdrive(dir, args);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find(message), std::string::npos) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
    EXPECT_FALSE(std::filesystem::exists(db)) << message;
  }
}

}  // namespace
}  // namespace kv::test
