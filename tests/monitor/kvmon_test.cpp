// Integration tests: the real kvmon binary watching a real redis-server, checked against what
// /proc says and what the results file holds.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "db_query.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "proc_parsers.hpp"
#include "procfs.hpp"
#include "servers.hpp"
#include "targets.hpp"

namespace kv::mon {
namespace {

using kv::test::Process;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// One integer from the results file; nullopt while it does not exist or the value is NULL.
std::optional<int64_t> query_int(const std::string& db_path, const std::string& sql) {
  try {
    Database db = Database::open(db_path);
    Statement st = db.prepare(sql);
    if (!st.step()) return std::nullopt;
    return st.column_opt_int(0);
  } catch (const SqliteError&) {
    return std::nullopt;  // not created or migrated yet
  }
}

std::string query_text(const std::string& db_path, const std::string& sql) {
  Database db = Database::open(db_path);
  Statement st = db.prepare(sql);
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

PidStatus read_status(pid_t pid) {
  return parse_pid_status(slurp("/proc/" + std::to_string(pid) + "/status"));
}

Process start_kvmon(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {kKvmon, "--db", dir.file("results.db"), "--log-level", "debug"});
  return Process(args, dir.file("kvmon.log"));
}

// Stops kvmon with SIGTERM and returns its exit status.
int stop_kvmon(Process& kvmon) {
  kvmon.signal(SIGTERM);
  return kvmon.wait(10'000);
}

TEST(Kvmon, PidSamplesMatchProcStatusAndSigtermCompletesTheSession) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  // Watch VmRSS ourselves for the whole time kvmon runs: each of its values must lie within
  // what we saw. Writing data meanwhile makes RSS move, so a stale or wrong value shows.
  int64_t min_rss_kib = INT64_MAX, max_rss_kib = 0;
  auto observe = [&] {
    auto rss = read_status(redis.pid()).vm_rss_kib;
    ASSERT_TRUE(rss.has_value());
    min_rss_kib = std::min(min_rss_kib, *rss);
    max_rss_kib = std::max(max_rss_kib, *rss);
  };
  observe();
  Process kvmon = start_kvmon(
      dir, {"--pid", std::to_string(redis.pid()), "--interval", "50ms", "--host-interval", "50ms"});
  // The writes start once kvmon has sampled the store (a sanitizer build starts slowly: writes
  // done before its first sample are growth it cannot see).
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 1;
        } catch (const std::exception&) {
          return false;  // the file or its tables are not there yet
        }
      },
      30'000))
      << slurp(dir.file("kvmon.log"));
  std::string value(200'000, 'x');
  for (int i = 0; i < 60; ++i) {
    if (i % 4 == 0) {
      std::string key = "k" + std::to_string(i);
      std::string set = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key +
                        "\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
      ASSERT_EQ(kv::test::tcp_request(redis.port(), set, "\r\n"), "+OK\r\n");
    }
    observe();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 10; },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  observe();

  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
  EXPECT_TRUE(query_int(db, "SELECT ended_ts_us FROM monitor_sessions").has_value());
  EXPECT_EQ(query_int(db, "SELECT pid FROM process_instances"), redis.pid());
  EXPECT_GT(max_rss_kib, min_rss_kib) << "RSS did not move: the check below is weak";
  EXPECT_EQ(
      query_int(db,
                "SELECT COUNT(*) FROM process_samples WHERE rss_kib IS NULL "
                "OR rss_kib < " +
                    std::to_string(min_rss_kib) + " OR rss_kib > " + std::to_string(max_rss_kib)),
      0)
      << "min " << min_rss_kib << " max " << max_rss_kib;
  // Later samples saw the data we wrote: RSS grew over the run.
  EXPECT_GT(query_int(db, "SELECT MAX(rss_kib) - MIN(rss_kib) FROM process_samples").value_or(0),
            1000);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE swap_kib IS NULL "
                      "OR cpu_user_us IS NULL OR threads < 1 OR fds < 3 "
                      "OR minor_faults IS NULL OR ctx_voluntary IS NULL"),
            0);
  EXPECT_GE(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE load1 IS NOT NULL AND "
                      "mem_total_kib > 0")
                .value_or(0),
            10);
  // Absolute deadlines: each sample was read soon after it was due (generous for loaded CI).
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE "
                      "ts_us - scheduled_ts_us NOT BETWEEN -5000 AND 200000"),
            0);
}

