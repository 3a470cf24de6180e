// MonitorLink against the real kvmon binary watching a real redis-server: rows arrive in
// kvdrive's results file in kvdrive's time base, across link drops and kvmon restarts.
#include "kvmon_link/monitor_link.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/sqlite.hpp"
#include "kvmon_process.hpp"
#include "servers.hpp"
#include "tcp_cutter.hpp"

namespace kv::drive {
namespace {

using kv::test::Process;
using kv::test::query_int;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;

// Watching one process, sampling it and the host every `interval`.
struct Kvmon : kv::test::KvmonProcess {
  void start(pid_t target, const std::string& interval = "100ms") {
    KvmonProcess::start(
        {"--pid", std::to_string(target), "--interval", interval, "--host-interval", interval});
  }
};

// Flushes every 100 ms until `done` holds or timeout_ms passes.
bool flush_until(MonitorLink& link, Database& db, const std::function<bool()>& done, int timeout_ms,
                 std::vector<MonitorLink::Latest>* latest = nullptr) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    auto l = link.flush_into(db);
    if (latest) *latest = l;
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return done();
}

// Waits for kvmon to listen, then starts the link (start() may be called once only).
void start_link(MonitorLink& link, int kvmon_port) {
  for (int i = 0; i < 200; ++i) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(kvmon_port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool up = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  link.start();
}

TEST(MonitorLink, PullsSamplesInOurTimeBaseKeepingTheRawTime) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  Kvmon kvmon;
  kvmon.start(redis.pid());
  TempDir dir;
  Database db = open_results_db(dir.file("run.db"));
  MonitorLink link("127.0.0.1:" + std::to_string(kvmon.port), "", false);
  start_link(link, kvmon.port);
  ASSERT_TRUE(link.clock());
  std::vector<MonitorLink::Latest> latest;
  ASSERT_TRUE(flush_until(
      link, db, [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples") >= 10; }, 10'000,
      &latest))
      << kvmon.log();
  link.stop();
  link.flush_into(db);

  // One host: the measured offset is within a few ms of 0, its uncertainty small.
  int64_t offset = query_int(db, "SELECT clock_offset_us FROM monitor_sessions");
  int64_t uncertainty = query_int(db, "SELECT clock_uncertainty_us FROM monitor_sessions");
  std::cout << "offset " << offset << " us, uncertainty " << uncertainty << " us\n";
  EXPECT_LT(std::abs(offset), 3000);
  EXPECT_GE(uncertainty, 0);
  EXPECT_LT(uncertainty, 3000);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM monitor_sessions WHERE status = 'completed' "
                      "AND link = '127.0.0.1:" +
                          std::to_string(kvmon.port) + "'"),
            1);
  EXPECT_EQ(query_int(db, "SELECT pid FROM process_instances"), redis.pid());
  // Every row: our time = kvmon's time + the offset, and kvmon's time is kept.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE remote_ts_us IS NULL "
                      "OR ts_us - remote_ts_us <> " +
                          std::to_string(offset)),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE remote_ts_us IS NULL "
                      "OR ts_us - remote_ts_us <> " +
                          std::to_string(offset)),
            0);
  EXPECT_GT(query_int(db, "SELECT COUNT(*) FROM host_samples"), 5);
  // The values are kvmon's own: same RSS at the same (raw) time as in kvmon's file.
  db.exec("ATTACH DATABASE '" + kvmon.db() + "' AS k");
  EXPECT_GE(query_int(db,
                      "SELECT COUNT(*) FROM process_samples p JOIN k.process_samples q "
                      "ON q.ts_us = p.remote_ts_us AND q.rss_kib = p.rss_kib"),
            5);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples p JOIN k.process_samples q "
                      "ON q.ts_us = p.remote_ts_us WHERE q.rss_kib IS NOT p.rss_kib "
                      "OR q.major_faults IS NOT p.major_faults"),
            0);
  ASSERT_FALSE(latest.empty());
  EXPECT_EQ(latest[0].name, "redis-server");
  EXPECT_GT(latest[0].rss_kib.value_or(0), 0);
}

TEST(MonitorLink, UnreachableIsAClearErrorUnlessOptional) {
  int port = kv::test::free_port();
  MonitorLink strict("127.0.0.1:" + std::to_string(port), "", false);
  try {
    strict.start();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--monitor 127.0.0.1:" + std::to_string(port)),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
  }
  MonitorLink optional("127.0.0.1:" + std::to_string(port), "", true);
  EXPECT_NO_THROW(optional.start());
  optional.stop();
  EXPECT_THROW(MonitorLink("no-port", "", false), std::invalid_argument);
}

