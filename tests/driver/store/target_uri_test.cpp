#include "store/target_uri.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "kvbench/usage_error.hpp"

namespace {
using kv::drive::parse_target_uri;
using kv::drive::Protocol;

TEST(TargetUri, RedisWithAuthAndDb) {
  auto t = parse_target_uri("redis://alice:s3cret@db1.example:6380/3");
  EXPECT_EQ(t.protocol, Protocol::redis);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers[0].host, "db1.example");
  EXPECT_EQ(t.servers[0].port, 6380);
  EXPECT_EQ(t.user, "alice");
  EXPECT_EQ(t.password, "s3cret");
  EXPECT_EQ(t.db, 3);
  EXPECT_EQ(t.display.find("s3cret"), std::string::npos) << t.display;
  EXPECT_NE(t.display.find("db1.example:6380/3"), std::string::npos) << t.display;
}

TEST(TargetUri, RedisPasswordOnlyAndIpv6) {
  auto t = parse_target_uri("redis://pw@[::1]:6379");
  EXPECT_EQ(t.user, "");
  EXPECT_EQ(t.password, "pw");
  EXPECT_EQ(t.servers[0].host, "::1");
  EXPECT_EQ(t.servers[0].port, 6379);
}

TEST(TargetUri, MemcachedPoolBinaryNoDelay) {
  auto t = parse_target_uri("memcached://a:11211,b:11212?protocol=binary&nodelay=0");
  EXPECT_EQ(t.protocol, Protocol::memcached);
  ASSERT_EQ(t.servers.size(), 2u);
  EXPECT_EQ(t.servers[1].host, "b");
  EXPECT_EQ(t.servers[1].port, 11212);
  EXPECT_TRUE(t.binary_protocol);
  EXPECT_FALSE(t.tcp_nodelay);
  EXPECT_TRUE(parse_target_uri("memcached://a:1").tcp_nodelay);
}

TEST(TargetUri, WritesOneOrSplit) {
  EXPECT_FALSE(parse_target_uri("memcached://a:1").split_writes);
  EXPECT_FALSE(parse_target_uri("memcached://a:1?writes=one").split_writes);
  EXPECT_TRUE(parse_target_uri("memcached://a:1?nodelay=0&writes=split").split_writes);
  EXPECT_TRUE(parse_target_uri("redis://a:1?writes=split").split_writes);
  EXPECT_THROW(parse_target_uri("memcached://a:1?writes=two"), std::invalid_argument);
  EXPECT_THROW(parse_target_uri("rediss://a:1?writes=split"), std::invalid_argument);
}

TEST(TargetUri, APoolKeepsOrEjectsADeadServer) {
  EXPECT_FALSE(parse_target_uri("memcached://a:1,b:2").eject_on_failure);
  EXPECT_FALSE(parse_target_uri("memcached://a:1,b:2?on-failure=keep").eject_on_failure);
  EXPECT_TRUE(parse_target_uri("memcached://a:1,b:2?on-failure=eject").eject_on_failure);
  EXPECT_THROW(parse_target_uri("memcached://a:1?on-failure=eject"), std::invalid_argument);
  EXPECT_THROW(parse_target_uri("redis+cluster://a:1?on-failure=eject"), std::invalid_argument);
  EXPECT_EQ(kv::drive::host_port({"::1", 11211}), "[::1]:11211");
  EXPECT_EQ(kv::drive::host_port({"cache1", 11211}), "cache1:11211");
}

TEST(TargetUri, AClusterReadsFromMastersOrReplicas) {
  EXPECT_FALSE(parse_target_uri("redis+cluster://a:1").read_from_replica);
  EXPECT_FALSE(parse_target_uri("redis+cluster://a:1?read-from=master").read_from_replica);
  EXPECT_TRUE(parse_target_uri("redis+cluster://a:1?read-from=replica").read_from_replica);
  EXPECT_THROW(parse_target_uri("redis://a:1?read-from=replica"), std::invalid_argument);
  EXPECT_THROW(parse_target_uri("redis+cluster://a:1?read-from=slave"), std::invalid_argument);
}

