// kvdrive over TLS (TlsTransport) against redis-server --tls-port
// (mutual TLS, no plain port) and memcached -Z, on certificates made by the test: the counts
// in the results file equal the servers' own counters, the store counters are polled over
// TLS, and a CA that did not sign the server's certificate fails the run with the reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "store/sync_connection.hpp"
#include "store/target_uri.hpp"
#include "store/tls_context.hpp"
#include "tls_certs.hpp"

namespace {
using namespace kv::test;
using kv::drive::HostPort;
using kv::drive::TlsOptions;
using kv::drive::store::SyncConnection;
using kv::drive::store::TlsContext;

constexpr int64_t kTimeoutUs = 10'000'000;

#define KV_MAKE_CERTS_OR_SKIP(certs)                         \
  do {                                                       \
    std::string kv_why_;                                     \
    if (!(certs).make(&kv_why_)) {                           \
      if (::kv::test::servers_required()) FAIL() << kv_why_; \
      GTEST_SKIP() << kv_why_;                               \
    }                                                        \
  } while (0)

// A counter of the server, asked over TLS (the redis-server here has no plain port).
long long tls_stat(const TestCertificates& certs, int port, bool redis, const std::string& field) {
  TlsOptions o;
  o.enabled = true;
  o.ca_file = certs.ca_cert();
  o.cert_file = certs.client_cert();
  o.key_file = certs.client_key();
  TlsContext ctx(o);
  SyncConnection c(HostPort{"127.0.0.1", port}, &ctx, kTimeoutUs);
  std::string text =
      redis
          ? c.request_resp("*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n", kTimeoutUs)
          : c.request(
                "stats\r\n", [](std::string_view g) { return g.ends_with("END\r\n"); }, kTimeoutUs);
  if (redis) {
    auto pos = text.find("cmdstat_" + field + ":calls=");
    return pos == std::string::npos ? 0 : std::stoll(text.substr(pos + field.size() + 15));
  }
  return stat_value(text, field);
}

std::vector<std::string> run_args(const TempDir& dir, const std::string& target) {
  return {"run",
          "--db",
          dir.file("r.db"),
          "--target",
          target,
          "--keys",
          "500",
          "--phases",
          "load,read",
          "--duration",
          "2s",
          "--threads",
          "2",
          "--connections",
          "3",
          "--pipeline",
          "4"};
}

TEST(KvdriveTls, RedisMutualTlsCountsEqualTheServers) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer redis(StoreServer::Kind::redis, certs.redis_args(true));
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string target = "rediss://127.0.0.1:" + std::to_string(redis.port()) +
                             "?ca=" + certs.ca_cert() + "&cert=" + certs.client_cert() +
                             "&key=" + certs.client_key();
  auto out = run_kvdrive(dir, run_args(dir, target));
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t sets = driver_sum(db, "ops", "redis", "set");
  const int64_t gets = driver_sum(db, "ops", "redis", "get");
  EXPECT_EQ(sets, 500);
  EXPECT_GT(gets, 0);
  EXPECT_EQ(driver_sum(db, "errors", "redis", "get"), 0);
  EXPECT_EQ(sets, tls_stat(certs, redis.port(), true, "set"));
  EXPECT_EQ(gets, tls_stat(certs, redis.port(), true, "get"));
  // The store counters came over TLS too, and so did the latency monitor's setting and Redis
  // 7's per-command latency histogram (a search step's server latency is read from it).
  EXPECT_GT(query_int(db, "SELECT COUNT(*) FROM store_stats WHERE name = 'cmdstat_get_calls'"), 0);
  EXPECT_GT(
      query_int(db, "SELECT COUNT(*) FROM store_stats WHERE name = 'latency_monitor_threshold_ms'"),
      0);
  EXPECT_GT(query_int(db,
                      "SELECT COUNT(*) FROM store_stats WHERE name LIKE "
                      "'latency_histogram_usec_get_%'"),
            0);
  // The store's settings too, over a mutual-TLS connection of their own (CONFIG GET).
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM run_metadata WHERE target_id IS NOT NULL AND "
                      "name = 'maxmemory-policy' AND value = 'noeviction'"),
            1);
  EXPECT_EQ(out.output.find("could not read its settings"), std::string::npos) << out.output;
}

TEST(KvdriveTls, MemcachedTlsCountsEqualTheServers) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer mc(StoreServer::Kind::memcached, certs.memcached_args());
  KV_START_OR_SKIP(mc);
  for (const std::string protocol : {"text", "binary"}) {
    TempDir dir;
    const long long sets_before = tls_stat(certs, mc.port(), false, "cmd_set");
    const long long gets_before = tls_stat(certs, mc.port(), false, "cmd_get");
    const std::string target = "memcached://127.0.0.1:" + std::to_string(mc.port()) +
                               "?tls=1&ca=" + certs.ca_cert() + "&protocol=" + protocol;
    auto out = run_kvdrive(dir, run_args(dir, target));
    ASSERT_EQ(out.exit_code, 0) << protocol << ": " << out.output;
    auto db = kv::open_results_db(dir.file("r.db"));
    const int64_t sets = driver_sum(db, "ops", "memcached", "set");
    const int64_t gets = driver_sum(db, "ops", "memcached", "get");
    EXPECT_EQ(sets, 500) << protocol;
    EXPECT_GT(gets, 0) << protocol;
    // The server's settings over a TLS connection of their own (`stats settings`).
    EXPECT_EQ(query_int(db,
                        "SELECT COUNT(*) FROM run_metadata WHERE target_id IS NOT NULL AND "
                        "name = 'num_threads' AND value <> ''"),
              1)
        << protocol;
    EXPECT_EQ(driver_sum(db, "errors", "memcached", "get"), 0) << protocol;
    EXPECT_EQ(sets, tls_stat(certs, mc.port(), false, "cmd_set") - sets_before) << protocol;
    EXPECT_EQ(gets, tls_stat(certs, mc.port(), false, "cmd_get") - gets_before) << protocol;
  }
}

TEST(KvdriveTls, AWrongCaFailsTheRunWithTheReason) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer redis(StoreServer::Kind::redis, certs.redis_args(false));
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, run_args(dir, "rediss://127.0.0.1:" + std::to_string(redis.port()) +
                                                "?ca=" + certs.other_ca_cert()));
  EXPECT_NE(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("certificate verify failed"), std::string::npos) << out.output;
  // Skip-verify runs against the same server, says so once and records it beside the results;
  // a verified run records nothing of the kind.
  TempDir dir2;
  out = run_kvdrive(
      dir2, run_args(dir2, "rediss://127.0.0.1:" + std::to_string(redis.port()) + "?verify=0"));
  EXPECT_EQ(out.exit_code, 0) << out.output;
  const std::string warning = "TLS without verification (verify=0)";
  const size_t at = out.output.find(warning);
  EXPECT_NE(at, std::string::npos) << out.output;
  EXPECT_EQ(out.output.find(warning, at + 1), std::string::npos) << "said more than once";
  auto db = kv::open_results_db(dir2.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM run_metadata WHERE name = 'tls_verify' AND "
                      "value = '0' AND target_id IS NOT NULL"),
            1);
}

}  // namespace
