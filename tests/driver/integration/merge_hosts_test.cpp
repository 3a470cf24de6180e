// `kvdrive merge` of files from several database hosts: each run of a merged file reads its own
// kvmon copy and its own database host (two client hosts whose stores had the same pid), and
// each node of a Redis Cluster is matched to its own kvmon.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "merge_test_util.hpp"
#include "redis_cluster.hpp"
#include "view/hints.hpp"

namespace {
using namespace kv::test;

bool kvmon_listens_within(int port, int timeout_ms) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < until) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
    ::close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Two client hosts' files whose kvmon copies come from two database hosts with the same store
// pid at the same times (the second file is the first, its run given another UUID and its kvmon
// session another host, rss and load marked): merged, each run's timeline, phase report and
// store instance read only its own host's rows.
TEST(MergeHosts, EachRunReadsItsOwnKvmonCopyAndDatabaseHost) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const int port = free_port();
  Process kvmon({std::string(KV_BINARY_DIR) + "/monitor/kvmon", "--db", dir.file("kvmon.db"),
                 "--pid", std::to_string(redis.pid()), "--interval", "100ms", "--host-interval",
                 "100ms", "--listen", "127.0.0.1:" + std::to_string(port)},
                dir.file("kvmon.log"));
  ASSERT_TRUE(kvmon_listens_within(port, 30'000)) << slurp(dir.file("kvmon.log"));
  const std::string a = dir.file("a.db"), b = dir.file("b.db"), m = dir.file("m.db");
  auto r =
      run_kvdrive(dir, {"run", "--db", a, "--target", redis.uri(), "--keys", "20000", "--threads",
                        "2", "--phases", "load", "--monitor", "127.0.0.1:" + std::to_string(port)});
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  {
    auto db = kv::Database::open(a);
    db.exec("VACUUM INTO '" + b + "'");
  }
  {
    auto db = kv::Database::open(b);
    db.exec(
        "UPDATE runs SET run_uuid = 'b-' || run_uuid, client_host = 'client-b';"
        "UPDATE monitor_sessions SET host = 'db-b'; UPDATE process_instances SET host = 'db-b';"
        "UPDATE process_samples SET rss_kib = rss_kib + 1000000000;"
        "UPDATE host_samples SET load1 = 99.5;");
  }
  auto mr = merge(dir, m, {a, b});
  ASSERT_EQ(mr.exit_code, 0) << mr.output;
  EXPECT_NE(mr.output.find("2 runs added (0 there already), 2 kvmon sessions added"),
            std::string::npos)
      << mr.output;
  auto db = kv::open_results_db(m);
  const std::string host_a =
      query_text(db, "SELECT host FROM monitor_sessions WHERE host <> 'db-b'");
  for (const bool is_b : {false, true}) {
    const std::string run = "(SELECT run_id FROM runs WHERE client_host " +
                            std::string(is_b ? "=" : "<>") + " 'client-b')";
    SCOPED_TRACE(is_b ? "run of b.db" : "run of a.db");
    const std::string mine = is_b ? "rss_kib >= 1000000000" : "rss_kib < 1000000000";
    const std::string theirs = is_b ? "rss_kib < 1000000000" : "rss_kib >= 1000000000";
    EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM timeline WHERE run_id = " + run + " AND " + mine),
              1);
    EXPECT_EQ(
        query_int(db, "SELECT COUNT(*) FROM timeline WHERE run_id = " + run + " AND " + theirs), 0);
    EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM timeline WHERE run_id = " + run +
                                " AND load1 IS NOT NULL"),
              1);
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM timeline WHERE run_id = " + run + " AND load1 " +
                                (is_b ? "<>" : "=") + " 99.5"),
              0);
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM phase_report WHERE run_id = " + run +
                                " AND (peak_rss_kib " + (is_b ? "<" : ">=") +
                                " 1000000000 OR load1 " + (is_b ? "<>" : "=") + " 99.5)"),
              0);
    const int64_t target = query_int(db, "SELECT target_id FROM targets WHERE run_id = " + run);
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM target_instances WHERE target_id = " +
                                std::to_string(target)),
              1);
    auto inst = kv::drive::store_instance(db, target);
    ASSERT_TRUE(inst.has_value());
    EXPECT_EQ(query_text(db, "SELECT host FROM process_instances WHERE instance_id = " +
                                 std::to_string(*inst)),
              is_b ? "db-b" : host_a);
  }
}

// A Redis Cluster of three nodes, one kvmon per node (each watching its node's process, as one
// kvmon per node host would), all three pulled by one run: each node is matched to its own
// kvmon's instance of its own pid (node_instances), never another node's.
TEST(MergeHosts, EachClusterNodeIsMatchedToItsOwnKvmon) {
  RedisCluster cluster(3);
  KV_START_OR_SKIP(cluster);
  TempDir dir;
  std::vector<Process> kvmons;
  std::vector<int> links;
  std::vector<int64_t> pids;
  for (int port : cluster.ports()) {
    const std::string info = redis_info(port, "server");
    const auto at = info.find("process_id:");
    ASSERT_NE(at, std::string::npos) << info;
    pids.push_back(std::stoll(info.substr(at + 11)));
    links.push_back(free_port());
    kvmons.emplace_back(
        std::vector<std::string>{std::string(KV_BINARY_DIR) + "/monitor/kvmon", "--db",
                                 dir.file("kvmon" + std::to_string(port) + ".db"), "--pid",
                                 std::to_string(pids.back()), "--interval", "200ms", "--listen",
                                 "127.0.0.1:" + std::to_string(links.back())},
        dir.file("kvmon" + std::to_string(port) + ".log"));
  }
  std::vector<std::string> args = {"run",    "--db", dir.file("r.db"), "--target", cluster.uri(),
                                   "--keys", "3000", "--threads",      "2",        "--phases",
                                   "load"};
  for (int l : links) {
    ASSERT_TRUE(kvmon_listens_within(l, 30'000));
    args.emplace_back("--monitor");
    args.push_back("127.0.0.1:" + std::to_string(l));
  }
  auto r = run_kvdrive(dir, args);
  for (auto& k : kvmons) {
    k.signal(SIGTERM);
    EXPECT_EQ(k.wait(10'000), 0);
  }
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM node_instances"), 3);
  for (size_t i = 0; i < links.size(); ++i) {
    const std::string node = "'127.0.0.1:" + std::to_string(cluster.ports()[i]) + "'";
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM node_instances WHERE node = " + node), 1);
    EXPECT_EQ(query_int(db, "SELECT pid FROM node_instances WHERE node = " + node), pids[i]);
    EXPECT_EQ(query_text(db, "SELECT link FROM node_instances WHERE node = " + node),
              "127.0.0.1:" + std::to_string(links[i]));
  }
}

}  // namespace