TEST(TargetUri, TlsByRedissOrOption) {
  auto t = parse_target_uri("rediss://pw@cache.example:6380");
  EXPECT_EQ(t.protocol, Protocol::redis);
  EXPECT_TRUE(t.tls.enabled);
  EXPECT_TRUE(t.tls.verify);
  EXPECT_FALSE(t.cluster);
  EXPECT_EQ(t.display, "rediss://***@cache.example:6380");
  EXPECT_FALSE(parse_target_uri("redis://h:1").tls.enabled);

  auto m = parse_target_uri(
      "memcached://127.0.0.1:11211?tls=1&ca=/etc/ca.pem&cert=/c.pem&key=/k.pem&sni=mc.example"
      "&protocol=binary");
  EXPECT_EQ(m.protocol, Protocol::memcached);
  EXPECT_TRUE(m.tls.enabled);
  EXPECT_TRUE(m.binary_protocol);
  EXPECT_EQ(m.tls.ca_file, "/etc/ca.pem");
  EXPECT_EQ(m.tls.cert_file, "/c.pem");
  EXPECT_EQ(m.tls.key_file, "/k.pem");
  EXPECT_EQ(m.tls.server_name, "mc.example");
  EXPECT_FALSE(parse_target_uri("memcached://h:1?tls=1&verify=0").tls.verify);
  EXPECT_FALSE(parse_target_uri("memcached://h:1?tls=0").tls.enabled);
}

TEST(TargetUri, ClusterSeeds) {
  auto c = parse_target_uri("redis+cluster://127.0.0.1:7000,127.0.0.1:7001");
  EXPECT_TRUE(c.cluster);
  EXPECT_FALSE(c.tls.enabled);
  ASSERT_EQ(c.servers.size(), 2u);
  EXPECT_EQ(c.servers[1].port, 7001);
  auto s = parse_target_uri("rediss+cluster://u:pw@h:7000?verify=0");
  EXPECT_TRUE(s.cluster);
  EXPECT_TRUE(s.tls.enabled);
  EXPECT_FALSE(s.tls.verify);
  EXPECT_EQ(s.password, "pw");
  EXPECT_EQ(s.display, "rediss+cluster://u:***@h:7000?verify=0");
}

// A server without a port gets its protocol's own, as redis-cli and memcached clients do, not a
// "missing port" error.
TEST(TargetUri, APortlessServerGetsTheProtocolsDefaultPort) {
  const auto r = parse_target_uri("redis://localhost");
  ASSERT_EQ(r.servers.size(), 1u);
  EXPECT_EQ(r.servers[0].host, "localhost");
  EXPECT_EQ(r.servers[0].port, 6379);
  EXPECT_EQ(parse_target_uri("rediss://cache/2").servers[0].port, 6379);
  EXPECT_EQ(parse_target_uri("redis://u:p@[::1]").servers[0].host, "::1");
  EXPECT_EQ(parse_target_uri("redis://u:p@[::1]").servers[0].port, 6379);
  EXPECT_EQ(parse_target_uri("redis+cluster://seed").servers[0].port, 6379);
  const auto m = parse_target_uri("memcached://a,b:2?protocol=binary");
  ASSERT_EQ(m.servers.size(), 2u);
  EXPECT_EQ(m.servers[0].port, 11211);
  EXPECT_EQ(m.servers[1].port, 2);
  EXPECT_EQ(r.display, "redis://localhost");  // shown as typed
}

TEST(TargetUri, BadUrisNameTheProblem) {
  struct Case {
    const char* uri;
    const char* mentions;
  } cases[] = {
      {"127.0.0.1:6379", "expected redis://"},
      {"http://x:1", "unknown scheme"},
      {"redis://::1:6379", "IPv6 addresses need [brackets]"},
      {"redis://[::1", "expected [IPv6]:port"},
      {"redis://host:0", "port"},
      {"redis://host:99999", "port"},
      {"redis://host:abc", "port"},
      {"redis://host:1/x", "database"},
      {"redis://a:1,b:2", "one server"},
      {"memcached://u:p@a:1", "no user"},
      {"memcached://a:1,", "empty server"},
      {"memcached://a:1?protocol=udp", "unknown option"},
      {"redis://:1", "missing host"},
      {"redis://bad host:1", "space or control character in host"},
      {"memcached://a:1,b\t:2", "space or control character in host"},
      {"redis://h:1?ca=/x.pem", "need TLS"},
      {"memcached://h:1?verify=0", "need TLS"},
      {"rediss://h:1?key=/k.pem", "key= needs cert="},
      {"rediss://h:1?ca=", "unknown option"},
      {"rediss://h:1?verify=2", "unknown option"},
      {"redis+cluster://h:1/2", "only database 0"},
      {"memcached+cluster://h:1", "unknown scheme"},
  };
  for (const auto& c : cases) {
    try {
      parse_target_uri(c.uri);
      ADD_FAILURE() << "accepted " << c.uri;
    } catch (const std::invalid_argument& e) {
      std::string msg = e.what();
      EXPECT_NE(msg.find(c.uri), std::string::npos) << msg;
      EXPECT_NE(msg.find(c.mentions), std::string::npos) << c.uri << " -> " << msg;
    }
  }
}

}  // namespace