TEST(MonitorLink, LinkDropIsBackfilledWithoutAGap) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  Kvmon kvmon;
  kvmon.start(redis.pid(), "50ms");
  kv::test::TcpCutter cutter(kvmon.port);
  TempDir dir;
  Database db = open_results_db(dir.file("run.db"));
  MonitorLink link("127.0.0.1:" + std::to_string(cutter.port()), "", false);
  start_link(link, kvmon.port);
  auto count = [&] { return query_int(db, "SELECT COUNT(*) FROM host_samples"); };
  ASSERT_TRUE(flush_until(
      link, db, [&] { return count() >= 5; }, 10'000))
      << kvmon.log();
  cutter.cut_and_pause(true);  // connections dropped; new ones refused for a while
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  cutter.cut_and_pause(false);
  int64_t before = count();
  ASSERT_TRUE(flush_until(
      link, db, [&] { return count() >= before + 30; }, 15'000));
  link.stop();
  link.flush_into(db);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM monitor_sessions"), 1) << "same kvmon";
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'monitor_gap'"), 0);
  // No gap: every tick kvmon itself stored between our first and last is ours too (compared
  // on kvmon's clock: the raw scheduled time). kvmon may skip ticks on a loaded machine, so
  // its own file is the reference, not the nominal interval. SIGTERM: it writes what it queued.
  kvmon.proc.signal(SIGTERM);
  ASSERT_EQ(kvmon.proc.wait(10'000), 0) << kvmon.log();
  db.exec("ATTACH DATABASE '" + kvmon.db() + "' AS k");
  const std::string raw =
      "(SELECT scheduled_ts_us - ts_us + remote_ts_us AS s FROM main.host_samples)";
  EXPECT_GT(query_int(db,
                      "SELECT COUNT(*) FROM k.host_samples WHERE scheduled_ts_us BETWEEN "
                      "(SELECT MIN(s) FROM " +
                          raw + ") AND (SELECT MAX(s) FROM " + raw + ")"),
            before + 20);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM k.host_samples h WHERE scheduled_ts_us BETWEEN "
                      "(SELECT MIN(s) FROM " +
                          raw + ") AND (SELECT MAX(s) FROM " + raw +
                          ") "
                          "AND NOT EXISTS (SELECT 1 FROM " +
                          raw + " WHERE s = h.scheduled_ts_us)"),
            0);
}

TEST(MonitorLink, KvmonRestartIsANewSessionAndAGapEvent) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  Kvmon kvmon;
  kvmon.start(redis.pid());
  TempDir dir;
  Database db = open_results_db(dir.file("run.db"));
  MonitorLink link("127.0.0.1:" + std::to_string(kvmon.port), "", false);
  start_link(link, kvmon.port);
  ASSERT_TRUE(flush_until(
      link, db, [&] { return query_int(db, "SELECT COUNT(*) FROM host_samples") >= 5; }, 10'000))
      << kvmon.log();
  kvmon.proc.signal(SIGKILL);
  kvmon.proc.wait(5000);
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  kvmon.start(redis.pid());
  ASSERT_TRUE(flush_until(
      link, db,
      [&] {
        return query_int(db,
                         "SELECT COUNT(*) FROM host_samples WHERE session_id = "
                         "(SELECT MAX(session_id) FROM monitor_sessions)") >= 5 &&
               query_int(db, "SELECT COUNT(*) FROM monitor_sessions") == 2;
      },
      15'000))
      << kvmon.log();
  link.stop();
  link.flush_into(db);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM events WHERE kind = 'monitor_gap' "
                      "AND source = 'kvdrive' AND message LIKE '%restarted%'"),
            1);
  // One gap, one event: the new kvmon's history not reaching back is the same gap (it was
  // recorded a second time).
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'monitor_gap'"), 1);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM monitor_sessions WHERE status = 'interrupted'"), 1);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM monitor_sessions WHERE status = 'completed'"), 1);
  // The new session has its own instance row for the same redis-server.
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT session_id) FROM process_instances WHERE pid = " +
                              std::to_string(redis.pid())),
            2);
}

}  // namespace
}  // namespace kv::drive
