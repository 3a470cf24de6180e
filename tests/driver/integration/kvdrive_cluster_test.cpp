// kvdrive against a 3-master Redis Cluster made by the test (redis+cluster://seed): keys go to
// their hash slot's master, the counts in the results file equal the sum of the nodes'
// commandstats, and the store counters are polled from every node; a slot migrated during a run
// (IMPORTING / MIGRATING, MIGRATE, SETSLOT NODE) is followed through ASK and MOVED, each redirected
// request counted once.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "redis_cluster.hpp"
#include "report/text_table.hpp"
#include "store/cluster.hpp"

namespace {
using namespace kv::test;

TEST(KvdriveCluster, CountsEqualTheSumOfTheNodesCommandstats) {
  RedisCluster cluster(3);
  KV_START_OR_SKIP(cluster);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", cluster.uri(), "--keys",
                               "3000", "--phases", "load,read", "--duration", "2s", "--threads",
                               "2", "--connections", "3", "--pipeline", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t sets = driver_sum(db, "ops", "redis", "set");
  const int64_t gets = driver_sum(db, "ops", "redis", "get");
  EXPECT_EQ(sets, 3000);
  EXPECT_GT(gets, 0);
  // Every key reached its slot's master: no MOVED (an error of the request) anywhere.
  EXPECT_EQ(driver_sum(db, "errors", "redis", "set"), 0);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "get"), 0);
  EXPECT_EQ(driver_sum(db, "misses", "redis", "get"), 0);
  EXPECT_EQ(cluster.command_calls("set"), sets);
  EXPECT_EQ(cluster.command_calls("get"), gets);
  EXPECT_EQ(cluster.command_stat("get", "rejected_calls"), 0);
  for (int port : cluster.ports()) EXPECT_GT(redis_command_calls(port, "set"), 500) << port;
  // store_stats: one set of names per node, host:port/...
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(DISTINCT name) FROM store_stats "
                      "WHERE name LIKE '127.0.0.1:%/cmdstat_set_calls'"),
            3);
  // No slot moved: the redirect columns are measured zeros, not NULL.
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM client_seconds WHERE cluster_moved IS NULL"), 0);
  EXPECT_EQ(query_int(db, "SELECT SUM(cluster_moved) + SUM(cluster_ask) FROM client_seconds"), 0);
}

// A --command whose key holds __key__ as a hash tag goes to __key__'s master: every one runs
// there, none is refused with MOVED.
TEST(KvdriveCluster, ACommandWithItsKeyAsAHashTagGoesToTheKeysNode) {
  RedisCluster cluster(3);
  KV_START_OR_SKIP(cluster);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", cluster.uri(), "--keys", "3000",
            "--requests", "3000", "--key-pattern", "uniform", "--threads", "2", "--connections",
            "2", "--pipeline", "4", "--command", "HSET {__key__}:h f __data__", "--command",
            "SADD s:{__key__} __data__", "--command-ratio", "2",
            // Multi-key commands on a Cluster: keys of one slot by hash tag.
            "--command", "MSET {__key__}:a __data__ {__key__}:b __data__", "--command",
            "MGET {__key__}:a {__key__}:b"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "ops", "redis", "hset"), 600);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "sadd"), 1200);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "mset"), 600);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "mget"), 600);
  EXPECT_EQ(query_int(db, "SELECT SUM(errors) FROM driver_seconds"), 0);
  for (const auto& [command, calls] : std::vector<std::pair<std::string, long long>>{
           {"hset", 600}, {"sadd", 1200}, {"mset", 600}, {"mget", 600}}) {
    EXPECT_EQ(cluster.command_calls(command), calls) << command;
    EXPECT_EQ(cluster.command_stat(command, "rejected_calls"), 0) << command;  // no CROSSSLOT
  }
  EXPECT_EQ(query_int(db, "SELECT SUM(cluster_moved) FROM client_seconds"), 0);
}

