// The published finding, small: Redis's memory grows past what it may keep in RAM, into swap,
// and throughput suffers. A swap file, a memory-limited cgroup holding redis-server, kvdrive
// writing well past the limit and reading back at random, kvmon watching over TCP. Everything
// asserted comes from the results file alone. Needs root, swapon and a memory cgroup (v1 or v2);
// skips with the reason elsewhere, fails in CI (KV_REQUIRE_SERVERS=1) where it cannot run.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/swap.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace {
namespace fs = std::filesystem;
using namespace kv::test;

const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";
const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";
constexpr int64_t kLimitMib = 48;

// A memory cgroup (v2 if mounted at /sys/fs/cgroup or /sys/fs/cgroup/unified with the memory
// controller, else v1) limiting RAM but not swap; removed on destruction.
class MemoryCgroup {
 public:
  bool create(int64_t limit_mib, std::string* why) {
    std::string name = "kvbench-swap-" + std::to_string(getpid());
    for (const char* root : {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"}) {
      std::ifstream ctl(std::string(root) + "/cgroup.controllers");
      std::string controllers;
      std::getline(ctl, controllers);
      if (controllers.find("memory") == std::string::npos) continue;
      write_file(std::string(root) + "/cgroup.subtree_control", "+memory");
      dir_ = std::string(root) + "/" + name;
      if (!fs::create_directory(dir_)) continue;
      if (write_file(dir_ + "/memory.max", std::to_string(limit_mib << 20)) &&
          write_file(dir_ + "/memory.swap.max", "max"))
        return true;
      remove();
    }
    dir_ = "/sys/fs/cgroup/memory/" + name;
    std::error_code ec;
    if (!fs::create_directory(dir_, ec)) {
      *why = "no memory cgroup can be created (v2 memory controller or v1 /sys/fs/cgroup/memory)";
      dir_.clear();
      return false;
    }
    if (!write_file(dir_ + "/memory.limit_in_bytes", std::to_string(limit_mib << 20))) {
      *why = "cannot set memory.limit_in_bytes";
      remove();
      return false;
    }
    write_file(dir_ + "/memory.swappiness", "100");
    return true;
  }
  bool add(pid_t pid) { return write_file(dir_ + "/cgroup.procs", std::to_string(pid)); }
  void remove() {
    if (dir_.empty()) return;
    for (int i = 0; i < 50 && ::rmdir(dir_.c_str()) != 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    dir_.clear();
  }
  ~MemoryCgroup() { remove(); }

 private:
  std::string dir_;
};

// A swap file, swapped off and deleted on destruction.
class SwapFile {
 public:
  bool create(const std::string& path, int64_t mib, std::string* why) {
    path_ = path;
    Process dd(
        {find_program("dd"), "if=/dev/zero", "of=" + path, "bs=1M", "count=" + std::to_string(mib)},
        path + ".log");
    if (dd.wait(120'000) != 0) return fail(why, "cannot write the swap file");
    ::chmod(path.c_str(), 0600);
    Process mk({find_program("mkswap"), path}, path + ".log");
    if (mk.wait(30'000) != 0) return fail(why, "mkswap failed");
    if (::swapon(path.c_str(), 0) != 0) return fail(why, std::string("swapon: ") + strerror(errno));
    on_ = true;
    return true;
  }
  ~SwapFile() {
    if (on_) ::swapoff(path_.c_str());
    if (!path_.empty()) ::unlink(path_.c_str());
  }

 private:
  bool fail(std::string* why, const std::string& what) {
    *why = what;
    return false;
  }
  std::string path_;
  bool on_ = false;
};

// The swap file and the memory cgroup both tests need; empty when ready, else why not.
std::string make_swap_and_cgroup(const TempDir& dir, SwapFile& swap, MemoryCgroup& cgroup) {
  std::string why;
  if (geteuid() != 0) return "needs root (swapon, cgroups)";
  if (!swap.create(dir.file("swapfile"), 512, &why)) return why;
  if (!cgroup.create(kLimitMib, &why)) return why;
  return {};
}

TEST(SwapReproduction, RedisGrowsIntoSwapAndTheTimelineShowsIt) {
  TempDir dir;
  SwapFile swap;
  MemoryCgroup cgroup;
  const std::string why = make_swap_and_cgroup(dir, swap, cgroup);
  if (!why.empty()) {
    if (servers_required()) FAIL() << "cannot reproduce the swap finding here: " << why;
    GTEST_SKIP() << why;
  }
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  ASSERT_TRUE(cgroup.add(redis.pid()));

  // kvmon keeps its own file and serves its samples over TCP; kvdrive pulls them into its file
  // in its own time base, as across two hosts.
  std::string db_path = dir.file("swap.db");
  std::string listen = "127.0.0.1:" + std::to_string(free_port());
  Process kvmon({kKvmon, "--db", dir.file("kvmon.db"), "--pid", std::to_string(redis.pid()),
                 "--interval", "250ms", "--listen", listen},
                dir.file("kvmon.log"));
  ASSERT_TRUE(file_contains_within(dir.file("kvmon.log"), "serving samples on", 30'000))
      << slurp(dir.file("kvmon.log"));
  // ~160 MB of values into a Redis allowed 48 MiB of RAM, then random reads across all of it.
  Process drive({kKvdrive,    "run",       "--db",          db_path,   "--target",   redis.uri(),
                 "--keys",    "40000",     "--value-size",  "4KB",     "--threads",  "2",
                 "--phases",  "load,read", "--key-pattern", "uniform", "--requests", "20000",
                 "--timeout", "10s",       "--monitor",     listen},
                dir.file("kvdrive.log"));
  int code = drive.wait(240'000);
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  kvmon.signal(SIGTERM);
  ASSERT_EQ(kvmon.wait(10'000), 0);
  ASSERT_EQ(code, 0) << "kvdrive failed; see " << dir.file("kvdrive.log");

  auto db = kv::open_results_db(db_path);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM monitor_sessions WHERE link = '" + listen + "'"),
            1);
  // For the record (the CI log keeps it): the timeline, second by second.
  auto t = db.prepare(
      "SELECT phase, op, CAST(req_per_s AS INTEGER), CAST(lat_p99_us AS INTEGER), rss_kib / 1024, "
      "swap_kib / 1024, major_faults, host_swap_used_kib / 1024 FROM timeline ORDER BY ts_us");
  std::printf("phase op req/s p99_us rss_mib swap_mib major_faults host_swap_mib\n");
  while (t.step()) {
    std::printf("%s %s %lld %lld %lld %lld %lld %lld\n", t.column_text(0).c_str(),
                t.column_text(1).c_str(), static_cast<long long>(t.column_int(2)),
                static_cast<long long>(t.column_int(3)), static_cast<long long>(t.column_int(4)),
                static_cast<long long>(t.column_int(5)), static_cast<long long>(t.column_int(6)),
                static_cast<long long>(t.column_int(7)));
  }
  // The Redis instance's swap grew: first sample without, later ones with (it sat at ~0 first).
  EXPECT_EQ(query_int(db, "SELECT swap_kib FROM process_samples ORDER BY ts_us LIMIT 1"), 0);
  int64_t peak_swap = query_int(db, "SELECT MAX(swap_kib) FROM process_samples");
  EXPECT_GT(peak_swap, 50 * 1024) << "Redis's swap did not grow past 50 MiB";
  // Host swap used grew too.
  EXPECT_GT(query_int(db,
                      "SELECT MAX(swap_total_kib - swap_free_kib) - MIN(swap_total_kib - "
                      "swap_free_kib) FROM host_samples"),
            50 * 1024);
  // Reading swapped-out values back costs major faults / swap-ins.
  EXPECT_GT(query_int(db, "SELECT MAX(major_faults) - MIN(major_faults) FROM process_samples"),
            100);
  EXPECT_GT(query_int(db, "SELECT MAX(pswpin) - MIN(pswpin) FROM host_samples"), 100);
  // The timeline puts the store's swap next to each second's write throughput.
  EXPECT_GT(query_int(db,
                      "SELECT count(*) FROM timeline WHERE op = 'set' AND swap_kib > 0 "
                      "AND req_per_s > 0"),
            0);
  // Every row long enough to hold one of kvmon's 250 ms ticks shows its sample (a partial first
  // or last row of a phase may be shorter, and then honestly has none).
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM timeline t JOIN driver_seconds d ON d.phase_id = "
                      "t.phase_id AND d.ts_us = t.ts_us AND d.op = t.op WHERE t.op = 'set' "
                      "AND t.swap_kib IS NULL AND d.interval_us >= 250000"),
            0);
  // And the phase report shows the peak.
  EXPECT_EQ(query_int(db, "SELECT MAX(peak_swap_kib) FROM phase_report"), peak_swap);

  // kvdrive report says it in text: the server-side table and a swap-onset hint.
  Process report({kKvdrive, "report", "--db", db_path}, dir.file("report.txt"));
  ASSERT_EQ(report.wait(60'000), 0);
  std::ifstream in(dir.file("report.txt"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::printf("%s", text.c_str());
  EXPECT_NE(text.find("peak swap MiB"), std::string::npos) << text;
  EXPECT_NE(text.find("hint: "), std::string::npos) << text;
  EXPECT_NE(text.find("swap rose above 0"), std::string::npos) << text;
}

// A capacity search (#17) on a store in swap: the same step that passes while the keys fit in
// the store's memory fails on the host's swap-ins once they do not, and the search names it.
// The memory-limit event is turned off (--distress cgroup-max=off): swap-in alone must decide.
TEST(SwapSearch, AStepThatPassesInRamFailsOnSwapInAndTheSearchSaysSo) {
  TempDir dir;
  SwapFile swap;
  MemoryCgroup cgroup;
  const std::string why = make_swap_and_cgroup(dir, swap, cgroup);
  if (!why.empty()) {
    if (servers_required()) FAIL() << "cannot put a store into swap here: " << why;
    GTEST_SKIP() << why;
  }
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  ASSERT_TRUE(cgroup.add(redis.pid()));
  std::string listen = "127.0.0.1:" + std::to_string(free_port());
  Process kvmon({kKvmon, "--db", dir.file("kvmon.db"), "--pid", std::to_string(redis.pid()),
                 "--interval", "250ms", "--listen", listen},
                dir.file("kvmon.log"));
  ASSERT_TRUE(file_contains_within(dir.file("kvmon.log"), "serving samples on", 30'000))
      << slurp(dir.file("kvmon.log"));
  const std::string db_path = dir.file("search.db");
  auto search = [&](const std::string& keys, const std::string& log) {
    Process drive({kKvdrive,        "run",       "--db",     db_path,        "--target",
                   redis.uri(),     "--keys",    keys,       "--value-size", "4KB",
                   "--threads",     "2",         "--phases", "load,read",    "--key-pattern",
                   "uniform",       "--timeout", "10s",      "--monitor",    listen,
                   "--search",      "--slo",     "p99=5s",   "--rates",      "300",
                   "--duration",    "3s",        "--warmup", "1s",           "--distress",
                   "cgroup-max=off"},
                  dir.file(log));
    return drive.wait(240'000);
  };
  // 2,000 keys of 4 KB (8 MB) fit in the 48 MiB the store may keep in RAM: the step passes.
  ASSERT_EQ(search("2000", "fits.log"), 0) << slurp(dir.file("fits.log"));
  // 40,000 (160 MB) do not: the reads of the same step swap in, and it fails on that.
  int code = search("40000", "swaps.log");
  kvmon.signal(SIGTERM);
  ASSERT_EQ(kvmon.wait(10'000), 0);
  const std::string out = slurp(dir.file("swaps.log"));
  ASSERT_EQ(code, 0) << out;  // a search that found no compliant rate still ran as asked

  auto db = kv::open_results_db(db_path);
  {  // for the record (the CI log keeps it)
    auto t = db.prepare(
        "SELECT run_id, offered_rate, achieved_rate, lat_p99_us, swap_in_pages_per_s, "
        "major_faults_per_s, verdict, COALESCE(detail, '') FROM search_steps ORDER BY run_id");
    std::printf("run offered achieved p99_us swap_in/s major_faults/s verdict detail\n");
    while (t.step())
      std::printf("%lld %.0f %.0f %.0f %.0f %.0f %s %s\n", static_cast<long long>(t.column_int(0)),
                  t.column_double(1), t.column_double(2), t.column_double(3), t.column_double(4),
                  t.column_double(5), t.column_text(6).c_str(), t.column_text(7).c_str());
  }
  EXPECT_EQ(query_text(db, "SELECT verdict FROM search_steps WHERE run_id = 1"), "pass")
      << slurp(dir.file("fits.log"));
  EXPECT_LT(query_double(db,
                         "SELECT COALESCE(swap_in_pages_per_s, -1) FROM search_steps "
                         "WHERE run_id = 1"),
            1.0);
  EXPECT_EQ(query_text(db, "SELECT verdict FROM search_steps WHERE run_id = 2"), "fail") << out;
  EXPECT_GT(query_double(db, "SELECT swap_in_pages_per_s FROM search_steps WHERE run_id = 2"), 1.0);
  EXPECT_NE(query_text(db, "SELECT detail FROM search_steps WHERE run_id = 2").find("swap-in"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("swap-in"), std::string::npos) << out;
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM search_results WHERE run_id = 2 AND "
                      "max_compliant_rate IS NULL"),
            1)
      << out;
}

}  // namespace
