// Parsers of Redis INFO and memcached "stats" replies, on literal texts: real replies (Redis
// 7.0, memcached 1.6), malformed lines, every truncation, and random garbage.
#include "store/store_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {
using kv::drive::parse_memcached_stats;
using kv::drive::parse_redis_info;
using kv::drive::StatValue;

std::optional<double> find(const std::vector<StatValue>& v, const std::string& name) {
  std::optional<double> out;
  for (const auto& s : v)
    if (s.name == name) {
      EXPECT_FALSE(out) << name << " appears twice";
      out = s.value;
    }
  return out;
}

// Every name non-empty printable ASCII without spaces, every value finite.
void expect_sane(const std::vector<StatValue>& values) {
  for (const auto& s : values) {
    ASSERT_FALSE(s.name.empty());
    for (char c : s.name) ASSERT_TRUE(c > ' ' && c <= '~') << "bad name byte in " << s.name;
    ASSERT_TRUE(std::isfinite(s.value)) << s.name;
  }
}

// Abridged "INFO everything" from redis-server 7.0.15, CRLF as on the wire.
const std::string kRedisInfo =
    "# Server\r\n"
    "redis_version:7.0.15\r\n"
    "redis_git_sha1:00000000\r\n"
    "os:Linux 6.1.0 x86_64\r\n"
    "process_id:10622\r\n"
    "run_id:e8ef316a8adf229ccc6c9d2ede51a1d7cde026e6\r\n"
    "config_file:\r\n"
    "\r\n"
    "# Clients\r\n"
    "connected_clients:3\r\n"
    "\r\n"
    "# Memory\r\n"
    "used_memory:941040\r\n"
    "used_memory_human:918.98K\r\n"
    "used_memory_rss:12431360\r\n"
    "used_memory_peak_perc:100.20%\r\n"
    "maxmemory:0\r\n"
    "maxmemory_policy:noeviction\r\n"
    "mem_fragmentation_ratio:13.80\r\n"
    "\r\n"
    "# Persistence\r\n"
    "current_cow_size:0\r\n"
    "rdb_bgsave_in_progress:1\r\n"
    "rdb_last_bgsave_status:ok\r\n"
    "rdb_last_bgsave_time_sec:-1\r\n"
    "aof_rewrite_in_progress:0\r\n"
    "\r\n"
    "# Stats\r\n"
    "instantaneous_ops_per_sec:51234\r\n"
    "evicted_keys:17\r\n"
    "keyspace_hits:900\r\n"
    "keyspace_misses:100\r\n"
    "latest_fork_usec:1234\r\n"
    "\r\n"
    "# Replication\r\n"
    "role:master\r\n"
    "master_replid2:0000000000000000000000000000000000000000\r\n"
    "slave0:ip=127.0.0.1,port=6380,state=online,offset=42,lag=0\r\n"
    "\r\n"
    "# CPU\r\n"
    "used_cpu_sys:0.005121\r\n"
    "used_cpu_user:1.25\r\n"
    "\r\n"
    "# Commandstats\r\n"
    "cmdstat_set:calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=1\r\n"
    "cmdstat_client|list:calls=2,usec=9,usec_per_call=4.50,rejected_calls=0,failed_calls=0\r\n"
    "\r\n"
    "# Errorstats\r\n"
    "errorstat_ERR:count=1\r\n"
    "\r\n"
    "# Latencystats\r\n"
    "latency_percentiles_usec_set:p50=9.023,p99=9.023,p99.9=10.5\r\n"
    "\r\n"
    "# Keyspace\r\n"
    "db0:keys=5,expires=2,avg_ttl=3000\r\n"
    "db3:keys=7,expires=0,avg_ttl=0\r\n";

