// kvdrive against real servers, continued: a run whose every request was refused is failed;
// Redis authentication (an ACL user and SELECT, a password Redis has none for); --processes
// groups (one workload shared, one process killed); --ttl on both protocols.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// A run in which every request failed (a user the store lets in but not write: every SET is
// refused with NOPERM) is failed, not "completed": it exits 1, not 0, and the summary says so
// before its req/s table.
TEST(KvdriveWorkload, ARunWhoseRequestsAllFailedIsFailed) {
  StoreServer redis(StoreServer::Kind::redis,
                    {"--user", "reader", "on", ">readerpw", "~*", "&*", "+@all", "-set"});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               "redis://reader:readerpw@127.0.0.1:" + std::to_string(redis.port()),
                               "--keys", "300", "--phases", "load"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  auto said = out.output.find("run 1 FAILED");
  EXPECT_NE(said, std::string::npos) << out.output;
  EXPECT_LT(said, out.output.find("req/s")) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'failed'"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE status = 'failed'"), 1);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "set"), 300);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 0);  // refused before it ran
}

TEST(KvdriveWorkload, RedisAuthAclUserAndSelect) {
  StoreServer redis(StoreServer::Kind::redis, {"--requirepass", "topsecret", "--user", "alice",
                                               "on", ">alicepw", "~*", "&*", "+@all"});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string hp = "127.0.0.1:" + std::to_string(redis.port());
  auto pw =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                        "redis://topsecret@" + hp + "/2", "--keys", "300", "--phases", "load"});
  ASSERT_EQ(pw.exit_code, 0) << pw.output;
  auto acl =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                        "redis://alice:alicepw@" + hp + "/3", "--keys", "200", "--phases", "load"});
  ASSERT_EQ(acl.exit_code, 0) << acl.output;
  // The keys landed in the databases asked for.
  std::string reply = tcp_request(redis.port(), "AUTH topsecret\r\nINFO keyspace\r\n", "\r\n\r\n");
  EXPECT_NE(reply.find("db2:keys=300,"), std::string::npos) << reply;
  EXPECT_NE(reply.find("db3:keys=200,"), std::string::npos) << reply;
  // The password never reaches the results file.
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM targets WHERE uri LIKE '%topsecret%' OR uri LIKE "
                      "'%alicepw%'"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE command_line LIKE '%alicepw%' OR "
                      "command_line LIKE '%topsecret%'"),
            0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE command_line LIKE '%alice:***@%'"), 1);
  // A wrong password: one clear line, exit 1, nothing more written.
  auto wrong = run_kvdrive(
      dir, {"run", "--db", dir.file("w.db"), "--target", "redis://nope@" + hp, "--keys", "10"});
  EXPECT_EQ(wrong.exit_code, 1) << wrong.output;
  EXPECT_NE(wrong.output.find("AUTH failed"), std::string::npos) << wrong.output;
  // The store's whole message, not its first word.
  EXPECT_NE(wrong.output.find("WRONGPASS invalid username-password pair"), std::string::npos)
      << wrong.output;
  EXPECT_EQ(wrong.output.find("nope"), std::string::npos) << "the password was echoed";
  std::ifstream f(dir.file("w.db"));
  EXPECT_FALSE(f.good());
}

// A password given to a Redis that has none: the store's own explanation, not "ERR".
TEST(KvdriveWorkload, APasswordForARedisWithoutOneIsRefusedInTheStoresWords) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target",
            "redis://:notneeded@127.0.0.1:" + std::to_string(redis.port()), "--keys", "10"});
  EXPECT_EQ(out.exit_code, 1) << out.output;
  EXPECT_NE(out.output.find("called without any password configured"), std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("notneeded"), std::string::npos) << "the password was echoed";
}

TEST(KvdriveWorkload, SeveralProcessesShareOneWorkloadAndOneGroup) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target", memcached.uri(),
            "--keys", "9000", "--threads", "2", "--processes", "3", "--name", "writers"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("processes"), std::string::npos) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE status = 'completed' AND "
                      "run_group LIKE 'writers-%' AND process_count = 3"),
            3);
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT process_index) FROM runs"), 3);
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT client_pid) FROM runs"), 3);
  // Every key was written exactly once across the processes, and the stores agree.
  EXPECT_EQ(tcp_request(redis.port(), "DBSIZE\r\n", "\r\n"), ":9000\r\n");
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 9000);
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 9000);
  std::string mstats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(mstats, "curr_items"), 9000);
  EXPECT_EQ(stat_value(mstats, "get_hits"), 9000);
  // The group summary adds the processes up.
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM group_summary WHERE op = 'set'"), 18000);
  EXPECT_EQ(query_int(db, "SELECT MIN(processes) FROM group_summary"), 3);
}