// Fault and context-switch counters of `pid` as /proc has them, with when they were read.
struct CounterReading {
  int64_t before_us = 0, after_us = 0;  // now_ts_us() before and after reading
  int64_t minor_faults = 0, major_faults = 0, ctx_voluntary = 0, ctx_involuntary = 0;
};

CounterReading read_counters(pid_t pid) {
  CounterReading r;
  r.before_us = now_ts_us();
  auto st = parse_pid_stat(slurp("/proc/" + std::to_string(pid) + "/stat"));
  PidStatus status = read_status(pid);
  r.after_us = now_ts_us();
  EXPECT_TRUE(st.ok());
  EXPECT_TRUE(status.ctx_voluntary && status.ctx_involuntary);
  if (st.ok()) {
    r.minor_faults = st.value().minor_faults;
    r.major_faults = st.value().major_faults;
  }
  r.ctx_voluntary = status.ctx_voluntary.value_or(-1);
  r.ctx_involuntary = status.ctx_involuntary.value_or(-1);
  return r;
}

TEST(Kvmon, FaultAndContextSwitchCountsMatchProcWithinOneSample) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  constexpr int64_t kIntervalUs = 50'000;
  // Read the counters ourselves every few ms while kvmon samples every 50 ms, and make them
  // move: large SETs fault in new pages, each request wakes redis (a voluntary switch).
  std::vector<CounterReading> seen{read_counters(redis.pid())};
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(redis.pid()), "--interval", "50ms"});
  std::string value(300'000, 'f');
  for (int i = 0; i < 150; ++i) {
    if (i % 3 == 0) {
      std::string key = "f" + std::to_string(i);
      std::string set = "*3\r\n$3\r\nSET\r\n$" + std::to_string(key.size()) + "\r\n" + key +
                        "\r\n$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
      ASSERT_EQ(kv::test::tcp_request(redis.port(), set, "\r\n"), "+OK\r\n");
    }
    seen.push_back(read_counters(redis.pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 10; },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  seen.push_back(read_counters(redis.pid()));
  ASSERT_GT(seen.back().minor_faults, seen.front().minor_faults + 100) << "faults did not move";
  ASSERT_GT(seen.back().ctx_voluntary, seen.front().ctx_voluntary + 50) << "switches did not move";

  // Each stored value was read within one interval of its ts_us: it is at least what we read
  // before (ts_us - interval) and at most what we read after (ts_us + interval).
  Database results = Database::open(db);
  Statement rows = results.prepare(
      "SELECT ts_us, minor_faults, major_faults, ctx_voluntary, ctx_involuntary "
      "FROM process_samples ORDER BY ts_us");
  int checked = 0;
  while (rows.step()) {
    const int64_t ts = rows.column_int(0);
    const CounterReading* lo = nullptr;
    const CounterReading* hi = nullptr;
    for (const CounterReading& r : seen) {
      if (r.after_us < ts - kIntervalUs) lo = &r;
      if (!hi && r.before_us > ts + kIntervalUs) hi = &r;
    }
    if (!lo || !hi) continue;  // too close to either end of our readings
    ++checked;
    const char* names[] = {"minor_faults", "major_faults", "ctx_voluntary", "ctx_involuntary"};
    const int64_t CounterReading::*fields[] = {
        &CounterReading::minor_faults, &CounterReading::major_faults,
        &CounterReading::ctx_voluntary, &CounterReading::ctx_involuntary};
    for (int c = 0; c < 4; ++c) {
      ASSERT_FALSE(rows.is_null(c + 1)) << names[c] << " is NULL at ts_us " << ts;
      const int64_t v = rows.column_int(c + 1);
      EXPECT_GE(v, lo->*fields[c]) << names[c] << " at ts_us " << ts << " is older than a sample";
      EXPECT_LE(v, hi->*fields[c]) << names[c] << " at ts_us " << ts << " is ahead of /proc";
    }
  }
  EXPECT_GE(checked, 8);
}

TEST(Kvmon, NameFindsRedisServer) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  Process kvmon = start_kvmon(dir, {"--name", "redis-server", "--interval", "100ms"});
  const std::string has_samples =
      "SELECT COUNT(*) FROM process_samples JOIN process_instances USING (instance_id) "
      "WHERE pid = " +
      std::to_string(redis.pid()) + " AND selector = 'name:redis-server'";
  EXPECT_TRUE(wait_until([&] { return query_int(dir.file("results.db"), has_samples) >= 2; }, 5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
}

TEST(Kvmon, WaitsForANamedTargetAndPicksItUpWhenItStarts) {
  std::string redis_bin = kv::test::find_program("redis-server");
  if (redis_bin.empty()) {
    if (kv::test::servers_required()) FAIL() << "redis-server is not installed";
    GTEST_SKIP() << "redis-server is not installed";
  }
  TempDir dir;
  // A name no other process has: redis-server started through a symlink gets it as its comm.
  const std::string name = "kvw" + std::to_string(getpid());
  std::filesystem::create_symlink(redis_bin, dir.file(name));
  Process kvmon = start_kvmon(dir, {"--name", name, "--interval", "50ms"});
  EXPECT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("waiting for it") != std::string::npos; },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_TRUE(kvmon.wait(0) == -1) << "kvmon exited while its target was absent";

  int port = kv::test::free_port();
  Process redis({dir.file(name), "--port", std::to_string(port), "--bind", "127.0.0.1", "--save",
                 "", "--dir", dir.path()},
                dir.file("redis.log"));
  const std::string found =
      "SELECT COUNT(*) FROM process_samples JOIN process_instances "
      "USING (instance_id) WHERE pid = " +
      std::to_string(redis.pid());
  EXPECT_TRUE(wait_until([&] { return query_int(dir.file("results.db"), found) >= 1; }, 5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(
      query_int(dir.file("results.db"), "SELECT COUNT(*) FROM events WHERE kind = 'target_found'"),
      1);
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  redis.stop();
}

// Selector tests: kvmon must record samples of exactly `pid` under `selector`.
void expect_selected(const TempDir& dir, pid_t pid, const std::string& selector) {
  const std::string sql =
      "SELECT COUNT(*) FROM process_samples JOIN process_instances USING (instance_id) "
      "WHERE pid = " +
      std::to_string(pid) + " AND selector = '" + selector + "'";
  EXPECT_TRUE(wait_until([&] { return query_int(dir.file("results.db"), sql) >= 2; }, 5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(query_int(dir.file("results.db"), "SELECT COUNT(*) FROM process_instances"), 1);
}

TEST(Kvmon, PidfileFindsTheServer) {
  TempDir dir;
  StoreServer redis(StoreServer::Kind::redis, {"--pidfile", dir.file("redis.pid")});
  KV_START_OR_SKIP(redis);
  Process kvmon = start_kvmon(dir, {"--pidfile", dir.file("redis.pid"), "--interval", "50ms"});
  expect_selected(dir, redis.pid(), "pidfile:" + dir.file("redis.pid"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
}

TEST(Kvmon, PortFindsAnIpv4Listener) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string port = std::to_string(redis.port());
  Process kvmon = start_kvmon(dir, {"--port", port, "--interval", "50ms"});
  expect_selected(dir, redis.pid(), "port:" + port);
  EXPECT_EQ(stop_kvmon(kvmon), 0);
}

TEST(Kvmon, PortFindsAnIpv6OnlyListener) {
  std::string redis_bin = kv::test::find_program("redis-server");
  if (redis_bin.empty()) GTEST_SKIP() << "redis-server is not installed";
  TempDir dir;
  int port = kv::test::free_port();
  Process redis({redis_bin, "--port", std::to_string(port), "--bind", "::1", "--save", "", "--dir",
                 dir.path()},
                dir.file("redis.log"));
  ProcFs procfs;
  if (!wait_until([&] { return !listening_inodes(procfs, port).empty(); }, 5000)) {
    GTEST_SKIP() << "redis-server could not listen on [::1] (no IPv6?): "
                 << slurp(dir.file("redis.log"));
  }
  ASSERT_NE(slurp("/proc/net/tcp6")
                .find(":" +
                      [&] {
                        char hex[8];
                        std::snprintf(hex, sizeof hex, "%04X", port);
                        return std::string(hex);
                      }() +
                      " "),
            std::string::npos)
      << "the listener is not IPv6";
  Process kvmon = start_kvmon(dir, {"--port", std::to_string(port), "--interval", "50ms"});
  expect_selected(dir, redis.pid(), "port:" + std::to_string(port));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
}

TEST(Kvmon, KillAndRestartGivesEventsAndANewInstance) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  const pid_t old_pid = redis.pid();
  Process kvmon = start_kvmon(dir, {"--port", std::to_string(redis.port()), "--interval", "50ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  redis.process().signal(SIGKILL);
  redis.process().wait(5000);
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'target_exited'") == 1;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t restart_ts_us = now_ts_us();
  redis.restart();
  ASSERT_NE(redis.pid(), old_pid);
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db,
                         "SELECT COUNT(*) FROM process_samples JOIN process_instances USING "
                         "(instance_id) WHERE pid = " +
                             std::to_string(redis.pid())) >= 2;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);

  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_instances"), 2);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'target_restarted'"), 1);
  EXPECT_EQ(query_int(db,
                      "SELECT i.pid FROM events e JOIN process_instances i USING "
                      "(instance_id) WHERE e.kind = 'target_exited'"),
            old_pid);
  // No sample of the old instance after it exited, none of the new one before it started.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) WHERE i.pid = " +
                          std::to_string(old_pid) +
                          " AND s.ts_us > (SELECT ts_us FROM events WHERE kind = 'target_exited')"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) WHERE i.pid = " +
                          std::to_string(redis.pid()) + " AND s.ts_us < " +
                          std::to_string(restart_ts_us)),
            0);
  // Its start time, placed by /proc/uptime, lies between the restart call and its first sample.
  auto started_ts_us = query_int(
      db, "SELECT started_ts_us FROM process_instances WHERE pid = " + std::to_string(redis.pid()));
  ASSERT_TRUE(started_ts_us.has_value());
  EXPECT_GE(*started_ts_us, restart_ts_us - 20'000);  // 10 ms ticks, 10 ms uptime resolution
  EXPECT_LE(*started_ts_us, *query_int(db,
                                       "SELECT first_seen_ts_us FROM process_instances "
                                       "WHERE pid = " +
                                           std::to_string(redis.pid())) +
                                20'000);
  // The host was sampled all along, once a second by default (every 20th 50 ms tick). On a
  // loaded machine a skipped tick moves a host sample to the next tick of its second (a gap of
  // 1.05 s, then 0.95 s), and a stall can skip one whole second: not more.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM (SELECT scheduled_ts_us - LAG(scheduled_ts_us) "
                      "OVER (ORDER BY ts_us) AS gap FROM host_samples) "
                      "WHERE gap IS NOT NULL AND gap NOT BETWEEN 500000 AND 2500000"),
            0);
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM host_samples").value_or(0), 2);
}

// A child of this test named `name` (its comm) that runs until `exit_fd`'s other end is
// closed, then exits; it is not reaped until the caller waits for it (a zombie meanwhile).
struct NamedChild {
  pid_t pid = -1;
  int release_fd = -1;  // close to let it exit
};

NamedChild fork_named_child(const std::string& name) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return {};  // kvmon, started later, must not hold it
  pid_t pid = fork();
  if (pid == 0) {  // only async-signal-safe calls here
    close(fds[1]);
    prctl(PR_SET_NAME, name.c_str());
    char c;
    while (read(fds[0], &c, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
  }
  close(fds[0]);
  return {pid, fds[1]};
}

char proc_state(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto parsed = parse_pid_stat(stat);
  return parsed ? parsed.value().state : '?';
}

TEST(Kvmon, AZombieTargetIsOneExitAndARestartOnlyWhenANewOneStarts) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  const std::string name = "kvz" + std::to_string(getpid() % 100000);
  const std::string pidfile = dir.file("target.pid");
  NamedChild first = fork_named_child(name);
  ASSERT_GT(first.pid, 0);
  std::ofstream(pidfile) << first.pid << "\n";
  Process kvmon = start_kvmon(dir, {"--name", name, "--pidfile", pidfile, "--interval", "50ms"});
  auto log_has = [&](const std::string& text) {
    return slurp(dir.file("kvmon.log")).find(text) != std::string::npos;
  };
  // Both selectors have it (the child may take its name only after kvmon's first look).
  ASSERT_TRUE(wait_until(
      [&] {
        return log_has("pidfile:" + pidfile + ": process " + std::to_string(first.pid) +
                       " found") &&
               log_has("name:" + name + ": process " + std::to_string(first.pid) + " found");
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  // It exits and is not reaped: a zombie for 40 ticks, which kvmon must see as one exit.
  close(first.release_fd);
  ASSERT_TRUE(wait_until([&] { return proc_state(first.pid) == 'Z'; }, 5000));
  ASSERT_TRUE(wait_until(
      [&] {
        return log_has("pidfile:" + pidfile + ": process " + std::to_string(first.pid) + " exited");
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  EXPECT_EQ(proc_state(first.pid), 'Z');
  ASSERT_EQ(waitpid(first.pid, nullptr, 0), first.pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // A new instance: one restart per selector.
  NamedChild second = fork_named_child(name);
  ASSERT_GT(second.pid, 0);
  std::ofstream(pidfile) << second.pid << "\n";
  ASSERT_TRUE(wait_until(
      [&] {
        return log_has("name:" + name + ": process " + std::to_string(second.pid) +
                       " (re)started") &&
               log_has("pidfile:" + pidfile + ": process " + std::to_string(second.pid) +
                       " (re)started");
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  close(second.release_fd);
  waitpid(second.pid, nullptr, 0);

  for (const std::string& sel : {"name:" + name, "pidfile:" + pidfile}) {
    auto count = [&](const char* kind) {
      return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = '" + std::string(kind) +
                               "' AND message LIKE '" + sel + ":%'");
    };
    EXPECT_EQ(count("target_found"), 1) << sel;
    EXPECT_EQ(count("target_exited"), 1) << sel;
    EXPECT_EQ(count("target_restarted"), 1) << sel << "\n" << slurp(dir.file("kvmon.log"));
  }
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_instances"), 2);
  // No sample of the dead process after its exit event.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) WHERE i.pid = " +
                          std::to_string(first.pid) +
                          " AND s.ts_us > (SELECT MIN(ts_us) FROM events WHERE kind = "
                          "'target_exited')"),
            0);
}

// The results file deleted under kvmon (rm results.db*): kvmon says so in one line and goes on
// in a new file at the same path, whose events say from when its data starts. Before, it kept
// writing into the deleted file without a word.
TEST(Kvmon, ADeletedResultsFileIsSaidAndCreatedAnewAtItsPath) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(getpid()), "--interval", "50ms",
                                    "--host-interval", "50ms", "--flush-interval", "100ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t deleted_ts_us = now_ts_us();
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(db + ext);
  // A new file at the path (not opened before kvmon made it: opening would create it), with a
  // session of its own, samples of the target again (its instance row written anew) and the
  // event saying what happened.
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(db); }, 5000))
      << slurp(dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db,
                         "SELECT COUNT(*) FROM process_samples JOIN process_instances USING "
                         "(instance_id) WHERE pid = " +
                             std::to_string(getpid()))
                   .value_or(0) >= 3;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  // Under ThreadSanitizer kvmon once took over 10 s to stop here (the cause is not known yet;
  // see NOTES.md): give it 30 s, and say how long it took.
  kvmon.signal(SIGTERM);
  const auto stop_asked = std::chrono::steady_clock::now();
  EXPECT_EQ(kvmon.wait(30'000), 0) << slurp(dir.file("kvmon.log"));
  EXPECT_LT(std::chrono::steady_clock::now() - stop_asked, std::chrono::seconds(30));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'results_file_replaced'"), 1);
  EXPECT_GE(query_int(db, "SELECT MIN(ts_us) FROM events WHERE kind = 'results_file_replaced'")
                .value_or(0),
            deleted_ts_us);
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
  const std::string log = slurp(dir.file("kvmon.log"));
  EXPECT_NE(log.find("was deleted while kvmon was writing it"), std::string::npos) << log;
  size_t said = 0;
  for (size_t at = log.find("was deleted"); at != std::string::npos;
       at = log.find("was deleted", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << log;
}

// A tmpfs of 1 MiB at `dir` while it lives (needs root).
class SmallDisk {
 public:
  bool mount_at(const std::string& dir, std::string* why) {
    if (geteuid() != 0) {
      *why = "needs root to mount a tmpfs";
      return false;
    }
    if (::mount("kvmon-full", dir.c_str(), "tmpfs", 0, "size=1m") != 0) {
      *why = std::string("mount tmpfs: ") + std::strerror(errno);
      return false;
    }
    dir_ = dir;
    return true;
  }
  ~SmallDisk() {
    if (!dir_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }

 private:
  std::string dir_;
};

// The results file's disk fills up and space comes back: kvmon records how many ticks it lost
// and when, and the session is not 'completed'. Before, it lost ~70 ticks and said completed.
TEST(Kvmon, AFullDiskRecordsTheTicksLostAndTheSessionIsIncomplete) {
  TempDir dir;
  const std::string mnt = dir.file("small");
  ::mkdir(mnt.c_str(), 0755);
  SmallDisk disk;
  std::string why;
  if (!disk.mount_at(mnt, &why)) {
    if (kv::test::servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const std::string db = mnt + "/results.db";
  Process kvmon({kKvmon, "--db", db, "--pid", std::to_string(getpid()), "--interval", "20ms",
                 "--host-interval", "20ms", "--flush-interval", "100ms", "--log-level", "debug"},
                dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 5; }, 5000))
      << slurp(dir.file("kvmon.log"));
  {  // fill the disk
    std::ofstream filler(mnt + "/filler", std::ios::binary);
    std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) &&
           filler.flush()) {
    }
  }
  ASSERT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("could not store") != std::string::npos; },
      20'000))
      << "no write failed on the full disk\n"
      << slurp(dir.file("kvmon.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // more ticks lost meanwhile
  std::filesystem::remove(mnt + "/filler");
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'samples_lost'")
                   .value_or(0) > 0;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  // "N tick(s) of samples lost, due from A to B (R rows): ...": N > 0, and the samples stored
  // leave a gap of about that many ticks.
  const std::string msg = query_text(db, "SELECT message FROM events WHERE kind = 'samples_lost'");
  int64_t lost = std::atoll(msg.c_str());
  EXPECT_GT(lost, 0) << msg;
  EXPECT_NE(msg.find("due from"), std::string::npos) << msg;
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "incomplete");
  auto gap = query_int(db,
                       "SELECT MAX(gap) FROM (SELECT scheduled_ts_us - LAG(scheduled_ts_us) "
                       "OVER (ORDER BY scheduled_ts_us) AS gap FROM process_samples)");
  ASSERT_TRUE(gap.has_value());
  EXPECT_GE(*gap / 20'000, lost / 2) << "the lost ticks are not a gap in the samples: " << msg;
}

TEST(Kvmon, CommitsOncePerFlushIntervalAndSigtermStoresTheRest) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  const std::string session = "(SELECT MAX(session_id) FROM monitor_sessions)";
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(getpid()), "--interval", "50ms",
                                    "--host-interval", "50ms", "--flush-interval", "3s"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM monitor_sessions").value_or(0) == 1; },
      5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t started = now_ts_us();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Half a flush interval in, ~30 ticks taken and none committed yet.
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_samples"), 0);
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) > 0; }, 5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t first_commit_s = (now_ts_us() - started) / 1'000'000;
  EXPECT_GE(first_commit_s, 1);  // ~3 s after the start, not at the first tick
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  // Everything taken before SIGTERM is stored: one sample per tick, from the first to the last.
  auto span_ticks = query_int(db,
                              "SELECT (MAX(scheduled_ts_us) - MIN(scheduled_ts_us)) / 50000 "
                              "+ 1 FROM host_samples WHERE session_id = " +
                                  session);
  auto skipped = query_int(db,
                           "SELECT COALESCE(SUM(CAST(message AS INTEGER)), 0) FROM events "
                           "WHERE kind = 'ticks_skipped'");
  // (kvmon is a fork child of its target, this test: sampled too, as its own instance.)
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) WHERE i.parent_instance_id IS NULL")
                    .value_or(0) +
                skipped.value_or(0),
            span_ticks.value_or(-1));
  EXPECT_GE(span_ticks.value_or(0), 60);  // 3 s and more
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
}

TEST(Kvmon, BgsaveChildIsItsOwnInstanceWithItsRssAndWrites) {
  TempDir dir;
  // 400 keys of 16 KiB, saved uncompressed with a 2.5 ms pause per key: a 1 s BGSAVE.
  StoreServer redis(StoreServer::Kind::redis,
                    {"--rdbcompression", "no", "--rdb-key-save-delay", "2500"});
  KV_START_OR_SKIP(redis);
  std::string mset = "*801\r\n$4\r\nMSET\r\n";
  for (int i = 0; i < 400; ++i) {
    std::string key = "key:" + std::to_string(i);
    std::string value(16384, static_cast<char>('a' + i % 26));
    mset += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
            std::to_string(value.size()) + "\r\n" + value + "\r\n";
  }
  ASSERT_EQ(kv::test::tcp_request(redis.port(), mset, "\r\n"), "+OK\r\n");
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(redis.pid()), "--interval", "20ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 2; },
      5000));
  ASSERT_EQ(kv::test::tcp_request(redis.port(), "BGSAVE\r\n", "\r\n"),
            "+Background saving started\r\n");
  const std::string child =
      "(SELECT instance_id FROM process_instances WHERE "
      "parent_instance_id IS NOT NULL)";
  EXPECT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'child_exited'") == 1; },
      10'000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);

  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_instances WHERE parent_instance_id = "
                      "(SELECT instance_id FROM process_instances WHERE pid = " +
                          std::to_string(redis.pid()) + ")"),
            1);
  EXPECT_EQ(query_text(db, "SELECT selector FROM process_instances WHERE instance_id = " + child),
            "child:pid:" + std::to_string(redis.pid()));
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM process_samples WHERE instance_id = " + child)
                .value_or(0),
            10);
  // The child shares the parent's pages: its RSS is several MiB, not a fresh process's.
  EXPECT_GT(query_int(db, "SELECT MAX(rss_kib) FROM process_samples WHERE instance_id = " + child)
                .value_or(0),
            4096);
  // It writes the ~6.4 MB dump (unless the temp dir is tmpfs, which counts no storage writes).
  auto written = query_int(db,
                           "SELECT MAX(io_write_bytes) FROM process_samples WHERE "
                           "instance_id = " +
                               child);
  ASSERT_TRUE(written.has_value()) << "io_write_bytes is NULL even as the same user";
  struct statfs sfs {};
  if (statfs(dir.path().c_str(), &sfs) == 0 && sfs.f_type != TMPFS_MAGIC) {
    EXPECT_GT(*written, 1'000'000);
  }
}