// The slot of every key of the run ({mig} is a hash tag) moves from its master to another one
// while kvdrive reads them: keys already moved get ASK from the old owner (sent again, after
// ASKING, to the new one), then, once the slot is handed over, MOVED (the map follows it).
// Every request counts once: kvdrive's gets are the nodes' executed GETs, and the nodes'
// refused tries (rejected_calls) are kvdrive's MOVED + ASK.
TEST(KvdriveCluster, ASlotMigrationDuringARunIsFollowedAndEachRequestCountsOnce) {
  using kv::drive::store::key_hash_slot;
  RedisCluster cluster(3);
  KV_START_OR_SKIP(cluster);
  const int slot = key_hash_slot("{mig}:0");
  // The owner: the node that answers without a redirect.
  int from = 0;
  for (int p : cluster.ports()) {
    if (redis_command(p, {"GET", "{mig}:0"}).rfind("-MOVED", 0) != 0) from = p;
  }
  ASSERT_NE(from, 0);
  // What that look-up cost the nodes (one GET run, the others refused): not kvdrive's.
  const long long gets_before = cluster.command_calls("get");
  const long long rejected_before = cluster.command_stat("get", "rejected_calls");
  const int to = cluster.ports()[0] == from ? cluster.ports()[1] : cluster.ports()[0];
  TempDir dir;
  const int kKeys = 2000;
  std::vector<std::string> args{kKvdrive,        "run",         "--db",       dir.file("r.db"),
                                "--target",      cluster.uri(), "--keys",     std::to_string(kKeys),
                                "--key-prefix",  "{mig}:",      "--phases",   "load,read",
                                "--duration",    "12s",         "--threads",  "2",
                                "--connections", "2",           "--pipeline", "4"};
  Process kvdrive(args, dir.file("kvdrive.log"));
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 1)))
      << slurp(dir.file("kvdrive.log"));
  // 2,000 keys, 20 per MIGRATE, 10 ms apart: about a second with the slot half-way.
  const int migrated = cluster.migrate_slot(slot, from, to, 20, 10);
  int code = kvdrive.wait(0);
  const bool read_phase_still_on = code == -1;
  if (read_phase_still_on) code = kvdrive.wait(120'000);
  const std::string log = slurp(dir.file("kvdrive.log"));
  ASSERT_EQ(code, 0) << log;
  EXPECT_EQ(migrated, kKeys);
  ASSERT_TRUE(read_phase_still_on) << "the run ended before the migration did: " << log;

  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t sets = driver_sum(db, "ops", "redis", "set");
  const int64_t gets = driver_sum(db, "ops", "redis", "get");
  EXPECT_EQ(sets, kKeys);
  EXPECT_GT(gets, 0);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "get"), 0);
  EXPECT_EQ(driver_sum(db, "timeouts", "redis", "get"), 0);
  EXPECT_EQ(driver_sum(db, "misses", "redis", "get"), 0);  // every key found where it went
  EXPECT_EQ(cluster.command_calls("set"), sets);
  EXPECT_EQ(cluster.command_calls("get") - gets_before, gets);
  const int64_t moved = query_int(db, "SELECT SUM(cluster_moved) FROM client_seconds");
  const int64_t asked = query_int(db, "SELECT SUM(cluster_ask) FROM client_seconds");
  EXPECT_GT(moved, 0);
  EXPECT_GT(asked, 0);
  EXPECT_EQ(cluster.command_stat("get", "rejected_calls") - rejected_before +
                cluster.command_stat("set", "rejected_calls"),
            moved + asked);
  EXPECT_EQ(cluster.command_calls("asking"), asked);
  // The new owner served the reads once the slot was handed over.
  EXPECT_GT(redis_command_calls(to, "get"), 0);
  std::cout << "gets " << gets << ", MOVED " << moved << ", ASK " << asked << "\n";

  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("hint: " + kv::fmt_int(static_cast<double>(moved)) + " MOVED and " +
                               kv::fmt_int(static_cast<double>(asked)) + " ASK redirects followed"),
            std::string::npos)
      << report.output;
}

}  // namespace