// The stored command line used to end a URI at the first '/', ' ' or '\'', so these passwords
// (valid for parse_target_uri) reached runs.command_line unredacted.
TEST(RedactUriPasswords, HidesEveryPasswordParseTargetUriWouldRead) {
  EXPECT_EQ(kv::drive::redact_uri_passwords("redis://alice:s3cret@h:6379/2"),
            "redis://alice:***@h:6379/2");
  EXPECT_EQ(kv::drive::redact_uri_passwords("redis://pw@h:1"), "redis://***@h:1");
  EXPECT_EQ(kv::drive::redact_uri_passwords("--target=redis://u:pa/ss@h:1?nodelay=0"),
            "--target=redis://u:***@h:1?nodelay=0");
  EXPECT_EQ(kv::drive::redact_uri_passwords("redis://u:pa ss'x@y@h:1"), "redis://u:***@h:1");
  EXPECT_EQ(kv::drive::redact_uri_passwords("redis://h:1"), "redis://h:1");
  EXPECT_EQ(kv::drive::redact_uri_passwords("memcached://a:1,b:2"), "memcached://a:1,b:2");
  EXPECT_EQ(kv::drive::redact_uri_passwords("--threads"), "--threads");
  EXPECT_EQ(kv::drive::redact_uri_passwords("rediss://u:pw@h:1"), "rediss://u:***@h:1");
  EXPECT_EQ(kv::drive::redact_uri_passwords("--target=redis+cluster://pw@h:2"),
            "--target=redis+cluster://***@h:2");
  EXPECT_EQ(kv::drive::redact_uri_passwords("rediss+cluster://a:b@h:1?tls=1"),
            "rediss+cluster://a:***@h:1?tls=1");
  // Whatever the password, the redacted URI parses to the same target with password ***.
  for (std::string pw : {"p/w", "p w", "p'w", "p@w", "p:w"}) {
    auto t = kv::drive::parse_target_uri(
        kv::drive::redact_uri_passwords("redis://bob:" + pw + "@h:7/3"));
    EXPECT_EQ(t.password, "***") << pw;
    EXPECT_EQ(t.user, "bob") << pw;
    EXPECT_EQ(t.servers.at(0).port, 7) << pw;
  }
}

// A --processes process's argv: every password removed as parse_target_uri would read it, the
// user kept (user:@host, an empty password, which its environment then fills).
TEST(StripUriPasswords, RemovesEveryPasswordAndKeepsTheUser) {
  using kv::drive::parse_target_uri;
  using kv::drive::strip_uri_passwords;
  using kv::drive::with_uri_password;
  EXPECT_EQ(strip_uri_passwords("redis://alice:s3cret@h:6379/2"), "redis://alice:@h:6379/2");
  EXPECT_EQ(strip_uri_passwords("redis://pw@h:1"), "redis://h:1");
  EXPECT_EQ(strip_uri_passwords("--target=redis://u:pa/ss@h:1?nodelay=0"),
            "--target=redis://u:@h:1?nodelay=0");
  EXPECT_EQ(strip_uri_passwords("redis://u:pa ss'x@y@h:1"), "redis://u:@h:1");
  EXPECT_EQ(strip_uri_passwords("memcached://a:1,b:2"), "memcached://a:1,b:2");
  for (const std::string uri : {"redis://alice:s3cret@h:6379/2", "redis://pw@h:1"}) {
    const auto stripped = parse_target_uri(strip_uri_passwords(uri));
    EXPECT_TRUE(stripped.password.empty()) << uri;
    EXPECT_EQ(stripped.user, parse_target_uri(uri).user) << uri;
    // And back: the password put into the stripped URI is the one it had.
    const auto back = parse_target_uri(with_uri_password(strip_uri_passwords(uri), "p:w@x/y"));
    EXPECT_EQ(back.password, "p:w@x/y") << uri;
    EXPECT_EQ(back.user, parse_target_uri(uri).user) << uri;
  }
  EXPECT_EQ(with_uri_password("redis://u:old@h:1", "new"), "redis://u:old@h:1");  // has one
  EXPECT_THROW(with_uri_password("redis://h:1", "a?b"), kv::UsageError);
}
