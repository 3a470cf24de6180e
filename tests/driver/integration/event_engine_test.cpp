// The event-loop engine against the fake store and real servers: what it alone does.
// Connections are independent (one stalled connection does not hold the others back), every
// memcached text reply is read (a refused set is an error of that request), a pool's keys go
// where libmemcached puts them, and one thread holds 1,000 connections.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "fake_store.hpp"
#include "kvdrive_test_util.hpp"
#include "libmemcached_client.hpp"
#include "store/memcached_ring.hpp"
#include "store/target_uri.hpp"

namespace {
using namespace kv::test;

// Accept order at the fake for `kvdrive run --threads 1 --connections N`: 0 is kvdrive's
// reachability check, 1..N the engine's connections.
constexpr int kFirstConnection = 1;

TEST(EventEngine, ADelayedConnectionDoesNotDelayTheOthers) {
  FakeStore store;
  FakeStore::Behavior slow;
  slow.delay_us = 100'000;  // every reply of this connection leaves 100 ms late
  store.set_behavior(kFirstConnection + 1, slow);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", store.redis_uri(), "--keys", "100",
            "--phases", "read", "--duration", "2s", "--threads", "1", "--connections", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const int64_t delayed = store.requests(kFirstConnection + 1, "get");
  // 2 s at 100 ms a reply, with slack for a slow start.
  EXPECT_GE(delayed, 5);
  EXPECT_LE(delayed, 25);
  for (int c : {kFirstConnection, kFirstConnection + 2, kFirstConnection + 3}) {
    // Lock-step rounds would give every connection the delayed one's count.
    EXPECT_GT(store.requests(c, "get"), 10 * delayed) << "connection " << c;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t gets = driver_sum(db, "ops", "redis", "get");
  EXPECT_EQ(gets, store.requests("get"));
  // Most replies came at once: the median is far below the delayed connection's 100 ms.
  EXPECT_LT(query_int(db,
                      "SELECT CAST(MAX(lat_p50_us) AS INTEGER) FROM driver_seconds "
                      "WHERE op = 'get' AND ops > 100"),
            50'000);
}

TEST(EventEngine, ARefusedSetInAPipelinedTextPhaseIsAnError) {
  FakeStore store;
  FakeStore::Behavior refuse;
  refuse.refuse_sets = FakeStore::Refusal::out_of_memory;
  // Every other connection refuses its sets (whatever order the engine opens them in, one of
  // its two connections refuses and the other stores).
  for (int i = 1; i < 32; i += 2) store.set_behavior(i, refuse);
  TempDir dir;
  const int kKeys = 1000;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", store.memcached_uri(),
                               "--keys", std::to_string(kKeys), "--phases", "load", "--threads",
                               "1", "--connections", "2", "--pipeline", "8"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  int64_t refused = 0;
  std::string counts;
  const auto connections = store.connections();
  for (size_t i = 0; i < connections.size(); ++i) {
    const auto& c = connections[i];
    if (i % 2 == 1) refused += c.requests.count("set") ? c.requests.at("set") : 0;
    counts += "connection:";
    for (const auto& [cmd, n] : c.requests) counts += " " + cmd + "=" + std::to_string(n);
    counts += "\n";
  }
  EXPECT_GT(refused, 0) << counts;
  EXPECT_LT(refused, kKeys) << counts;
  EXPECT_EQ(driver_sum(db, "ops", "memcached", "set"), kKeys);
  EXPECT_EQ(driver_sum(db, "errors", "memcached", "set"), refused) << counts;
  EXPECT_EQ(driver_sum(db, "ok", "memcached", "set"), kKeys - refused);
  // Seen per request: nothing left to guess from the server's counters afterwards.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM events WHERE kind = 'set_verdicts_unseen'"), 0);
}

long long memcached_stat(const StoreServer& s, const std::string& field) {
  return stat_value(tcp_request(s.port(), "stats\r\n", "END\r\n"), field);
}

TEST(EventEngine, APoolPlacesKeysAsLibmemcachedDoes) {
  StoreServer a(StoreServer::Kind::memcached), b(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  const std::string pool = "memcached://127.0.0.1:" + std::to_string(a.port()) +
                           ",127.0.0.1:" + std::to_string(b.port());
  TempDir dir;
  const int kKeys = 2000;
  // The engine writes (pipelined: one queue per server) ...
  auto load = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", pool, "--keys", std::to_string(kKeys),
            "--phases", "load", "--threads", "2", "--connections", "2", "--pipeline", "4"});
  ASSERT_EQ(load.exit_code, 0) << load.output;
  const long long on_a = memcached_stat(a, "curr_items"), on_b = memcached_stat(b, "curr_items");
  EXPECT_EQ(on_a + on_b, kKeys);
  EXPECT_GT(on_a, kKeys / 5);
  EXPECT_GT(on_b, kKeys / 5);
  // ... and libmemcached, the reference, finds every key where it looks for it: each of the
  // kvdrive-written keys is on the server libmemcached's ketama names, and only there.
  LibmemcachedClient mc({{"127.0.0.1", a.port()}, {"127.0.0.1", b.port()}});
  const StoreServer* servers[] = {&a, &b};
  int found = 0, placed_as_libmemcached = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "kv:" + std::to_string(i);  // --key-prefix's default
    if (mc.get(key)) ++found;
    const size_t where = mc.server_for(key);
    ASSERT_LT(where, 2u);
    const std::string request = "get " + key + "\r\n";
    const bool on_named =
        tcp_request(servers[where]->port(), request, "END\r\n").starts_with("VALUE ");
    const bool on_other =
        tcp_request(servers[1 - where]->port(), request, "END\r\n").starts_with("VALUE ");
    if (on_named && !on_other) ++placed_as_libmemcached;
  }
  EXPECT_EQ(found, kKeys);
  EXPECT_EQ(placed_as_libmemcached, kKeys);
  // The engine reads them back (every get a hit) through the same placement.
  auto read = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", pool, "--keys",
                                std::to_string(kKeys), "--phases", "read", "--requests", "4000",
                                "--threads", "2", "--pipeline", "4", "--verify"});
  ASSERT_EQ(read.exit_code, 0) << read.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(misses) FROM driver_seconds WHERE op = 'get'"), 0);
  EXPECT_EQ(query_int(db, "SELECT SUM(hits) FROM driver_seconds WHERE op = 'get'"), 4000);
  EXPECT_EQ(query_int(db, "SELECT SUM(wrong) FROM driver_seconds WHERE op = 'get'"), 0);
  // The servers saw libmemcached's gets and the named server's (2 x kKeys hits), the other
  // server's (kKeys misses) and the engine's 4000 hits: nothing else.
  EXPECT_EQ(memcached_stat(a, "get_hits") + memcached_stat(b, "get_hits"), 2 * kKeys + 4000);
  EXPECT_EQ(memcached_stat(a, "get_misses") + memcached_stat(b, "get_misses"), kKeys);
}

