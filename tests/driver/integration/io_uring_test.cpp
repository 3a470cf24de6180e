// --io uring against a real redis-server: every request counted as Redis counts it, every reply
// read with the kernel's receive stamp (the latency split as on epoll), connections handed from
// phase to phase as on epoll, and the choice in the run's parameters. (memcached on both
// transports: memcached_pipeline_test.cpp; Ctrl-C: kvdrive_faults_test.cpp.)
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/io_mode.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

long long connections_received(const StoreServer& redis) {
  return stat_value(redis_info(redis.port(), "stats"), "total_connections_received");
}

TEST(IoUring, RedisCountsAsTheServerAndEveryReplyIsStampedAsOnEpoll) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Values up to 20 KB: a reply can span two of the ring's 16 KiB receive buffers.
  const auto run = [&](const std::string& io) {
    return run_kvdrive(dir, {"run",
                             "--db",
                             dir.file("r.db"),
                             "--target",
                             redis.uri(),
                             "--io",
                             io,
                             "--keys",
                             "3000",
                             "--threads",
                             "2",
                             "--connections",
                             "3",
                             "--pipeline",
                             "16",
                             "--phases",
                             "load,read,mixed",
                             "--ratio",
                             "1:3",
                             "--requests",
                             "20000",
                             "--hit-rate",
                             "0.7",
                             "--verify",
                             "--value-size",
                             "10-20000",
                             "--key-pattern",
                             "uniform"});
  };
  const long long before = connections_received(redis);
  auto out = run("uring");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const long long uring_connections = connections_received(redis) - before;
  {
    auto db = kv::open_results_db(dir.file("r.db"));
    const std::string stats = redis_info(redis.port(), "stats");
    EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set"));
    EXPECT_EQ(redis_command_calls(redis.port(), "get"), driver_sum(db, "ops", "redis", "get"));
    EXPECT_EQ(stat_value(stats, "keyspace_hits"), driver_sum(db, "hits", "redis", "get"));
    EXPECT_EQ(stat_value(stats, "keyspace_misses"), driver_sum(db, "misses", "redis", "get"));
    EXPECT_EQ(driver_sum(db, "ops", "redis", "get", "read"), 20000);
    EXPECT_EQ(driver_sum(db, "wrong", "redis", "get"), 0);  // every value read byte for byte
    EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE parameters LIKE '%\"io\":\"uring\"%'"),
              1);
    // Every answered read left at a known time and its reply carried the kernel's stamp (but for
    // the first replies, should the kernel turn host-wide stamping on only after them).
    const int64_t ok = query_int(db,
                                 "SELECT SUM(d.ok) FROM driver_seconds d JOIN phases p USING "
                                 "(phase_id) WHERE p.kind = 'read' AND d.op = 'get'");
    const auto part_count = [&](const std::string& name) {
      return query_int(db,
                       "SELECT x.count FROM phase_part_percentiles x JOIN phases p USING "
                       "(phase_id) WHERE p.kind = 'read' AND x.op = 'get' AND x.part = '" +
                           name + "'");
    };
    EXPECT_EQ(part_count("client_send"), ok);
    EXPECT_GE(static_cast<double>(part_count("wire")), static_cast<double>(ok) * 0.99);
    EXPECT_LE(part_count("wire"), ok);
  }
  // The same run on epoll opens as many connections: each phase takes over the last one's.
  const long long mid = connections_received(redis);
  out = run("epoll");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(uring_connections, connections_received(redis) - mid);
  EXPECT_LT(uring_connections, 3 * 6) << "a connection per phase: none was handed on";
}

// --io auto (the default) is uring exactly where the kernel can run it, and epoll where a step
// needs epoll (--wire-start kernel): the run's parameters say which it was.
TEST(IoUring, AutoIsUringWhereTheKernelCanAndEpollWithWireStartKernel) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string expected = kv::drive::io_uring_refusal().empty() ? "uring" : "epoll";
  for (const bool kernel : {false, true}) {
    std::vector<std::string> args = {"run",    "--db", dir.file("r.db"), "--target", redis.uri(),
                                     "--keys", "500",  "--threads",      "1"};
    if (kernel) args.insert(args.end(), {"--wire-start", "kernel"});
    auto out = run_kvdrive(dir, args);
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.io') FROM runs WHERE run_id = 1"),
            expected);
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.io') FROM runs WHERE run_id = 2"),
            "epoll");
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 1000);
}

}  // namespace
