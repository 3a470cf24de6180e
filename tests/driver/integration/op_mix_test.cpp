// --mix against real redis-server and memcached (text and binary): every operation's count, and
// its hits and misses, must equal what the store counted (Redis: INFO commandstats per command;
// memcached: its stats, where cmd_set counts set, add, replace, append and prepend alike).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "kvdrive_test_util.hpp"
#include "workload/workload.hpp"
#include "workload/workload_options.hpp"

namespace {
using namespace kv::test;

constexpr int kKeys = 2'000;
constexpr int kRequests = 20'000;

// A load phase, then a mixed phase of every op; keys uniform, 1 in 10 gets of a key never
// written (misses), a TTL for touch.
std::vector<std::string> mix_args(const std::string& db, const std::string& target,
                                  const std::string& mix) {
  return {"run",
          "--db",
          db,
          "--target",
          target,
          "--keys",
          std::to_string(kKeys),
          "--requests",
          std::to_string(kRequests),
          "--phases",
          "load,mixed",
          "--mix",
          mix,
          "--key-pattern",
          "uniform",
          "--hit-rate",
          "0.9",
          "--ttl",
          "1h",
          "--threads",
          "2",
          "--connections",
          "2",
          "--pipeline",
          "4"};
}

int64_t sum(kv::Database& db, const std::string& column, const std::string& protocol,
            const std::string& op) {
  return driver_sum(db, column, protocol, op, "mixed");
}

TEST(OpMix, EveryRedisCommandCountsAsCommandstatsSay) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string mix =
      "get:40,set:10,delete:10,incr:10,decr:5,add:5,replace:5,append:5,touch:10";
  auto out = run_kvdrive(dir, mix_args(dir.file("r.db"), redis.uri(), mix));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));

  // The mix, exactly: of every 100 requests of the phase, 40 gets, 10 sets, ...
  EXPECT_EQ(sum(db, "ops", "redis", "get"), kRequests * 40 / 100);
  EXPECT_EQ(sum(db, "ops", "redis", "touch"), kRequests * 10 / 100);
  EXPECT_EQ(sum(db, "ops", "redis", "decr"), kRequests * 5 / 100);
  // The load phase set every key and every counter key (incr and decr are in the mix).
  EXPECT_EQ(driver_sum(db, "ops", "redis", "set", "load"), 2 * kKeys);
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);

  // Redis: SET counts set, add (NX) and replace (XX), in both phases.
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set") +
                                                          sum(db, "ops", "redis", "add") +
                                                          sum(db, "ops", "redis", "replace"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), sum(db, "ops", "redis", "get"));
  EXPECT_EQ(redis_command_calls(redis.port(), "del"), sum(db, "ops", "redis", "delete"));
  EXPECT_EQ(redis_command_calls(redis.port(), "incr"), sum(db, "ops", "redis", "incr"));
  EXPECT_EQ(redis_command_calls(redis.port(), "decr"), sum(db, "ops", "redis", "decr"));
  EXPECT_EQ(redis_command_calls(redis.port(), "append"), sum(db, "ops", "redis", "append"));
  EXPECT_EQ(redis_command_calls(redis.port(), "expire"), sum(db, "ops", "redis", "touch"));
  const std::string stats = redis_info(redis.port(), "stats");
  EXPECT_EQ(stat_value(stats, "keyspace_hits"), sum(db, "hits", "redis", "get"));
  EXPECT_EQ(stat_value(stats, "keyspace_misses"), sum(db, "misses", "redis", "get"));
  EXPECT_GT(sum(db, "misses", "redis", "get"), 0);
  // Deletes and touches find some keys and miss others (deleted ones); add misses (not stored)
  // where the key is there. Each op's answers are its hits, misses or plain oks.
  EXPECT_GT(sum(db, "hits", "redis", "delete"), 0);
  EXPECT_GT(sum(db, "misses", "redis", "delete"), 0);
  EXPECT_GT(sum(db, "misses", "redis", "add"), 0);
  EXPECT_EQ(sum(db, "hits", "redis", "incr"), sum(db, "ops", "redis", "incr"));

  // The report lists the ops in the mix's order of kinds: set, get, delete, ...
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const size_t set = report.output.find(" mixed  set ");
  const size_t get = report.output.find(" mixed  get ");
  const size_t del = report.output.find(" mixed  delete ");
  const size_t touch = report.output.find(" mixed  touch ");
  ASSERT_NE(touch, std::string::npos) << report.output;
  EXPECT_LT(set, get);
  EXPECT_LT(get, del);
  EXPECT_LT(del, touch);
}

