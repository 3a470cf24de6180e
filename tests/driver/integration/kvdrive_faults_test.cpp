// kvdrive under faults: killed itself, a stalled store, a store answering garbage.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <thread>
#include <utility>
#include <vector>

#include "fake_store.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

TEST(KvdriveFaults, KilledMidRunLeavesAnIntactFileAndAnIncompleteRun) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--duration", "30s"},
            dir.file("kvdrive.log"));
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 2)));
  p.signal(SIGKILL);
  EXPECT_EQ(p.wait(5000), 128 + SIGKILL);
  auto db = kv::open_results_db(dir.file("r.db"));  // the next open notices
  auto ic = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(ic.step());
  EXPECT_EQ(ic.column_text(0), "ok");
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE status = 'incomplete' AND "
                      "ended_ts_us IS NOT NULL AND error LIKE '%ended without closing%'"),
            1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'incomplete'"), 1);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM driver_seconds"), 2);
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  EXPECT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("incomplete"), std::string::npos) << report.output;
}

TEST(KvdriveFaults, StalledStoreShowsAsTimeoutsAndTheRunRecovers) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "load,read", "--duration", "7s", "--timeout", "300ms", "--threads", "2"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  redis.process().signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT status = 'completed' FROM runs"), 1);
  // Timeouts were counted, in the seconds of the stall.
  EXPECT_GT(query_int(db, "SELECT SUM(timeouts) FROM driver_seconds WHERE op = 'get'"), 0);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM driver_seconds WHERE op = 'get' AND timeouts > 0"),
            1);
  // Requests succeeded after the stall ...
  EXPECT_GT(query_int(db,
                      "SELECT SUM(hits) FROM driver_seconds WHERE op = 'get' AND ts_us > "
                      "(SELECT MAX(ts_us) FROM driver_seconds WHERE timeouts > 0)"),
            0);
  // ... and the latency rows show it: the worst second's max is at least the timeout.
  EXPECT_GE(query_double(db, "SELECT MAX(lat_max_us) FROM driver_seconds WHERE op = 'get'"),
            300'000);
}

// memcached stalled (SIGSTOP), blocking and pipelined: the gets of the stall are timeouts or
// errors, never misses (every key was loaded, so any miss is wrong), and the run recovers.
TEST(KvdriveFaults, StalledMemcachedGetsAreTimeoutsNotMisses) {
  for (const char* pipeline : {"1", "8"}) {
    SCOPED_TRACE(std::string("--pipeline ") + pipeline);
    StoreServer memcached(StoreServer::Kind::memcached);
    KV_START_OR_SKIP(memcached);
    TempDir dir;
    std::string log = dir.file("kvdrive.log");
    auto load = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(),
                                  "--keys", "500", "--phases", "load"});
    ASSERT_EQ(load.exit_code, 0) << load.output;
    // 6 s: the stall below must fall inside the phase even when its first row comes late (with
    // 4 s, a loaded host under ASan once saw no timeout at all, as if the stall came after it).
    Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--keys",
               "500", "--phases", "read", "--duration", "6s", "--timeout", "200ms", "--threads",
               "2", "--pipeline", pipeline},
              log);
    ASSERT_TRUE(wait_for_value(dir.file("r.db"),
                               "SELECT count(*) FROM driver_seconds d JOIN phases p USING "
                               "(phase_id) WHERE p.run_id = 2"))
        << slurp(log);
    memcached.process().signal(SIGSTOP);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    memcached.process().signal(SIGCONT);
    ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
    auto db = kv::open_results_db(dir.file("r.db"));
    const std::string read =
        " FROM driver_seconds d JOIN phases ph USING (phase_id) WHERE "
        "ph.run_id = 2 AND d.op = 'get'";
    EXPECT_GT(query_int(db, "SELECT SUM(timeouts) + SUM(errors)" + read), 0);
    EXPECT_EQ(query_int(db, "SELECT SUM(misses)" + read), 0);
    EXPECT_GT(query_int(db, "SELECT SUM(hits)" + read), 0);
  }
}

