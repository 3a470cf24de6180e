// Integration tests: how the real kvmon finds its targets (--name, --pidfile, --port on IPv4 and
// IPv6), waits for one not yet running, and follows a restart or a zombie: the events and
// instances it records.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvmon_test_util.hpp"
#include "proc_parsers.hpp"
#include "procfs.hpp"
#include "servers.hpp"
#include "targets.hpp"

namespace kv::mon {
namespace {

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

}  // namespace
}  // namespace kv::mon