namespace {

// A master of a 3 + 3 cluster killed during a read phase: once its replica is promoted and the
// cluster is ok again, kvdrive re-reads the slot map (a lost node asks for it) and its gets
// reach the new master within 3 s; meanwhile the dead node's share failed fast and the other
// masters kept serving. Every answered get is one a node ran: the survivors' GETs plus the
// dead one's before the kill. (Before, the map was re-read only after a MOVED: kvdrive sent
// those slots to the dead address for the rest of the run.) A timing suite: plain build only.
// ?read-from=replica: every get goes to a replica of its key's master (READONLY first on every
// connection) and every set to the master; the nodes' own commandstats say so, exactly.
TEST(KvdriveCluster, WithReadFromReplicaTheGetsGoToTheReplicasAndTheSetsToTheMasters) {
  RedisCluster cluster(3, 1);
  KV_START_OR_SKIP(cluster);
  const std::vector<int> masters = cluster.master_ports();
  ASSERT_EQ(masters.size(), 3u);
  TempDir dir;
  const std::string target = cluster.uri() + "?read-from=replica";
  auto load = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", target, "--keys",
                                "2000", "--phases", "load", "--threads", "2"});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  // CLUSTER SLOTS lists a replica once the node answering knows it replicated something.
  const int seed = cluster.ports().front();
  std::string reply;
  auto replicas_listed = [&] {
    reply = tcp_request(seed, "*2\r\n$7\r\nCLUSTER\r\n$5\r\nSLOTS\r\n", "\r\n", 1000);
    try {
      const auto ranges = kv::drive::store::parse_cluster_slots(reply, "127.0.0.1");
      return !ranges.empty() && std::all_of(ranges.begin(), ranges.end(),
                                            [](const auto& r) { return !r.replicas.empty(); });
    } catch (const std::exception&) {
      return false;
    }
  };
  for (int i = 0; i < 100 && !replicas_listed(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(replicas_listed()) << reply;
  std::vector<long long> gets_before, sets_before;
  for (int p : cluster.ports()) {
    gets_before.push_back(redis_command_calls(p, "get"));
    sets_before.push_back(redis_command_calls(p, "set"));
  }
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", target, "--keys",
                               "2000", "--phases", "mixed", "--requests", "6000", "--threads", "2",
                               "--connections", "2", "--pipeline", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(out.output.find("no replica"), std::string::npos) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string run2 = " FROM driver_seconds JOIN phases USING (phase_id) WHERE run_id = 2 ";
  long long master_gets = 0, replica_gets = 0, master_sets = 0;
  int replicas_with_gets = 0;
  for (size_t i = 0; i < cluster.ports().size(); ++i) {
    const int p = cluster.ports()[i];
    const bool master = std::find(masters.begin(), masters.end(), p) != masters.end();
    const long long gets = redis_command_calls(p, "get") - gets_before[i];
    (master ? master_gets : replica_gets) += gets;
    if (master) master_sets += redis_command_calls(p, "set") - sets_before[i];
    if (!master && gets > 0) ++replicas_with_gets;
  }
  EXPECT_EQ(replica_gets, query_int(db, "SELECT SUM(hits + misses)" + run2 + "AND op = 'get'"));
  EXPECT_EQ(master_gets, 0);
  EXPECT_EQ(replicas_with_gets, 3);
  EXPECT_EQ(master_sets, query_int(db, "SELECT SUM(ok)" + run2 + "AND op = 'set'"));
  EXPECT_EQ(query_int(db, "SELECT SUM(errors + timeouts)" + run2), 0);
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(cluster_moved), 0) FROM client_seconds"), 0);
}