TEST(KvdriveFaults, GarbageRepliesAreCountedAsErrorsNotACrash) {
  for (const std::string scheme : {"redis", "memcached"}) {
    // Valid enough to get past connect (memcached's version is answered), then nonsense.
    FakeStore server;
    FakeStore::Behavior garbage;
    garbage.garbage_after_requests = 0;
    garbage.garbage_spares_version = true;
    server.set_behavior_all(garbage);
    TempDir dir;
    auto out = run_kvdrive(dir,
                           {"run", "--db", dir.file("r.db"), "--target",
                            scheme + "://127.0.0.1:" + std::to_string(server.port()), "--keys",
                            "200", "--threads", "1", "--timeout", "200ms"},
                           60'000);
    // Every request failed: the run is failed (exit 1), not completed, and says so.
    EXPECT_EQ(out.exit_code, 1) << scheme << ": " << out.output;
    EXPECT_EQ(out.output.find("Segmentation"), std::string::npos) << out.output;
    if (scheme == "redis") {  // it connects, then gets garbage: the requests are recorded
      EXPECT_NE(out.output.find("run 1 FAILED"), std::string::npos) << out.output;
      auto db = kv::open_results_db(dir.file("r.db"));
      EXPECT_GT(query_int(db, "SELECT SUM(errors + timeouts) FROM driver_seconds"), 0) << scheme;
      EXPECT_EQ(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 0) << scheme;
      EXPECT_EQ(query_int(db, "SELECT status = 'failed' FROM runs"), 1) << scheme;
    }
  }
}

long long store_gets(StoreServer& server, bool redis) {
  if (redis) return redis_command_calls(server.port(), "get");
  return stat_value(tcp_request(server.port(), "stats\r\n", "END\r\n"), "cmd_get");
}

// Ctrl-C while the store is stopped (SIGSTOP) with --timeout 20s: kvdrive ends at once (about
// 0.2 s on an idle host) instead of waiting out the request in flight. The requests it gave up are
// neither ok nor failed, and are said (an event): once the store runs again it executes them, so
// its own count is kvdrive's plus those, exactly.
// Ctrl-C while the store is stopped (SIGSTOP), through the transport `io`: the requests in flight
// are given up at once (abandoned, not errors), and those that reached the store are executed
// once it runs again.
void ctrl_c_while_the_store_is_stopped(const std::string& io) {
  for (bool redis : {true, false}) {
    for (const char* pipeline : {"1", "8"}) {
      SCOPED_TRACE(std::string(redis ? "redis" : "memcached") + " --pipeline " + pipeline);
      StoreServer server(redis ? StoreServer::Kind::redis : StoreServer::Kind::memcached);
      KV_START_OR_SKIP(server);
      TempDir dir;
      std::string log = dir.file("kvdrive.log");
      std::string db_path = dir.file("r.db");
      Process p({kKvdrive,     "run",        "--db",      db_path,    "--target",
                 server.uri(), "--keys",     "1000",      "--phases", "read",
                 "--duration", "120s",       "--timeout", "20s",      "--threads",
                 "2",          "--pipeline", pipeline,    "--io",     io},
                log);
      ASSERT_TRUE(wait_for_value(db_path, "SELECT count(*) FROM driver_seconds", 60'000))
          << slurp(log);
      server.process().signal(SIGSTOP);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      auto t0 = std::chrono::steady_clock::now();
      p.signal(SIGINT);
      int code = p.wait(30'000);
      auto took = std::chrono::steady_clock::now() - t0;
      server.process().signal(SIGCONT);
      EXPECT_EQ(code, 130) << slurp(log);
      // Well under the 20 s timeout: the requests in flight were given up, not waited out. Not
      // tighter: kvdrive once took 6 s to end beside the other tests on a 2-core host (0.15 to
      // 0.19 s in five runs alone).
      EXPECT_LT(took, std::chrono::seconds(12)) << "waited for the stalled request's timeout";
      auto db = kv::open_results_db(db_path);
      EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'interrupted'"), 1);
      EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'interrupted'"), 1);
      // The stalled gets are not in the counts (not errors, not timeouts).
      EXPECT_EQ(query_int(db, "SELECT SUM(errors + timeouts) FROM driver_seconds"), 0);
      auto ev = db.prepare("SELECT message FROM events WHERE kind = 'requests_abandoned'");
      ASSERT_TRUE(ev.step()) << "no requests_abandoned event";
      std::string msg = ev.column_text(0);
      std::smatch m;
      ASSERT_TRUE(std::regex_search(msg, m, std::regex("(\\d+) requests in flight"))) << msg;
      const long long abandoned = std::stoll(m[1]);
      EXPECT_GE(abandoned, 1);
      EXPECT_LE(abandoned, 2 * std::stoll(pipeline));
      const long long counted =
          query_int(db, "SELECT SUM(ops) FROM driver_seconds WHERE op = 'get'");
      long long executed = 0;
      for (int i = 0; i < 100; ++i) {  // the store catches up once it runs again
        executed = store_gets(server, redis);
        if (executed >= counted + abandoned) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (!redis) {
        // The event-loop engine sends memcached gets as separate commands, not one multi-get:
        // memcached stops at the first reply it cannot write to the closed connection, so only
        // some of the abandoned gets are executed. Each one is at most once.
        EXPECT_GE(executed, counted);
        EXPECT_LE(executed, counted + abandoned);
      } else {
        EXPECT_EQ(executed, counted + abandoned);
      }
    }
  }
}

TEST(KvdriveFaults, CtrlCWhileTheStoreIsStoppedEndsWithinASecond) {
  ctrl_c_while_the_store_is_stopped("epoll");
}

// io_uring: the multishot receive of each socket is cancelled and the socket shut down, as the
// epoll transport shuts it down.
TEST(KvdriveFaults, CtrlCWhileTheStoreIsStoppedEndsWithinASecondOnIoUring) {
  ctrl_c_while_the_store_is_stopped("uring");
}

// A second Ctrl-C leaves at once, and the run is marked interrupted, not left running (read
// without open_results_db, which would mark a run left running by a dead kvdrive).
TEST(KvdriveFaults, SecondCtrlCLeavesAtOnceWithTheRunMarkedInterrupted) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  std::string db_path = dir.file("r.db");
  Process p({kKvdrive, "run", "--db", db_path, "--target", redis.uri(), "--keys", "1000",
             "--phases", "load,read", "--duration", "120s", "--timeout", "20s"},
            log);
  ASSERT_TRUE(wait_for_value(db_path, "SELECT count(*) FROM phases WHERE kind = 'read'", 60'000))
      << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t0 = std::chrono::steady_clock::now();
  p.signal(SIGINT);
  // Two signals, not one merged; the second lands while the first is still ending the run.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  p.signal(SIGINT);
  int code = p.wait(30'000);
  auto took = std::chrono::steady_clock::now() - t0;
  redis.process().signal(SIGCONT);
  EXPECT_EQ(code, 130) << slurp(log);
  EXPECT_LT(took, std::chrono::seconds(5));
  auto db = kv::Database::open(db_path);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE status = 'interrupted' AND "
                      "ended_ts_us IS NOT NULL"),
            1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'running'"), 0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'running'"), 0);
  EXPECT_EQ(query_int(db, "SELECT status = 'interrupted' FROM phases WHERE kind = 'read'"), 1);
}

}  // namespace

namespace {

// The ok (answered) and failed requests of each whole second of the phase of `kind`, in order.
std::vector<std::pair<int64_t, int64_t>> seconds_of(kv::Database& db, const std::string& kind) {
  std::vector<std::pair<int64_t, int64_t>> out;
  auto st = db.prepare(
      "SELECT SUM(d.ok), SUM(d.errors + d.timeouts) FROM driver_seconds d JOIN phases p USING "
      "(phase_id) WHERE p.kind = '" +
      kind + "' GROUP BY d.ts_us ORDER BY d.ts_us");
  while (st.step()) out.emplace_back(st.column_int(0), st.column_int(1));
  return out;
}

// SUM(column) of pool_server_seconds, over every server or only `server` (HOST:PORT).
int64_t pool_sum(kv::Database& db, const std::string& column, const std::string& server = "") {
  return query_int(db, "SELECT COALESCE(SUM(" + column + "), 0) FROM pool_server_seconds" +
                           (server.empty() ? std::string() : " WHERE server = '" + server + "'"));
}

// A memcached pool of three real servers; b is the one a test kills.
class PoolFailover : public ::testing::Test {
 protected:
  void SetUp() override {
    KV_START_OR_SKIP(a);
    KV_START_OR_SKIP(b);
    KV_START_OR_SKIP(c);
  }
  static std::string name(const StoreServer& s) { return "127.0.0.1:" + std::to_string(s.port()); }
  // A load and a mixed phase of `duration` against the pool (`query` after its URI), into
  // dir/r.db; b is killed (SIGKILL) once the mixed phase has two rows.
  void run_killing_b(const std::string& query, const std::string& duration) {
    const std::string log = dir.file("kvdrive.log");
    const std::string pool = "memcached://" + name(a) + "," + name(b) + "," + name(c) + query;
    Process p(
        {kKvdrive, "run", "--db", dir.file("r.db"), "--target", pool, "--keys", "3000", "--phases",
         "load,mixed", "--duration", duration, "--threads", "2", "--connections", "2"},
        log);
    ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("mixed", 2))) << slurp(log);
    b.process().signal(SIGKILL);
    ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  }
  // Every request of each phase counted once over the pool's servers, and the live servers'
  // answers equal to their own cmd_get + cmd_set.
  void expect_pool_counts(kv::Database& db) {
    EXPECT_EQ(query_int(db,
                        "SELECT COUNT(*) FROM phases p WHERE (SELECT SUM(ops) FROM "
                        "driver_seconds d WHERE d.phase_id = p.phase_id) != (SELECT "
                        "SUM(answered + failed + failed_fast) FROM pool_server_seconds s WHERE "
                        "s.phase_id = p.phase_id)"),
              0);
    for (StoreServer* s : {&a, &c}) {
      const std::string stats = tcp_request(s->port(), "stats\r\n", "END\r\n");
      EXPECT_EQ(pool_sum(db, "answered", name(*s)),
                stat_value(stats, "cmd_get") + stat_value(stats, "cmd_set"))
          << s->port();
    }
  }
  // The pool_topology events whose message holds `what`.
  int64_t topology_events(kv::Database& db, const std::string& what) {
    return query_int(db,
                     "SELECT COUNT(*) FROM events WHERE kind = 'pool_topology' AND message "
                     "LIKE '%" +
                         what + "%'");
  }

  StoreServer a{StoreServer::Kind::memcached}, b{StoreServer::Kind::memcached},
      c{StoreServer::Kind::memcached};
  TempDir dir;
};

// One memcached of a pool of three killed in a mixed phase: its share of the requests fails at
// once (errors, without I/O), the two live members keep their pace, and the phase completes.
// (Before each server backed off on its own, a dead member paused every connection 10 ms per
// failure: the pool fell from ~50,000 to ~330 requests/s.) A timing suite: plain build only.
TEST_F(PoolFailover, ADeadMemberFailsItsShareAndTheLiveOnesKeepTheirPace) {
  ASSERT_NO_FATAL_FAILURE(run_killing_b("", "6s"));
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM phases WHERE status = 'completed'"), 2);
  const auto secs = seconds_of(db, "mixed");
  int64_t before = 0;  // the best clean second before the kill
  size_t first_failed = secs.size();
  for (size_t i = 0; i < secs.size(); ++i) {
    if (secs[i].second > 0) {
      first_failed = i;
      break;
    }
    before = std::max(before, secs[i].first);
  }
  ASSERT_GT(before, 0);
  // The whole seconds after the one of the kill, the phase's last (partial) one left out.
  std::vector<int64_t> ok_after;
  int64_t ok_sum = 0, failed_sum = 0;
  for (size_t i = first_failed + 1; i + 1 < secs.size(); ++i) {
    ok_after.push_back(secs[i].first);
    ok_sum += secs[i].first;
    failed_sum += secs[i].second;
  }
  ASSERT_GE(ok_after.size(), 2u) << "the kill came too late in the phase";
  std::sort(ok_after.begin(), ok_after.end());
  // The live two served two thirds of the answers before: they keep at least 80 % of that.
  const double live_before = static_cast<double>(before) * 2.0 / 3.0;
  EXPECT_GE(static_cast<double>(ok_after[ok_after.size() / 2]), 0.8 * live_before)
      << "the live members slowed: " << ok_after[ok_after.size() / 2] << "/s against "
      << live_before << "/s before";
  // A third of the keys are the dead member's: about a third of the requests fail.
  const double share = static_cast<double>(failed_sum) / static_cast<double>(ok_sum + failed_sum);
  EXPECT_GT(share, 0.15);
  EXPECT_LT(share, 0.55);
  // Each server counted apart: the live ones' answers are their own counters; the dead one's
  // share failed at once, found by at most one probe per backoff step and worker.
  expect_pool_counts(db);
  const std::string dead = name(b);
  EXPECT_GT(pool_sum(db, "failed_fast", dead), 0);
  EXPECT_GE(pool_sum(db, "probes", dead), 1);
  EXPECT_LE(pool_sum(db, "probes", dead), 2 * 12) << "two workers, 50 ms doubling to 2 s";
  EXPECT_EQ(pool_sum(db, "rehashed"), 0) << "nothing moves unless asked to";
  EXPECT_EQ(topology_events(db, dead + " down"), 1);
  // The report names it: from when, and how its requests failed.
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("pool server " + dead + " failed from +"), std::string::npos)
      << report.output;
}

// ?on-failure=eject: the dead member leaves the ring after its first failed connect, and its
// keys go to the next servers on it (as libmemcached's auto-eject; EventEngine's test checks
// the placement key by key): nothing fails at once, only the requests in flight at the kill.
TEST_F(PoolFailover, WithEjectTheDeadMembersKeysGoToTheLiveOnes) {
  ASSERT_NO_FATAL_FAILURE(run_killing_b("?on-failure=eject", "4s"));
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM phases WHERE status = 'completed'"), 2);
  expect_pool_counts(db);
  const std::string dead = name(b);
  EXPECT_EQ(pool_sum(db, "failed_fast"), 0);
  EXPECT_GE(pool_sum(db, "probes", dead), 1);
  // Per connection (2 threads x 2): the request in flight at the kill; the one waiting for the
  // reconnect that was refused; and room for one more (9 against 2 per connection, once, on a
  // loaded machine: likely a reconnect that reached the killed server's listening socket before
  // its exit closed it, the kernel completing the handshake meanwhile). Without eject, a third
  // of all requests fail.
  EXPECT_LE(pool_sum(db, "failed", dead), 2 * 2 * 3);
  EXPECT_GT(pool_sum(db, "rehashed"), 0);
  EXPECT_EQ(pool_sum(db, "rehashed", dead), 0);
  EXPECT_EQ(topology_events(db, dead + " ejected"), 1);
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("in all went to another server while their own was ejected"),
            std::string::npos)
      << report.output;
}

}  // namespace