// ?on-failure=eject's ring: with a server left out, every key goes where libmemcached's own
// auto-eject sends it once that server's connect failed (the reference a cache client follows).
TEST(EventEngine, AnEjectedServersKeysGoWhereLibmemcachedsAutoEjectSendsThem) {
  StoreServer a(StoreServer::Kind::memcached), c(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(c);
  const int dead = free_port();  // nothing listens: connects are refused
  LibmemcachedClient mc({{"127.0.0.1", a.port()}, {"127.0.0.1", dead}, {"127.0.0.1", c.port()}});
  mc.auto_eject();
  const kv::drive::TargetSpec spec = kv::drive::parse_target_uri(
      "memcached://127.0.0.1:" + std::to_string(a.port()) + ",127.0.0.1:" + std::to_string(dead) +
      ",127.0.0.1:" + std::to_string(c.port()));
  const kv::drive::MemcachedRing whole(spec), ejected(spec, {false, true, false});
  const int kKeys = 3000;
  int on_dead = 0;
  for (int i = 0; i < kKeys; ++i) {  // before: the same ring
    const std::string key = "kv:" + std::to_string(i);
    ASSERT_EQ(whole.server_for(key), mc.server_for(key)) << key;
    if (mc.server_for(key) == 1) ++on_dead;
  }
  ASSERT_GT(on_dead, kKeys / 5);
  // A set to the dead server fails and marks it; libmemcached rebuilds its ring without it once
  // the clock's second has turned (its next_distribution_rebuild), at a later call.
  std::string dead_key;
  for (int i = 0; dead_key.empty(); ++i)
    if (mc.server_for("kv:" + std::to_string(i)) == 1) dead_key = "kv:" + std::to_string(i);
  for (int tries = 0; tries < 40 && mc.server_for(dead_key) == 1; ++tries) {
    EXPECT_FALSE(mc.try_set(dead_key, "v"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_NE(mc.server_for(dead_key), 1u) << "libmemcached never ejected the dead server";
  int moved = 0;
  for (int i = 0; i < kKeys; ++i) {
    const std::string key = "kv:" + std::to_string(i);
    ASSERT_NE(mc.server_for(key), 1u) << key;
    EXPECT_EQ(ejected.server_for(key), mc.server_for(key)) << key;
    if (whole.server_for(key) != ejected.server_for(key)) ++moved;
    // Only the dead server's keys moved: the others stay where they were.
    if (whole.server_for(key) != 1) {
      EXPECT_EQ(ejected.server_for(key), whole.server_for(key));
    }
  }
  EXPECT_EQ(moved, on_dead);
}

TEST(EventEngine, OneThreadDrivesAThousandConnections) {
  const uint64_t fds = raise_fd_limit();  // kvdrive (and redis-server) inherit it
  if (fds < 2200) GTEST_SKIP() << "fd limit " << fds << " is below 2200";
  StoreServer redis(StoreServer::Kind::redis, {"--maxclients", "2000"});
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "5000",
                        "--requests", "20000", "--threads", "1", "--connections", "1000"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(driver_sum(db, "ops", "redis", "set"), 5000);
  EXPECT_EQ(driver_sum(db, "ops", "redis", "get"), 20000);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "get") + driver_sum(db, "errors", "redis", "set"), 0);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 5000);
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 20000);
  EXPECT_GE(stat_value(redis_info(redis.port(), "stats"), "total_connections_received"), 1000);
  EXPECT_EQ(query_int(db, "SELECT MAX(connections) FROM phases"), 1000);
}

}  // namespace