// kvmon sampling every 20 ms while another writer holds the results file for 1.5 s; returns
// once kvmon has stopped, its file holding what it stored and the events of what it did not.
void lock_the_file_under_kvmon(const TempDir& dir) {
  const std::string db = dir.file("results.db");
  Process kvmon =
      start_kvmon(dir, {"--interval", "20ms", "--host-interval", "20ms", "--max-queued", "5"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM host_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  {
    Database other = Database::open(db);  // another writer holds the file for 1.5 s
    other.exec("BEGIN EXCLUSIVE");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    other.exec("COMMIT");
  }
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'samples_dropped'") >= 1;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
}

int64_t samples_dropped(const std::string& db) {
  return query_int(db,
                   "SELECT SUM(CAST(message AS INTEGER)) FROM events "
                   "WHERE kind = 'samples_dropped'")
      .value_or(0);
}

// Every tick is accounted for, in every build: stored, counted as dropped, or (when the timer
// overran, as a sanitizer or a loaded machine makes it) counted as skipped.
TEST(Kvmon, ALockedDatabaseDropsSamplesWithAnEventAndEveryTickIsAccountedFor) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  ASSERT_NO_FATAL_FAILURE(lock_the_file_under_kvmon(dir));
  const int64_t dropped = samples_dropped(db);
  EXPECT_GE(dropped, 1);
  auto skipped = query_int(db,
                           "SELECT SUM(CAST(message AS INTEGER)) FROM events "
                           "WHERE kind = 'ticks_skipped'")
                     .value_or(0);
  auto stored = query_int(db, "SELECT COUNT(*) FROM host_samples").value_or(0);
  auto span_ticks = query_int(db,
                              "SELECT (MAX(scheduled_ts_us) - MIN(scheduled_ts_us)) / 20000 "
                              "+ 1 FROM host_samples")
                        .value_or(0);
  EXPECT_EQ(stored + dropped + skipped, span_ticks) << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
}

// The timer never waits for the file: the samples taken while it was locked were taken on time,
// and most of the 75 ticks of the lock were dropped rather than skipped. Timing assertions: the
// suite runs in the plain build only (scripts/sanitize.sh).
TEST(KvmonTiming, ALockedDatabaseNeverDelaysTheTimer) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  ASSERT_NO_FATAL_FAILURE(lock_the_file_under_kvmon(dir));
  EXPECT_GE(samples_dropped(db), 40) << slurp(dir.file("kvmon.log"));  // ~75 locked, 5 queued
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE "
                      "ts_us - scheduled_ts_us NOT BETWEEN -5000 AND 200000"),
            0);
}