namespace {

// More connections than ulimit -n allows: kvdrive raises its soft limit to what the run needs,
// up to the hard limit; above that it refuses before anything is written (it used to connect
// until the descriptors ran out and record a failed run).
TEST(KvdriveFaults, TooFewFileDescriptorsRaisesTheSoftLimitOrIsRefused) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string run = kKvdrive + " run --target " + redis.uri() +
                          " --threads 1 --connections 300 --phases read --keys 100 "
                          "--requests 2000 --db ";
  Process soft({"/bin/sh", "-c", "ulimit -Sn 100 && exec " + run + dir.file("soft.db")},
               dir.file("soft.log"));
  ASSERT_EQ(soft.wait(60'000), 0) << slurp(dir.file("soft.log"));
  auto db = kv::open_results_db(dir.file("soft.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 2000);
  Process hard({"/bin/sh", "-c", "ulimit -n 200 && exec " + run + dir.file("hard.db")},
               dir.file("hard.log"));
  EXPECT_EQ(hard.wait(60'000), 2);
  const std::string out = slurp(dir.file("hard.log"));
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("--connections 300 needs about"), std::string::npos) << out;
  EXPECT_NE(out.find("at most 200"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("hard.db")));
}

}  // namespace

namespace {

// Secrets stay out of argv: a Redis password from --password-file or REDISCLI_AUTH (as
// redis-cli reads it) needs none on the command line; one given there is warned about once,
// and never reaches a --processes process's argv (every user of the host can read
// /proc/PID/cmdline) or the results file.
TEST(KvdriveSecrets, PasswordsComeFromAFileOrTheEnvironmentAndNeverReachAChildsArgv) {
  const std::string password = "s3cr:et@pw-0123";
  StoreServer redis(StoreServer::Kind::redis, {"--requirepass", password});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string target = "redis://127.0.0.1:" + std::to_string(redis.port());
  const std::vector<std::string> load = {"--keys", "100", "--requests", "300", "--threads", "1"};
  auto with = [&](std::vector<std::string> head, const std::string& db) {
    head.insert(head.end(), {"run", "--db", dir.file(db), "--target", target});
    head.insert(head.end(), load.begin(), load.end());
    return head;
  };
  // REDISCLI_AUTH
  Process env(with({"/usr/bin/env", "REDISCLI_AUTH=" + password, kKvdrive}, "env.db"),
              dir.file("env.log"));
  ASSERT_EQ(env.wait(60'000), 0) << slurp(dir.file("env.log"));
  // --password-file, readable by anyone: it works, and says to chmod it.
  { std::ofstream(dir.file("pw")) << password << "\n"; }
  ::chmod(dir.file("pw").c_str(), 0644);
  std::vector<std::string> args = with({kKvdrive}, "file.db");
  args.insert(args.end(), {"--password-file", dir.file("pw")});
  Process file(args, dir.file("file.log"));
  ASSERT_EQ(file.wait(60'000), 0) << slurp(dir.file("file.log"));
  EXPECT_NE(slurp(dir.file("file.log")).find("is readable by anyone: chmod 600 it"),
            std::string::npos)
      << slurp(dir.file("file.log"));
  for (const char* db : {"env.db", "file.db"}) {
    auto d = kv::open_results_db(dir.file(db));
    EXPECT_EQ(query_int(d, "SELECT SUM(ok) FROM driver_seconds WHERE op = 'get'"), 300) << db;
  }
  // In the URI, with --processes 2: a warning, and the processes' argv hold no password.
  const std::string uri = "redis://:" + password + "@127.0.0.1:" + std::to_string(redis.port());
  Process group({kKvdrive, "run", "--db", dir.file("group.db"), "--target", uri, "--processes", "2",
                 "--phases", "read", "--keys", "100", "--duration", "3s", "--threads", "1"},
                dir.file("group.log"));
  ASSERT_TRUE(wait_for_value(dir.file("group.db"), phase_rows_at_least("read", 1)))
      << slurp(dir.file("group.log"));
  int children = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    // A process that exits between the listing and the read fails the read with ESRCH, which
    // libstdc++'s filebuf throws from underflow: slurp reads through operator<<, which catches.
    const std::string cmdline = slurp((entry.path() / "cmdline").string());
    if (cmdline.find("--process-index") == std::string::npos ||
        cmdline.find(dir.file("group.db")) == std::string::npos)
      continue;
    ++children;
    EXPECT_EQ(cmdline.find(password), std::string::npos) << "a process's argv holds the password";
  }
  EXPECT_EQ(children, 2);
  ASSERT_EQ(group.wait(60'000), 0) << slurp(dir.file("group.log"));
  const std::string log = slurp(dir.file("group.log"));
  const std::string warning = "a password on the command line is visible";
  EXPECT_NE(log.find(warning), std::string::npos) << log;
  EXPECT_EQ(log.find(warning, log.find(warning) + 1), std::string::npos) << "said twice: " << log;
  EXPECT_EQ(log.find(password), std::string::npos) << log;
  auto d = kv::open_results_db(dir.file("group.db"));
  EXPECT_EQ(query_int(d, "SELECT COUNT(*) FROM runs WHERE command_line LIKE '%" + password + "%'"),
            0);
  EXPECT_GT(query_int(d, "SELECT SUM(ok) FROM driver_seconds"), 0);
}

}  // namespace
