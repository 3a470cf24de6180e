// The real kernel's cgroups under the real kvmon: a redis-server in a v1 memory cgroup the test
// creates (and a cgroup2 child beside it, for the per-cgroup pressure files), kvmon's values
// against the files, then the cgroup filled until the limit is hit and the store is OOM-killed:
// the events carry times within one tick of the counters changing, and the exit says why.
// Needs root and cgroup v1's memory controller (this machine and CI); a cgroup2 hierarchy is
// used where mounted, else mounted for the test at a temporary directory and unmounted after.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <thread>

#include "cgroup.hpp"
#include "db_query.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

namespace fs = std::filesystem;
using kv::test::Process;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;
using kv::test::write_file;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";
constexpr int64_t kLimit = 48ll << 20;
constexpr int64_t kIntervalUs = 200'000;

int64_t int_file(const std::string& path) { return std::stoll(slurp(path)); }

// A directory created for the test and removed after (waiting for its tasks to be gone).
struct CgroupDir {
  std::string path;
  bool create(const std::string& p) {
    std::error_code ec;
    if (!fs::create_directory(p, ec)) return false;
    path = p;
    return true;
  }
  ~CgroupDir() {
    if (path.empty()) return;
    for (int i = 0; i < 50 && ::rmdir(path.c_str()) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
};

struct Mount2 {
  std::string dir;
  ~Mount2() {
    if (!dir.empty()) ::umount(dir.c_str());
  }
};

std::optional<int64_t> query_int(const std::string& db, const std::string& sql) {
  Database d = Database::open(db);
  Statement st = d.prepare(sql);
  if (!st.step()) return std::nullopt;
  return st.column_opt_int(0);
}
std::string query_text(const std::string& db, const std::string& sql) {
  Database d = Database::open(db);
  Statement st = d.prepare(sql);
  return st.step() ? st.column_text(0) : std::string();
}

bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

TEST(CgroupKernel, V1MemoryCgroupValuesEventsAndTheOomKillOfTheStore) {
  std::string why;
  if (geteuid() != 0) why = "needs root (creates cgroups)";
  if (why.empty() && !fs::exists("/sys/fs/cgroup/memory/memory.limit_in_bytes")) {
    why = "no cgroup v1 memory controller at /sys/fs/cgroup/memory";
  }
  if (!why.empty()) {
    if (kv::test::servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  TempDir dir;
  const std::string name = "kvbench-cg-" + std::to_string(getpid());
  CgroupDir mem;
  ASSERT_TRUE(mem.create("/sys/fs/cgroup/memory/" + name));
  ASSERT_TRUE(write_file(mem.path + "/memory.limit_in_bytes", std::to_string(kLimit)));
  // Little swap for it: the limit ends in an OOM kill, not in swapping. memory+swap is set a
  // little above memory, so memory.limit_in_bytes is hit first (memory.failcnt counts it).
  const bool memsw = fs::exists(mem.path + "/memory.memsw.limit_in_bytes");
  if (memsw) {
    ASSERT_TRUE(
        write_file(mem.path + "/memory.memsw.limit_in_bytes", std::to_string(kLimit + (16 << 20))));
  }
  write_file(mem.path + "/memory.swappiness", "0");

  // cgroup2 beside it: the one mounted, else one mounted here for the test
  Mount2 mount2;
  CgroupMounts mounts = parse_cgroup_mounts(slurp("/proc/self/mountinfo"));
  std::string v2_root;
  if (mounts.v2) {
    v2_root = mounts.v2->mount_point;
    std::cout << "[ kernel  ] cgroup2 already mounted at " << v2_root << "\n";
  } else {
    fs::create_directory(dir.file("cgroup2"));
    if (::mount("none", dir.file("cgroup2").c_str(), "cgroup2", 0, nullptr) == 0) {
      mount2.dir = v2_root = dir.file("cgroup2");
      std::cout << "[ kernel  ] cgroup2 mounted for the test at " << v2_root << "\n";
    } else {
      std::cout << "[ kernel  ] no cgroup2: mount failed (" << std::strerror(errno) << ")\n";
    }
  }
  CgroupDir v2;
  if (!v2_root.empty()) {
    ASSERT_TRUE(v2.create(v2_root + "/" + name));
  }

  StoreServer redis(StoreServer::Kind::redis, {"--enable-debug-command", "local"});
  KV_START_OR_SKIP(redis);
  const pid_t pid = redis.pid();
  ASSERT_TRUE(write_file(mem.path + "/cgroup.procs", std::to_string(pid)));
  if (!v2.path.empty()) {
    ASSERT_TRUE(write_file(v2.path + "/cgroup.procs", std::to_string(pid)));
  }

  // Its pages so far stay charged to its old cgroup (v1): 4 MB written now are charged here.
  const std::string value(4'000'000, 'v');
  ASSERT_EQ(kv::test::tcp_request(redis.port(),
                                  "*3\r\n$3\r\nSET\r\n$1\r\nv\r\n$" + std::to_string(value.size()) +
                                      "\r\n" + value + "\r\n",
                                  "\r\n"),
            "+OK\r\n");
  const std::string db = dir.file("results.db");
  Process kvmon({kKvmon, "--db", db, "--pid", std::to_string(pid), "--interval", "200ms",
                 "--flush-interval", "200ms", "--log-level", "debug"},
                dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3;
        } catch (const SqliteError&) {
          return false;
        }
      },
      20'000))
      << slurp(dir.file("kvmon.log"));

  // ---- the values of an idle store against the files
  const std::string last = "SELECT %s FROM process_samples ORDER BY ts_us DESC LIMIT 1";
  auto col = [&](const std::string& c) {
    std::string sql = last;
    sql.replace(sql.find("%s"), 2, c);
    return query_int(db, sql);
  };
  EXPECT_EQ(col("cg_memory_max_bytes"), kLimit);
  EXPECT_EQ(col("cg_memory_max_bytes"), int_file(mem.path + "/memory.limit_in_bytes"));
  if (memsw) {
    EXPECT_EQ(col("cg_memsw_max_bytes"), int_file(mem.path + "/memory.memsw.limit_in_bytes"));
    EXPECT_TRUE(col("cg_memsw_bytes").has_value());
  }
  EXPECT_EQ(col("cg_failcnt"), int_file(mem.path + "/memory.failcnt"));
  EXPECT_EQ(col("cg_events_oom_kill"), 0);
  EXPECT_EQ(col("cg_under_oom"), 0);
  const int64_t usage = int_file(mem.path + "/memory.usage_in_bytes");
  EXPECT_NEAR(static_cast<double>(col("cg_memory_bytes").value_or(-1)), static_cast<double>(usage),
              1 << 20);  // an idle store: within 1 MiB
  EXPECT_GT(col("cg_anon_bytes").value_or(0), 3'000'000);
  const std::string stat = slurp(mem.path + "/memory.stat");
  EXPECT_NEAR(static_cast<double>(col("cg_anon_bytes").value_or(-1)),
              static_cast<double>(keyed_value(stat, "total_rss").value_or(-1)), 1 << 20);
  EXPECT_TRUE(col("cg_cpu_usage_us").has_value());
  EXPECT_FALSE(col("cg_memory_high_bytes").has_value());  // v2 only: NULL, not 0
  if (!v2.path.empty()) {
    std::cout << "[ kernel  ] exercised for real: v1 memory.* and cpu/cpuacct files, v2 "
                 "memory/io/cpu.pressure of "
              << v2.path << "\n";
    EXPECT_TRUE(col("cg_psi_memory_some_avg10").has_value());
    EXPECT_TRUE(col("cg_psi_io_some_avg10").has_value());
    EXPECT_TRUE(col("cg_psi_cpu_some_avg10").has_value());
  }
  const std::string found =
      query_text(db, "SELECT message FROM events WHERE kind = 'cgroup_found'");
  EXPECT_NE(found.find(mem.path), std::string::npos) << found;

  // ---- grow it past half its limit first, in steps read off the cgroup's own usage, and wait
  // until kvmon has sampled that: on an idle machine the fill to the OOM kill below takes less
  // than one tick, so kvmon may never see the store at its peak there (CI saw 4 MiB as the max).
  for (int chunk = 0; int_file(mem.path + "/memory.usage_in_bytes") < kLimit * 6 / 10; ++chunk) {
    ASSERT_LT(chunk, 60) << "usage " << int_file(mem.path + "/memory.usage_in_bytes");
    ASSERT_EQ(kv::test::tcp_request(redis.port(),
                                    "DEBUG POPULATE 20000 pre" + std::to_string(chunk) + " 64\r\n",
                                    "\r\n", 60'000),
              "+OK\r\n");
  }
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT MAX(cg_memory_bytes) FROM process_samples").value_or(0) >
               kLimit / 2;
      },
      10'000))
      << slurp(dir.file("kvmon.log"));

  // ---- fill it until the limit is hit and the store is OOM-killed; watch the counters
  const int64_t failcnt0 = int_file(mem.path + "/memory.failcnt");
  std::atomic<int64_t> failcnt_seen_us{0}, oom_seen_us{0};
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop) {
      int64_t now = now_ts_us();
      if (!failcnt_seen_us && int_file(mem.path + "/memory.failcnt") > failcnt0) {
        failcnt_seen_us = now;
      }
      if (!oom_seen_us &&
          slurp(mem.path + "/memory.oom_control").find("oom_kill 0") == std::string::npos) {
        oom_seen_us = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  try {
    kv::test::tcp_request(redis.port(), "DEBUG POPULATE 3000000 key 64\r\n", "\r\n", 60'000);
  } catch (const std::exception&) {
    // the connection ends with the kill
  }
  const int status = redis.process().wait(30'000);
  ASSERT_TRUE(wait_until([&] { return oom_seen_us != 0; }, 5000));
  stop = true;
  watcher.join();
  EXPECT_EQ(status, 128 + SIGKILL);
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'target_exited'")
                   .value_or(0) == 1;
      },
      10'000))
      << slurp(dir.file("kvmon.log"));
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(30'000), 0);

  const std::string log = slurp(dir.file("kvmon.log"));
  // Each event within one tick of the counter's change as the test saw it (polling every 2 ms),
  // with 300 ms slack for a loaded machine.
  auto event_ts = [&](const char* kind) {
    return query_int(db, std::string("SELECT MIN(ts_us) FROM events WHERE kind = '") + kind + "'");
  };
  auto failcnt_ev = event_ts("cgroup_failcnt");
  auto oom_ev = event_ts("cgroup_oom_kill");
  ASSERT_TRUE(failcnt_ev) << log;
  ASSERT_TRUE(oom_ev) << log;
  constexpr int64_t kSlackUs = 300'000;
  EXPECT_LE(std::abs(*failcnt_ev - failcnt_seen_us.load()), kIntervalUs + kSlackUs)
      << "event " << *failcnt_ev << " seen " << failcnt_seen_us.load();
  EXPECT_LE(std::abs(*oom_ev - oom_seen_us.load()), kIntervalUs + kSlackUs)
      << "event " << *oom_ev << " seen " << oom_seen_us.load();
  const std::string exited =
      query_text(db, "SELECT message FROM events WHERE kind = 'target_exited'");
  EXPECT_NE(exited.find("killed by the OOM killer"), std::string::npos) << exited;
  EXPECT_GT(query_int(db, "SELECT MAX(cg_memory_bytes) FROM process_samples").value_or(0),
            kLimit / 2);
}

}  // namespace
}  // namespace kv::mon

namespace kv::mon {
namespace {

// Twice as many busy threads as cores, in this test's process, until destroyed: the host's CPU
// stalls (tasks wait for a core) while they run.
class CpuHogs {
 public:
  CpuHogs() {
    const unsigned n = std::max(2u, std::thread::hardware_concurrency()) * 2;
    for (unsigned i = 0; i < n; ++i) {
      threads_.emplace_back([this] {
        volatile uint64_t x = 0;
        while (!stop_.load(std::memory_order_relaxed)) x = x + 1;
      });
    }
  }
  ~CpuHogs() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// --psi-trigger for real (#20): a cpu "some" trigger on /proc/pressure/cpu fires while more busy
// threads than cores run, and kvmon writes a psi_trigger event for it. Needs root (the trigger
// is a write; a 2 s window: this machine's root lacks CAP_SYS_RESOURCE) and a kernel with PSI.
TEST(PsiTriggerKernel, ACpuStallFiresTheTriggerAndIsAnEvent) {
  std::string why;
  if (geteuid() != 0) why = "needs root (a PSI trigger is a write to /proc/pressure)";
  if (why.empty() && !fs::exists("/proc/pressure/cpu")) why = "no /proc/pressure (kernel PSI off)";
  if (!why.empty()) {
    if (kv::test::servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  TempDir dir;
  const std::string db = dir.file("results.db");
  Process kvmon(
      {kKvmon, "--db", db, "--pid", std::to_string(getpid()), "--interval", "200ms",
       "--flush-interval", "200ms", "--psi-trigger", "cpu:some:20ms/2s", "--log-level", "debug"},
      dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("PSI trigger set") != std::string::npos; },
      20'000))
      << slurp(dir.file("kvmon.log"));
  auto hogs = std::make_unique<CpuHogs>();
  const bool fired = wait_until(
      [&] {
        try {
          return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'psi_trigger'")
                     .value_or(0) > 0;
        } catch (const SqliteError&) {
          return false;
        }
      },
      30'000);
  hogs.reset();
  ASSERT_TRUE(fired) << slurp(dir.file("kvmon.log"));
  EXPECT_NE(query_text(db, "SELECT message FROM events WHERE kind = 'psi_trigger' LIMIT 1")
                .find("cpu some >= 20 ms within 2 s (PSI trigger on /proc/pressure/cpu)"),
            std::string::npos);
  std::cout << "[ kernel  ] exercised for real: a PSI trigger on /proc/pressure/cpu\n";
}

// --psi-trigger cgroup:... for real (#20): a trigger on the target's own cgroup v2 cpu.pressure.
// The host's CPU stalling while the target's cgroup is idle fires nothing; busy processes in the
// target's cgroup fire it, as a cgroup_psi_trigger event of the target. cgroup2 is used where
// mounted, else mounted here (cpu.pressure exists in every v2 cgroup, whatever the controllers).
TEST(PsiTriggerKernel, ACgroupTriggerFiresOnStallsInTheTargetsCgroupOnly) {
  std::string why;
  if (geteuid() != 0) why = "needs root (creates cgroups; a PSI trigger is a write)";
  if (why.empty() && !fs::exists("/proc/pressure/cpu")) why = "no /proc/pressure (kernel PSI off)";
  if (!why.empty()) {
    if (kv::test::servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  TempDir dir;
  Mount2 mount2;
  CgroupMounts mounts = parse_cgroup_mounts(slurp("/proc/self/mountinfo"));
  std::string v2_root;
  if (mounts.v2) {
    v2_root = mounts.v2->mount_point;
  } else {
    fs::create_directory(dir.file("cgroup2"));
    ASSERT_EQ(::mount("none", dir.file("cgroup2").c_str(), "cgroup2", 0, nullptr), 0)
        << "cannot mount cgroup2: " << std::strerror(errno);
    mount2.dir = v2_root = dir.file("cgroup2");
  }
  CgroupDir cg;
  ASSERT_TRUE(cg.create(v2_root + "/kvbench-psi-" + std::to_string(getpid())));
  ASSERT_TRUE(fs::exists(cg.path + "/cpu.pressure"));
  Process target({"/bin/sleep", "300"});
  ASSERT_TRUE(write_file(cg.path + "/cgroup.procs", std::to_string(target.pid())));

  const std::string db = dir.file("results.db");
  Process kvmon({kKvmon, "--db", db, "--pid", std::to_string(target.pid()), "--interval", "200ms",
                 "--flush-interval", "200ms", "--psi-trigger", "cgroup:cpu:some:100ms/2s",
                 "--log-level", "debug"},
                dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] {
        return slurp(dir.file("kvmon.log"))
                   .find("PSI trigger set: cpu some >= 100 ms within 2 s on " + cg.path +
                         "/cpu.pressure") != std::string::npos;
      },
      20'000))
      << slurp(dir.file("kvmon.log"));
  auto fired = [&] {
    try {
      return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'cgroup_psi_trigger'")
          .value_or(0);
    } catch (const SqliteError&) {
      return int64_t{0};
    }
  };
  // The host stalls (busy threads of this test, outside the target's cgroup) for two windows:
  // the target's cgroup has no stall, so its trigger stays quiet.
  {
    CpuHogs hogs;
    std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  }
  EXPECT_EQ(fired(), 0) << "a stall outside the target's cgroup fired its trigger";
  // Busy processes in the target's cgroup, all on CPU 0 (on any number of cores they wait for
  // each other): its tasks wait for the CPU, the trigger fires.
  const std::string taskset = kv::test::find_program("taskset");
  ASSERT_FALSE(taskset.empty()) << "taskset (util-linux) is missing";
  std::vector<Process> busy;
  for (int i = 0; i < 4; ++i) {
    busy.emplace_back(
        std::vector<std::string>{taskset, "-c", "0", "/bin/sh", "-c", "while :; do :; done"});
    ASSERT_TRUE(write_file(cg.path + "/cgroup.procs", std::to_string(busy.back().pid())));
  }
  ASSERT_TRUE(wait_until([&] { return fired() > 0; }, 30'000)) << slurp(dir.file("kvmon.log"));
  busy.clear();
  EXPECT_NE(query_text(db, "SELECT message FROM events WHERE kind = 'cgroup_psi_trigger' LIMIT 1")
                .find("cgroup pressure: cpu some >= 100 ms within 2 s (PSI trigger on " + cg.path +
                      "/cpu.pressure)"),
            std::string::npos);
  // The event is the target's: its instance, not the host's.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM events e JOIN process_instances i USING "
                      "(instance_id) WHERE e.kind = 'cgroup_psi_trigger' AND i.pid = " +
                          std::to_string(target.pid())),
            fired());
  std::cout << "[ kernel  ] exercised for real: a PSI trigger on " << cg.path << "/cpu.pressure\n";
}

}  // namespace
}  // namespace kv::mon
