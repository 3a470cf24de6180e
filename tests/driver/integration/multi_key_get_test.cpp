// --multi-key-get against real redis-server and memcached (text, binary, a pool of two): each
// get asks for N keys in one request (op mget), and the keys its rows count as hits and misses
// are the ones the stores counted (Redis: calls of MGET, keyspace_hits / keyspace_misses;
// memcached: cmd_get, get_hits, get_misses, which count keys).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

constexpr int kKeys = 2'000;
constexpr int kRequests = 2'000;
constexpr int kPerGet = 8;

// A load phase, then a read phase of mgets and a mixed phase of `mix`; 1 key in 4 of a get is
// one never written (a miss); keys of 10 bytes.
std::vector<std::string> mget_args(const std::string& db, const std::string& target,
                                   const std::string& mix = "set:20,get:80") {
  return {"run",
          "--db",
          db,
          "--target",
          target,
          "--keys",
          "2000",
          "--requests",
          "2000",
          "--phases",
          "load,read,mixed",
          "--mix",
          mix,
          "--key-pattern",
          "zipf",
          "--hit-rate",
          "0.75",
          "--multi-key-get",
          std::to_string(kPerGet),
          "--key-size",
          "10",
          "--threads",
          "2",
          "--connections",
          "2",
          "--pipeline",
          "4"};
}

int64_t mget_sum(kv::Database& db, const std::string& column, const std::string& protocol) {
  return driver_sum(db, column, protocol, "mget");
}

TEST(MultiKeyGet, EachRedisMgetCountsItsKeysAsRedisDoes) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, mget_args(dir.file("r.db"), redis.uri(), "set:20,get:60,mset:20"));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
  // Every get was an mget: the read phase's requests, and 60 of every 100 of the mixed phase's.
  EXPECT_EQ(driver_sum(db, "ops", "redis", "mget", "read"), kRequests);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "mget", "mixed"), kRequests * 60 / 100);
  // An mset writes kPerGet keys of 10 bytes, each with its 100-byte value; an mget sends keys
  EXPECT_EQ(driver_sum(db, "ops", "redis", "mset"), kRequests * 20 / 100);
  EXPECT_EQ(redis_command_calls(redis.port(), "mset"), kRequests * 20 / 100);
  EXPECT_EQ(driver_sum(db, "bytes_out", "redis", "mset"),
            driver_sum(db, "ops", "redis", "mset") * kPerGet * (10 + 100));
  // (a miss key, "kv:~miss:<n>", comes out longer than its 10 bytes)
  EXPECT_GT(mget_sum(db, "bytes_out", "redis"), mget_sum(db, "ops", "redis") * kPerGet * 10);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "get"), 0);
  EXPECT_EQ(redis_command_calls(redis.port(), "mget"), mget_sum(db, "ops", "redis"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 0);
  // Its hits and misses are keys: kPerGet per mget, as Redis counted each key's lookup.
  const std::string stats = redis_info(redis.port(), "stats");
  EXPECT_EQ(stat_value(stats, "keyspace_hits"), mget_sum(db, "hits", "redis"));
  EXPECT_EQ(stat_value(stats, "keyspace_misses"), mget_sum(db, "misses", "redis"));
  EXPECT_EQ(mget_sum(db, "hits", "redis") + mget_sum(db, "misses", "redis"),
            kPerGet * mget_sum(db, "ops", "redis"));
  // About 1 key in 4 misses (--hit-rate 0.75).
  const double miss_share = static_cast<double>(mget_sum(db, "misses", "redis")) /
                            static_cast<double>(kPerGet * mget_sum(db, "ops", "redis"));
  EXPECT_NEAR(miss_share, 0.25, 0.03);
  // The values' bytes came back: every hit a 100-byte value.
  EXPECT_EQ(mget_sum(db, "bytes_in", "redis"), 100 * mget_sum(db, "hits", "redis"));

  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find(" read   mget "), std::string::npos) << report.output;
}

void expect_memcached_keys(const std::string& target, const std::vector<int>& ports) {
  TempDir dir;
  auto out = run_kvdrive(dir, mget_args(dir.file("r.db"), target));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string mc = "memcached";
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
  EXPECT_EQ(driver_sum(db, "ops", mc, "mget", "read"), kRequests);
  long long cmd_get = 0, hits = 0, misses = 0;
  for (int port : ports) {
    const std::string m = tcp_request(port, "stats\r\n", "END\r\n");
    EXPECT_GT(stat_value(m, "cmd_get"), 0) << port;
    cmd_get += stat_value(m, "cmd_get");
    hits += stat_value(m, "get_hits");
    misses += stat_value(m, "get_misses");
  }
  // cmd_get counts keys: each mget's kPerGet (on a pool, all of its first key's server).
  EXPECT_EQ(cmd_get, mget_sum(db, "hits", mc) + mget_sum(db, "misses", mc));
  EXPECT_EQ(cmd_get, kPerGet * mget_sum(db, "ops", mc));
  EXPECT_EQ(hits, mget_sum(db, "hits", mc));
  EXPECT_EQ(misses, mget_sum(db, "misses", mc));
  EXPECT_GT(misses, 0);
  EXPECT_EQ(mget_sum(db, "bytes_in", mc), 100 * hits);
}

TEST(MultiKeyGet, EachMemcachedMultiGetCountsItsKeysOnTextAndBinary) {
  for (const std::string query : {"", "?protocol=binary"}) {
    SCOPED_TRACE(query.empty() ? "text" : "binary");
    StoreServer memcached(StoreServer::Kind::memcached);
    KV_START_OR_SKIP(memcached);
    expect_memcached_keys(memcached.uri() + query, {memcached.port()});
  }
}

TEST(MultiKeyGet, OnAPoolEachMultiGetGoesToItsFirstKeysServer) {
  StoreServer a(StoreServer::Kind::memcached);
  StoreServer b(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  expect_memcached_keys("memcached://127.0.0.1:" + std::to_string(a.port()) +
                            ",127.0.0.1:" + std::to_string(b.port()),
                        {a.port(), b.port()});
}

}  // namespace