TEST(ClusterFailover, APromotedReplicaGetsItsMastersSlotsWithinSeconds) {
  RedisCluster cluster(3, 1, 1500);
  KV_START_OR_SKIP(cluster);
  const std::vector<int> masters = cluster.master_ports();
  ASSERT_EQ(masters.size(), 3u);
  const int seed = cluster.ports().front();
  const int victim = masters[0] == seed ? masters[1] : masters[0];  // not the URI's seed
  TempDir dir;
  Process kvdrive(
      {kKvdrive, "run", "--db", dir.file("r.db"), "--target", cluster.uri(), "--keys", "3000",
       "--phases", "load,read", "--duration", "14s", "--threads", "2", "--connections", "2"},
      dir.file("kvdrive.log"));
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 2)))
      << slurp(dir.file("kvdrive.log"));
  // The victim's pace, then its count and the kill: what it answers between the two is
  // answered but not in its count (on a loaded machine that gap can take milliseconds).
  const auto paced_from = std::chrono::steady_clock::now();
  const long long paced_gets = redis_command_calls(victim, "get");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto counted_at = std::chrono::steady_clock::now();
  const long long victim_gets = redis_command_calls(victim, "get");
  cluster.kill(victim);
  const auto killed_at = std::chrono::steady_clock::now();
  const double victim_per_ms =
      static_cast<double>(victim_gets - paced_gets) /
      std::chrono::duration<double, std::milli>(counted_at - paced_from).count();
  const double gap_ms = std::chrono::duration<double, std::milli>(killed_at - counted_at).count();
  cluster.wait_ok_without(victim, 30'000);
  // The promoted replica: a master now that was not one before.
  int promoted = 0;
  for (int p : cluster.master_ports())
    if (std::find(masters.begin(), masters.end(), p) == masters.end()) promoted = p;
  ASSERT_NE(promoted, 0);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_GT(redis_command_calls(promoted, "get"), 0)
      << "no get reached the promoted master within 3 s of cluster_state:ok";
  int code = kvdrive.wait(0);
  ASSERT_EQ(code, -1) << "the run ended before the failover was followed";
  code = kvdrive.wait(120'000);
  const std::string log = slurp(dir.file("kvdrive.log"));
  ASSERT_EQ(code, 0) << log;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t answered = query_int(db, "SELECT SUM(hits + misses) FROM driver_seconds");
  long long ran = victim_gets;
  for (int p : cluster.ports())
    if (p != victim) ran += redis_command_calls(p, "get");
  // Within what was in flight at the kill (2 threads x 2 connections) and what the victim
  // answered between its commandstats and the kill (its pace over that gap, twice over).
  EXPECT_LE(static_cast<double>(ran - answered), 50.0) << log;
  EXPECT_LE(static_cast<double>(answered - ran), 50.0 + 2 * victim_per_ms * gap_ms)
      << "the victim's pace " << victim_per_ms << "/ms, the gap " << gap_ms << " ms\n"
      << log;
  // The failed requests were the dead node's share only, not the whole cluster's.
  const int64_t failed = query_int(db, "SELECT SUM(errors + timeouts) FROM driver_seconds");
  EXPECT_GT(failed, 0);
  EXPECT_LT(failed, answered / 2) << log;
  // The failover as events: the node lost, and its slots going to the promoted replica.
  const std::string topology = "SELECT COUNT(*) FROM events WHERE kind = 'cluster_topology' AND ";
  EXPECT_GE(query_int(db, topology + "message LIKE '%node 127.0.0.1:" + std::to_string(victim) +
                              " lost%'"),
            1)
      << log;
  EXPECT_GE(query_int(db, topology + "message LIKE '%slot map changed%from 127.0.0.1:" +
                              std::to_string(victim) + " to 127.0.0.1:" + std::to_string(promoted) +
                              "%'"),
            1)
      << log;
  // ... and the window's end: the first answer from the promoted replica, after the change.
  EXPECT_GE(query_int(db, topology + "message LIKE '%first answer from 127.0.0.1:" +
                              std::to_string(promoted) + ",%' AND ts_us >= (SELECT MIN(ts_us) " +
                              "FROM events WHERE message LIKE '%slot map changed%')"),
            1)
      << log;
}

}  // namespace
