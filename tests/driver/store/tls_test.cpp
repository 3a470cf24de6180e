// TLS building blocks against real servers: redis-server --tls-port and memcached -Z on
// certificates made by the test (tests/support/tls_certs.hpp).
#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include "servers.hpp"
#include "store/sync_connection.hpp"
#include "store/target_uri.hpp"
#include "store/tls_context.hpp"
#include "tls_certs.hpp"

namespace {
using kv::drive::HostPort;
using kv::drive::TlsOptions;
using kv::drive::store::SyncConnection;
using kv::drive::store::TlsContext;
using kv::test::StoreServer;
using kv::test::TestCertificates;

constexpr int64_t kTimeoutUs = 10'000'000;  // generous: TSan on two busy cores
const std::string kPing = "*1\r\n$4\r\nPING\r\n";

#define KV_MAKE_CERTS_OR_SKIP(certs)                         \
  do {                                                       \
    std::string kv_why_;                                     \
    if (!(certs).make(&kv_why_)) {                           \
      if (::kv::test::servers_required()) FAIL() << kv_why_; \
      GTEST_SKIP() << kv_why_;                               \
    }                                                        \
  } while (0)

// The message of the std::invalid_argument that building a context from `o` throws; empty if
// it builds.
std::string context_error(const TlsOptions& o) {
  try {
    TlsContext ctx(o);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// The message of the std::runtime_error of connecting; empty if it connects.
std::string connect_error(int port, const TlsContext& ctx, const std::string& host = "127.0.0.1") {
  try {
    SyncConnection c(HostPort{host, port}, &ctx, kTimeoutUs);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TlsOptions trusting(const TestCertificates& certs) {
  TlsOptions o;
  o.enabled = true;
  o.ca_file = certs.ca_cert();
  return o;
}

TEST(TlsContext, BadFilesAreOneLineNamingTheFile) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  TlsOptions o = trusting(certs);
  o.ca_file = certs.dir().file("missing.pem");
  std::string e = context_error(o);
  EXPECT_NE(e.find("TLS CA file '" + o.ca_file + "': cannot read it (No such file"),
            std::string::npos)
      << e;

  std::ofstream(certs.dir().file("garbage.pem")) << "not a certificate\n";
  o.ca_file = certs.dir().file("garbage.pem");
  e = context_error(o);
  EXPECT_NE(e.find("no PEM certificate in it"), std::string::npos) << e;
  o.ca_file = certs.server_key();  // a key, not a certificate
  e = context_error(o);
  EXPECT_NE(e.find("no PEM certificate in it"), std::string::npos) << e;

  o = trusting(certs);
  o.cert_file = certs.client_cert();
  o.key_file = certs.server_key();
  e = context_error(o);
  EXPECT_NE(e.find("TLS client key '" + certs.server_key() + "' does not match certificate '" +
                   certs.client_cert() + "'"),
            std::string::npos)
      << e;
  o.key_file = certs.client_cert();  // no key in it
  e = context_error(o);
  EXPECT_NE(e.find("no PEM private key in it"), std::string::npos) << e;

  o = trusting(certs);
  o.cert_file = certs.client_cert();
  o.key_file = certs.client_key();
  EXPECT_EQ(context_error(o), "");
}

TEST(TlsRedis, MutualTlsPingThroughTheContext) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer redis(StoreServer::Kind::redis, certs.redis_args(true));
  KV_START_OR_SKIP(redis);
  TlsOptions o = trusting(certs);
  o.cert_file = certs.client_cert();
  o.key_file = certs.client_key();
  TlsContext ctx(o);
  // 127.0.0.1 is checked against the certificate's IP entry; "localhost" against its DNS entry.
  for (const std::string host : {"127.0.0.1", "localhost"}) {
    SyncConnection c(HostPort{host, redis.port()}, &ctx, kTimeoutUs);
    EXPECT_TRUE(c.tls());
    EXPECT_EQ(c.request_resp(kPing, kTimeoutUs), "+PONG\r\n") << host;
  }
  // The server counted both (what the TLS connection sent is what it received).
  std::string stats;
  {
    SyncConnection c(HostPort{"127.0.0.1", redis.port()}, &ctx, kTimeoutUs);
    stats = c.request_resp("*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n", kTimeoutUs);
  }
  EXPECT_NE(stats.find("cmdstat_ping:calls=2,"), std::string::npos) << stats;
}

TEST(TlsRedis, PlainTcpToTheTlsPortGetsNoReply) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer redis(StoreServer::Kind::redis, certs.redis_args(false));
  KV_START_OR_SKIP(redis);
  SyncConnection plain(HostPort{"127.0.0.1", redis.port()}, nullptr, kTimeoutUs);
  EXPECT_FALSE(plain.tls());
  EXPECT_THROW(plain.request_resp(kPing, 1'000'000), std::runtime_error);
}

TEST(TlsRedis, WrongCaFailsWithTheReasonAndSkipVerifyConnects) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer redis(StoreServer::Kind::redis, certs.redis_args(false));
  KV_START_OR_SKIP(redis);
  TlsOptions o = trusting(certs);
  o.ca_file = certs.other_ca_cert();
  std::string e = connect_error(redis.port(), TlsContext(o));
  EXPECT_NE(e.find("TLS handshake with 127.0.0.1:" + std::to_string(redis.port()) + " failed"),
            std::string::npos)
      << e;
  // Asio's message, then OpenSSL's verify result (redis-server sends its CA in the chain).
  EXPECT_TRUE(e.find("certificate verify failed: self-signed certificate in certificate chain") !=
                  std::string::npos ||
              e.find("certificate verify failed: unable to get local issuer certificate") !=
                  std::string::npos)
      << e;
  EXPECT_EQ(e.find('\n'), std::string::npos) << e;

  // A name the certificate does not hold.
  o = trusting(certs);
  o.server_name = "cache.example";
  e = connect_error(redis.port(), TlsContext(o));
  EXPECT_NE(e.find("hostname mismatch"), std::string::npos) << e;

  // Skip-verify: the wrong CA and the wrong name, and still a round trip.
  o.ca_file = certs.other_ca_cert();
  o.verify = false;
  TlsContext insecure(o);
  SyncConnection c(HostPort{"127.0.0.1", redis.port()}, &insecure, kTimeoutUs);
  EXPECT_EQ(c.request_resp(kPing, kTimeoutUs), "+PONG\r\n");
}

TEST(TlsMemcached, VersionRoundTripAndWrongCa) {
  TestCertificates certs;
  KV_MAKE_CERTS_OR_SKIP(certs);
  StoreServer mc(StoreServer::Kind::memcached, certs.memcached_args());
  KV_START_OR_SKIP(mc);
  TlsContext ctx(trusting(certs));
  SyncConnection c(HostPort{"127.0.0.1", mc.port()}, &ctx, kTimeoutUs);
  auto line = [](std::string_view got) { return got.ends_with("\r\n"); };
  std::string v = c.request("version\r\n", line, kTimeoutUs);
  EXPECT_EQ(v.rfind("VERSION 1.", 0), 0u) << v;
  std::string stored = c.request("set k 0 0 1\r\nx\r\n", line, kTimeoutUs);
  EXPECT_EQ(stored, "STORED\r\n");
  auto end = [](std::string_view got) { return got.ends_with("END\r\n"); };
  std::string stats = c.request("stats\r\n", end, kTimeoutUs);
  EXPECT_NE(stats.find("STAT cmd_set 1\r\n"), std::string::npos) << stats;

  TlsOptions wrong = trusting(certs);
  wrong.ca_file = certs.other_ca_cert();
  std::string e = connect_error(mc.port(), TlsContext(wrong));
  EXPECT_NE(e.find("certificate verify failed"), std::string::npos) << e;
}

}  // namespace