TEST(ParseRedisInfo, KeepsTheNumericFieldsOfARealReply) {
  auto v = parse_redis_info(kRedisInfo);
  expect_sane(v);
  EXPECT_EQ(find(v, "used_memory"), 941040);
  EXPECT_EQ(find(v, "used_memory_rss"), 12431360);
  EXPECT_EQ(find(v, "mem_fragmentation_ratio"), 13.80);
  EXPECT_EQ(find(v, "maxmemory"), 0);
  EXPECT_EQ(find(v, "evicted_keys"), 17);
  EXPECT_EQ(find(v, "rdb_bgsave_in_progress"), 1);
  EXPECT_EQ(find(v, "aof_rewrite_in_progress"), 0);
  EXPECT_EQ(find(v, "current_cow_size"), 0);
  EXPECT_EQ(find(v, "latest_fork_usec"), 1234);
  EXPECT_EQ(find(v, "instantaneous_ops_per_sec"), 51234);
  EXPECT_EQ(find(v, "keyspace_hits"), 900);
  EXPECT_EQ(find(v, "keyspace_misses"), 100);
  EXPECT_EQ(find(v, "used_cpu_user"), 1.25);
  EXPECT_EQ(find(v, "used_cpu_sys"), 0.005121);
  EXPECT_EQ(find(v, "connected_clients"), 3);
  EXPECT_EQ(find(v, "process_id"), 10622);
  EXPECT_EQ(find(v, "rdb_last_bgsave_time_sec"), -1);
}

TEST(ParseRedisInfo, SplitsCommandstatsKeyspaceAndOtherLists) {
  auto v = parse_redis_info(kRedisInfo);
  EXPECT_EQ(find(v, "cmdstat_set_calls"), 12);
  EXPECT_EQ(find(v, "cmdstat_set_usec"), 34);
  EXPECT_EQ(find(v, "cmdstat_set_usec_per_call"), 2.83);
  EXPECT_EQ(find(v, "cmdstat_set_failed_calls"), 1);
  EXPECT_EQ(find(v, "cmdstat_client|list_calls"), 2);
  EXPECT_EQ(find(v, "db0_keys"), 5);
  EXPECT_EQ(find(v, "db0_expires"), 2);
  EXPECT_EQ(find(v, "db0_avg_ttl"), 3000);
  EXPECT_EQ(find(v, "db3_keys"), 7);
  EXPECT_EQ(find(v, "errorstat_ERR_count"), 1);
  EXPECT_EQ(find(v, "latency_percentiles_usec_set_p99.9"), 10.5);
  EXPECT_EQ(find(v, "slave0_offset"), 42);
  EXPECT_EQ(find(v, "slave0_port"), 6380);
  EXPECT_FALSE(find(v, "slave0_ip"));
  EXPECT_FALSE(find(v, "slave0_state"));
  EXPECT_FALSE(find(v, "cmdstat_set"));
  EXPECT_FALSE(find(v, "db0"));
}

TEST(ParseRedisInfo, SkipsTextPercentagesHeadersAndIdentifiers) {
  auto v = parse_redis_info(kRedisInfo);
  std::set<std::string> names;
  for (const auto& s : v) names.insert(s.name);
  for (const char* skipped :
       {"redis_version", "os", "run_id", "redis_git_sha1", "master_replid2", "config_file",
        "used_memory_human", "used_memory_peak_perc", "maxmemory_policy", "rdb_last_bgsave_status",
        "role", "# Server", "Server"})
    EXPECT_EQ(names.count(skipped), 0u) << skipped;
  // 17 plain fields + 5 + 5 (two commandstats lines) + 2 x 3 (keyspace) + 1 + 3 + 3 (slave0).
  EXPECT_EQ(v.size(), 17u + 10u + 6u + 1u + 3u + 3u);
}

TEST(ParseRedisInfo, AcceptsBareNewlinesAndSurroundingSpace) {
  auto v = parse_redis_info("used_memory:10\nmaxmemory: 20 \n\n  keyspace_hits:3\t\r\n");
  EXPECT_EQ(find(v, "used_memory"), 10);
  EXPECT_EQ(find(v, "maxmemory"), 20);
  EXPECT_EQ(find(v, "keyspace_hits"), 3);
  EXPECT_EQ(v.size(), 3u);
}