TEST(Kvmon, AnotherUsersTargetGivesNullNotZeroWhereUnreadable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run kvmon as another user (nobody)";
  std::string setpriv = kv::test::find_program("setpriv");
  if (setpriv.empty()) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  StoreServer redis(StoreServer::Kind::redis);  // runs as root
  KV_START_OR_SKIP(redis);
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  const std::string db = dir.file("results.db");
  Process kvmon({setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", kKvmon, "--db", db,
                 "--pid", std::to_string(redis.pid()), "--interval", "50ms"},
                dir.file("kvmon.log"));
  // Our queries run as root: let kvmon create the file (and its WAL files) as nobody first.
  ASSERT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("sampling") != std::string::npos; }, 5000))
      << slurp(dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE io_read_bytes IS NOT NULL "
                      "OR io_write_bytes IS NOT NULL OR fds IS NOT NULL"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE rss_kib IS NULL "
                      "OR cpu_user_us IS NULL"),
            0);  // status and stat stay readable
  std::string log = slurp(dir.file("kvmon.log"));
  EXPECT_NE(log.find("CAP_SYS_PTRACE"), std::string::npos) << log;
  size_t warnings = 0;
  for (size_t at = log.find("cannot read"); at != std::string::npos;
       at = log.find("cannot read", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 2u) << "one warning each for io and fd/, not one per sample:\n" << log;
}