void expect_memcached_counts(const std::string& protocol_arg) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::string mix =
      "get:30,gets:5,cas:5,set:10,delete:10,incr:10,decr:5,add:5,replace:5,append:4,prepend:1,"
      "touch:10";
  auto out = run_kvdrive(dir, mix_args(dir.file("r.db"), memcached.uri() + protocol_arg, mix));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string m = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  const std::string mc = "memcached";
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
  EXPECT_EQ(driver_sum(db, "ops", mc, "set", "load"), 2 * kKeys);
  // cmd_set: every store command, whatever it answered.
  int64_t stores = driver_sum(db, "ops", mc, "set");
  for (const char* op : {"add", "replace", "append", "prepend", "cas"})
    stores += sum(db, "ops", mc, op);
  EXPECT_EQ(stat_value(m, "cmd_set"), stores);
  // cmd_get counts the keys asked for (one per get or gets here).
  const auto gets = [&](const std::string& column) {
    return sum(db, column, mc, "get") + sum(db, column, mc, "gets");
  };
  EXPECT_EQ(stat_value(m, "cmd_get"), gets("ops"));
  EXPECT_EQ(stat_value(m, "get_hits"), gets("hits"));
  EXPECT_EQ(stat_value(m, "get_misses"), gets("misses"));
  EXPECT_GT(sum(db, "misses", mc, "get"), 0);
  EXPECT_EQ(sum(db, "ops", mc, "gets"), kRequests * 5 / 100);
  // cas: stored with the unique a gets of its connection returned (a hit); refused where the
  // key changed since (EXISTS: badval) or is gone (NOT_FOUND): a miss.
  EXPECT_EQ(stat_value(m, "cas_hits"), sum(db, "hits", mc, "cas"));
  EXPECT_EQ(stat_value(m, "cas_badval") + stat_value(m, "cas_misses"),
            sum(db, "misses", mc, "cas"));
  EXPECT_EQ(sum(db, "ops", mc, "cas"), kRequests * 5 / 100);
  EXPECT_GT(sum(db, "hits", mc, "cas"), kRequests * 5 / 100 / 2);
  // delete, incr, decr and touch: their own hits and misses.
  for (const auto& [op, stat] : std::vector<std::pair<std::string, std::string>>{
           {"delete", "delete"}, {"incr", "incr"}, {"decr", "decr"}, {"touch", "touch"}}) {
    EXPECT_EQ(stat_value(m, stat + "_hits"), sum(db, "hits", mc, op)) << op;
    EXPECT_EQ(stat_value(m, stat + "_misses"), sum(db, "misses", mc, op)) << op;
  }
  EXPECT_EQ(stat_value(m, "cmd_touch"), sum(db, "ops", mc, "touch"));
  // The counter keys were loaded: no incr missed.
  EXPECT_EQ(stat_value(m, "incr_misses"), 0);
  EXPECT_GT(stat_value(m, "delete_hits"), 0);
  EXPECT_GT(stat_value(m, "delete_misses"), 0);
  // add refused where the key was there: a miss (not stored), as memcached answered.
  EXPECT_GT(sum(db, "misses", mc, "add"), 0);
}

TEST(OpMix, EveryMemcachedTextCommandCountsAsItsStatsSay) { expect_memcached_counts(""); }

TEST(OpMix, EveryMemcachedBinaryCommandCountsAsItsStatsSay) {
  expect_memcached_counts("?protocol=binary");
}

}  // namespace

namespace {

// A Redis integer reply to an inline command ("EXISTS k", "DBSIZE").
long long redis_integer(int port, const std::string& command) {
  const std::string reply = tcp_request(port, command + "\r\n", "\r\n");
  return reply.size() > 1 && reply[0] == ':' ? std::stoll(reply.substr(1)) : -1;
}

// --key-size: each key is as long as its size says (the number padded with zeros), whatever
// its size among the weighted ones; the bytes sent say so too.
TEST(KeyShapes, EachKeyHasItsSizeAndTheStoreHoldsExactlyThoseKeys) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  constexpr int kN = 500;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               std::to_string(kN), "--phases", "load", "--value-size", "100",
                               "--key-size", "16:50,40:50", "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  kv::drive::WorkloadSpec w;
  kv::drive::set_workload_option(w, "key-size", "16:50,40:50");
  kv::drive::KeyFormatter keys("kv:", w.key_sizes);
  int64_t key_bytes = 0;
  int sixteen = 0;
  for (int i = 0; i < kN; ++i) {
    const std::string key(keys.format(static_cast<uint64_t>(i)));
    ASSERT_TRUE(key.size() == 16 || key.size() == 40) << key;
    sixteen += key.size() == 16;
    key_bytes += static_cast<int64_t>(key.size());
    EXPECT_EQ(redis_integer(redis.port(), "EXISTS " + key), 1) << key;
  }
  EXPECT_GT(sixteen, kN / 4);  // both sizes are used
  EXPECT_LT(sixteen, kN * 3 / 4);
  EXPECT_EQ(redis_integer(redis.port(), "DBSIZE"), kN);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "bytes_out", "redis", "set"), key_bytes + int64_t{kN} * 100);
}