TEST(ParseRedisInfo, SkipsMalformedLines) {
  const std::string text =
      "no colon here\r\n"
      ":5\r\n"             // no name
      "empty:\r\n"         // no value
      "two words:5\r\n"    // a space in the name
      "version:1.2.3\r\n"  // not one number
      "hex:0x10\r\n"
      "plus:+5\r\n"
      "notanumber:nan\r\n"
      "infinite:inf\r\n"
      "huge:1e400\r\n"  // out of range
      "trailing:12abc\r\n"
      "mixed:calls=abc,usec=5,=7,novalue,usec_per_call=,x y=3\r\n"
      "commas:,,,\r\n"
      "good:-2.5e3\r\n";
  auto v = parse_redis_info(text);
  expect_sane(v);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(find(v, "mixed_usec"), 5);
  EXPECT_EQ(find(v, "good"), -2500);
}

TEST(ParseRedisInfo, EmptyAndBlankInputGiveNothing) {
  EXPECT_TRUE(parse_redis_info("").empty());
  EXPECT_TRUE(parse_redis_info("\r\n\r\n\n").empty());
  EXPECT_TRUE(parse_redis_info("# Memory\r\n").empty());
}

TEST(ParseRedisInfo, EveryTruncationParsesToSaneValues) {
  const size_t full = parse_redis_info(kRedisInfo).size();
  for (size_t n = 0; n <= kRedisInfo.size(); ++n) {
    auto v = parse_redis_info(std::string_view(kRedisInfo).substr(0, n));
    expect_sane(v);
    // A cut value can turn "100.20%" into "100.2", one extra field at most.
    ASSERT_LE(v.size(), full + 1) << "prefix of " << n;
  }
  // Cut inside a commandstats line: the complete items are kept.
  auto v = parse_redis_info("cmdstat_get:calls=7,usec=1");
  EXPECT_EQ(find(v, "cmdstat_get_calls"), 7);
  EXPECT_EQ(find(v, "cmdstat_get_usec"), 1);
  v = parse_redis_info("cmdstat_get:calls=7,us");
  EXPECT_EQ(v.size(), 1u);
}

// Random bytes, and random splices of real text with garbage: no crash, only sane output.
std::string garble(std::mt19937& rng, const std::string& base) {
  std::string s;
  std::uniform_int_distribution<int> byte(0, 255), len(0, 200), pick(0, 3);
  std::uniform_int_distribution<size_t> pos(0, base.size() - 1);
  while (s.size() < 600) {
    switch (pick(rng)) {
      case 0:
        for (int i = len(rng); i > 0; --i) s += static_cast<char>(byte(rng));
        break;
      case 1:
        s += base.substr(pos(rng), static_cast<size_t>(len(rng)));
        break;
      case 2:
        s += "\r\n";
        break;
      default:
        s += "STAT x " + std::to_string(byte(rng)) + std::string("\0:=,\n", 5) + "a:=,b=1";
    }
  }
  return s;
}

TEST(ParseRedisInfo, GarbageNeverCrashes) {
  std::mt19937 rng(12345);
  for (int i = 0; i < 3000; ++i) expect_sane(parse_redis_info(garble(rng, kRedisInfo)));
  const char binary[] = {'\0', '\xff', ':',  '5', '\n', 'a', '\0',
                         ':',  '1',    '\n', 'o', 'k',  ':', '2'};
  auto v = parse_redis_info(std::string_view(binary, sizeof binary));
  ASSERT_EQ(v.size(), 1u);  // only "ok:2"; names with NUL or high bytes are refused
  EXPECT_EQ(find(v, "ok"), 2);
}

// Abridged "stats" reply from memcached 1.6.18.
const std::string kMemcachedStats =
    "STAT pid 10632\r\n"
    "STAT uptime 7\r\n"
    "STAT version 1.6.18\r\n"
    "STAT libevent 2.1.12-stable\r\n"
    "STAT rusage_user 1.500000\r\n"
    "STAT rusage_system 0.006745\r\n"
    "STAT curr_connections 4\r\n"
    "STAT cmd_get 200\r\n"
    "STAT cmd_set 100\r\n"
    "STAT get_hits 150\r\n"
    "STAT get_misses 50\r\n"
    "STAT limit_maxbytes 67108864\r\n"
    "STAT bytes 123456\r\n"
    "STAT curr_items 100\r\n"
    "STAT evictions 3\r\n"
    "END\r\n";