TEST(Kvmon, PssOnlyWhenAskedAndOnlyAtItsInterval) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(
      dir, {"--pid", std::to_string(redis.pid()), "--interval", "20ms", "--pss-interval", "200ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 40; },
      5000));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  auto with_pss = query_int(db, "SELECT COUNT(*) FROM process_samples WHERE pss_kib > 0");
  auto all = query_int(db, "SELECT COUNT(*) FROM process_samples");
  EXPECT_GE(with_pss.value_or(0), 2);
  EXPECT_LE(with_pss.value_or(0) * 5, all.value_or(0));  // about 1 in 10 samples
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_samples WHERE pss_kib > rss_kib"), 0);
}

TEST(Kvmon, BadArgumentsExitTwoWithOneLine) {
  TempDir dir;
  for (std::vector<std::string> args : {std::vector<std::string>{"--pid", "1"},
                                        {"--db", dir.file("x.db"), "--interval", "5ms"},
                                        {"--db", dir.file("x.db"), "--port", "99999"},
                                        {"--db", dir.file("x.db"), "--bogus"}}) {
    args.insert(args.begin(), kKvmon);
    const std::string log = dir.file("err" + std::to_string(args.size()) + args.back() + ".log");
    Process p(args, log);
    EXPECT_EQ(p.wait(5000), 2) << args.back();
    std::string err = slurp(log);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace kv::mon