// One process of a --processes group killed -9: the group says which one died and of what,
// exits 1, and the dead process's run is marked incomplete (the others complete).
TEST(KvdriveWorkload, AKilledProcessOfAGroupIsReportedAndFailsTheGroup) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "3000",
             "--phases", "load,read", "--duration", "8s", "--processes", "3"},
            log);
  // A process is in its read phase (8 s long), so it is still running when killed. Not "every
  // process": under ThreadSanitizer, with another test's three processes beside them on two
  // cores, the first ended its read phase before the last began hers.
  ASSERT_TRUE(wait_for_value(dir.file("r.db"),
                             "SELECT count(*) FROM phases WHERE kind = 'read' AND ended_ts_us IS "
                             "NULL",
                             120'000))
      << slurp(log);
  // The one whose read phase started last: a child of this group, still running.
  const auto victim = static_cast<pid_t>(
      query_int(dir.file("r.db"),
                "SELECT r.client_pid FROM runs r JOIN phases p USING (run_id) WHERE p.kind = "
                "'read' AND p.ended_ts_us IS NULL ORDER BY p.started_ts_us DESC LIMIT 1"));
  std::string children =
      slurp("/proc/" + std::to_string(p.pid()) + "/task/" + std::to_string(p.pid()) + "/children");
  std::istringstream in(children);
  std::vector<pid_t> pids;
  for (pid_t c; in >> c;) pids.push_back(c);
  ASSERT_NE(std::find(pids.begin(), pids.end(), victim), pids.end())
      << victim << " not in " << children;
  ASSERT_EQ(::kill(victim, SIGKILL), 0);
  EXPECT_EQ(p.wait(150'000), 1) << slurp(log);  // the others may not have begun reading yet
  std::string out = slurp(log);
  EXPECT_NE(out.find("2 of 3 processes completed; 1 did not"), std::string::npos) << out;
  EXPECT_NE(out.find("(pid " + std::to_string(victim) + ") was killed by signal 9"),
            std::string::npos)
      << out;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(
      query_int(db, "SELECT count(*) FROM runs WHERE status = 'incomplete' AND client_pid = " +
                        std::to_string(victim)),
      1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 2);
}

// --ttl reaches the server (checked where it is exact: the TTL the server holds for each key,
// Redis TTL and memcached's mg ... t, not hits in a read that must beat the clock), and the
// values expire (checked after a wait that only has to be longer than the TTL).
TEST(KvdriveWorkload, TtlExpiresTheValuesOnBothProtocols) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  // The TTL the server holds: 1 h as set, less the time since (a generous 10 minutes).
  auto held_ttl = [&](const StoreServer* server, const std::string& key) -> long long {
    if (server == &redis) {
      std::string r = tcp_request(redis.port(), "TTL " + key + "\r\n", "\r\n");
      return r.size() > 1 && r[0] == ':' ? std::stoll(r.substr(1)) : -100;
    }
    std::string r = tcp_request(memcached.port(), "mg " + key + " t\r\n", "\r\n");
    auto t = r.find(" t");
    return r.rfind("HD", 0) == 0 && t != std::string::npos ? std::stoll(r.substr(t + 2)) : -100;
  };
  for (const auto* server : {&redis, &memcached}) {
    SCOPED_TRACE(server->uri());
    auto load =
        run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server->uri(), "--keys",
                          "500", "--phases", "load", "--ttl", "1h", "--key-prefix", "long:"});
    ASSERT_EQ(load.exit_code, 0) << load.output;
    for (const char* key : {"long:0", "long:250", "long:499"}) {
      long long ttl = held_ttl(server, key);
      EXPECT_LE(ttl, 3600) << key;
      EXPECT_GT(ttl, 3000) << key;
    }
    auto no_ttl = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server->uri(),
                                    "--keys", "10", "--phases", "load", "--key-prefix", "none:"});
    ASSERT_EQ(no_ttl.exit_code, 0) << no_ttl.output;
    EXPECT_EQ(held_ttl(server, "none:5"), -1);  // no --ttl: no expiry
    auto short_ttl = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server->uri(),
                                       "--keys", "500", "--phases", "load", "--ttl", "1s"});
    ASSERT_EQ(short_ttl.exit_code, 0) << short_ttl.output;
  }
  // Every 1 s value was set before this point, so after 2.2 s more all have expired however
  // slowly the loads ran.
  std::this_thread::sleep_for(std::chrono::milliseconds(2200));
  for (const auto* server : {&redis, &memcached}) {
    auto read = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", server->uri(),
                                  "--keys", "500", "--phases", "read"});
    ASSERT_EQ(read.exit_code, 0) << read.output;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  for (int run : {7, 8})
    EXPECT_EQ(query_int(db,
                        "SELECT SUM(misses) FROM driver_seconds d JOIN phases p USING "
                        "(phase_id) WHERE p.run_id = " +
                            std::to_string(run)),
              500);
}

}  // namespace