TEST(ParseMemcachedStats, KeepsTheNumericFieldsOfARealReply) {
  auto v = parse_memcached_stats(kMemcachedStats);
  expect_sane(v);
  EXPECT_EQ(find(v, "pid"), 10632);
  EXPECT_EQ(find(v, "rusage_user"), 1.5);
  EXPECT_EQ(find(v, "rusage_system"), 0.006745);
  EXPECT_EQ(find(v, "curr_connections"), 4);
  EXPECT_EQ(find(v, "cmd_get"), 200);
  EXPECT_EQ(find(v, "cmd_set"), 100);
  EXPECT_EQ(find(v, "get_hits"), 150);
  EXPECT_EQ(find(v, "get_misses"), 50);
  EXPECT_EQ(find(v, "limit_maxbytes"), 67108864);
  EXPECT_EQ(find(v, "bytes"), 123456);
  EXPECT_EQ(find(v, "curr_items"), 100);
  EXPECT_EQ(find(v, "evictions"), 3);
  EXPECT_FALSE(find(v, "version"));
  EXPECT_FALSE(find(v, "libevent"));
  EXPECT_EQ(v.size(), 13u);
  EXPECT_EQ(v.front().name, "pid");  // reply order
  EXPECT_EQ(v.back().name, "evictions");
}

TEST(ParseMemcachedStats, SkipsMalformedLines) {
  const std::string text =
      "STAT\r\n"
      "STAT lonely\r\n"
      "STATX cmd_get 1\r\n"
      "stat cmd_get 1\r\n"
      "STAT two values 1 2\r\n"
      "STAT word ok\r\n"
      "STAT big 1e999\r\n"
      "ERROR\r\n"
      "SERVER_ERROR out of memory\r\n"
      "END\r\n"
      "STAT  curr_items   9 \r\n"
      "STAT rusage_user 2:250000\n"  // memcached < 1.4 wrote seconds:micros
      "STAT rusage_system 1:x\r\n"
      "STAT cmd_set 12";  // truncated: no CRLF, no END
  auto v = parse_memcached_stats(text);
  expect_sane(v);
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(find(v, "curr_items"), 9);
  EXPECT_EQ(find(v, "rusage_user"), 2.25);
  EXPECT_EQ(find(v, "cmd_set"), 12);
}

TEST(ParseMemcachedStats, EveryTruncationAndGarbageParsesToSaneValues) {
  const size_t full = parse_memcached_stats(kMemcachedStats).size();
  for (size_t n = 0; n <= kMemcachedStats.size(); ++n) {
    auto v = parse_memcached_stats(std::string_view(kMemcachedStats).substr(0, n));
    expect_sane(v);
    // "STAT version 1.6" (cut) reads as a number: one extra field at most.
    ASSERT_LE(v.size(), full + 1) << "prefix of " << n;
  }
  std::mt19937 rng(777);
  for (int i = 0; i < 3000; ++i) expect_sane(parse_memcached_stats(garble(rng, kMemcachedStats)));
  EXPECT_TRUE(parse_memcached_stats("").empty());
  EXPECT_TRUE(parse_memcached_stats("END\r\n").empty());
  EXPECT_TRUE(parse_memcached_stats(kRedisInfo).empty());
}

TEST(StoreStatsPoller, RejectsBadArguments) {
  auto t = kv::drive::parse_target_uri("redis://127.0.0.1:1");
  EXPECT_THROW(kv::drive::StoreStatsPoller(t, 0, 1000), std::invalid_argument);
  EXPECT_THROW(kv::drive::StoreStatsPoller(t, 1000, -1), std::invalid_argument);
  t.servers.clear();
  EXPECT_THROW(kv::drive::StoreStatsPoller(t, 1000, 1000), std::invalid_argument);
}

TEST(StoreStatsPoller, StopWithoutStartAndTwiceIsHarmless) {
  kv::drive::StoreStatsPoller p(kv::drive::parse_target_uri("redis://127.0.0.1:1"), 1000, 1000);
  p.stop();
  p.stop();
  EXPECT_TRUE(p.drain().empty());
  EXPECT_FALSE(p.latest("used_memory"));
}

}  // namespace