// --ttl weighted: each key's expiry is its own, fixed by the key: once the short ones passed,
// a read misses exactly the keys given them, on both protocols.
TEST(KeyShapes, WeightedTtlsExpireExactlyTheKeysGivenTheShortOne) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  constexpr int kN = 1000;
  auto load = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(),
                                "--target", memcached.uri(), "--keys", std::to_string(kN),
                                "--phases", "load", "--ttl", "1s:1,1h:3", "--threads", "2"});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  kv::drive::WorkloadSpec w;
  kv::drive::set_workload_option(w, "ttl", "1s:1,1h:3");
  int64_t short_lived = 0;
  for (uint64_t i = 0; i < kN; ++i) short_lived += w.ttl.ttl_for(i) == 1;
  EXPECT_GT(short_lived, kN / 8);
  EXPECT_LT(short_lived, kN * 3 / 8);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  auto read = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target", memcached.uri(),
            "--keys", std::to_string(kN), "--phases", "read", "--threads", "2"});
  ASSERT_EQ(read.exit_code, 0) << read.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  for (const char* proto : {"redis", "memcached"}) {
    EXPECT_EQ(driver_sum(db, "misses", proto, "get"), short_lived) << proto;
    EXPECT_EQ(driver_sum(db, "hits", proto, "get"), kN - short_lived) << proto;
  }
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.ttl') FROM runs WHERE run_id = 1"),
            "1:1,3600:3");
}

// --cache-aside on an empty memcached: two sequential passes over the keys; the first misses
// every key and sets it back (a backfill each), so the second hits every one.
TEST(CacheAside, EveryMissIsSetBackAndTheNextPassHits) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  constexpr int kN = 1000;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(),
                               "--keys", std::to_string(kN), "--requests", std::to_string(2 * kN),
                               "--phases", "read", "--cache-aside", "--threads", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "misses", "memcached", "get"), kN);
  EXPECT_EQ(driver_sum(db, "hits", "memcached", "get"), kN);
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "backfill"), kN);
  const std::string m = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(m, "cmd_set"), kN);
  EXPECT_EQ(stat_value(m, "get_misses"), kN);
  EXPECT_EQ(stat_value(m, "get_hits"), kN);
  // The miss ratio, second by second, is a query of the get rows.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM driver_seconds WHERE op = 'get' AND misses * 1.0 / "
                      "NULLIF(hits + misses, 0) BETWEEN 0 AND 1"),
            query_int(db, "SELECT COUNT(*) FROM driver_seconds WHERE op = 'get' AND ops > 0"));
}

}  // namespace

namespace {

// --mix-value-size and --mix-key-pattern: each op sends its own value size (the bytes sent say
// so, key by key) and picks its own keys: deletes that only reach the first 5 % of the keys
// leave every other key in place while gets still range over all of them.
TEST(MixShapes, EachOpSendsItsOwnValueSizeAndPicksItsOwnKeys) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run",
                               "--db",
                               dir.file("r.db"),
                               "--target",
                               redis.uri(),
                               "--keys",
                               "2000",
                               "--requests",
                               "8000",
                               "--phases",
                               "load,mixed",
                               "--key-size",
                               "10",
                               "--key-pattern",
                               "uniform",
                               "--mix",
                               "get:40,set:20,append:20,delete:20",
                               "--mix-value-size",
                               "append=16;set=1000",
                               "--mix-key-pattern",
                               "delete=hotset:0.05:1",
                               "--threads",
                               "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
  // Keys of 10 bytes: a set sends 1,000 bytes of value in the mixed phase, 100 in the load.
  EXPECT_EQ(driver_sum(db, "bytes_out", "redis", "set", "load"), 2000 * (10 + 100));
  EXPECT_EQ(sum(db, "bytes_out", "redis", "set"), sum(db, "ops", "redis", "set") * (10 + 1000));
  EXPECT_EQ(sum(db, "bytes_out", "redis", "append"), sum(db, "ops", "redis", "append") * (10 + 16));
  // 1,600 deletes on the 100 hot keys: all of them gone (and most deletes missed), none of the
  // others; the appends created some hot keys again.
  EXPECT_GT(sum(db, "misses", "redis", "delete"), 800);
  EXPECT_GE(redis_integer(redis.port(), "DBSIZE"), 1900);
  EXPECT_LT(redis_integer(redis.port(), "DBSIZE"), 2000);
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.mix_value_size') FROM runs"),
            "set=1000;append=16");
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.mix_key_pattern') FROM runs"),
            "delete=hotset:0.05:1");
}

}  // namespace
