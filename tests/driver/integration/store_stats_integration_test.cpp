// StoreStatsPoller against real redis-server and memcached: the polled counters must equal what
// was written, the interval must hold, and outages (nothing listening, a stalled server, a
// killed and restarted one) must give no samples, one warning, a prompt stop() and a resume.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kvbench/clock.hpp"
#include "libmemcached_client.hpp"
#include "servers.hpp"
#include "store/store_stats.hpp"
#include "store/target_uri.hpp"

namespace {
using kv::drive::parse_target_uri;
using kv::drive::StoreStatsPoller;
using kv::drive::StoreStatsSample;
using kv::test::StoreServer;
using kv::test::tcp_request;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// hiredis writes with write(2); kvdrive ignores SIGPIPE in main, so must this test.
[[maybe_unused]] const bool kSigpipeIgnored = [] {
  ::signal(SIGPIPE, SIG_IGN);
  return true;
}();

constexpr int64_t kMs = 1000;

std::optional<double> value_of(const StoreStatsSample& s, const std::string& name) {
  for (const auto& v : s.values)
    if (v.name == name) return v.value;
  return std::nullopt;
}

// Drains until a sample satisfies `pred` (any sample by default) or timeout_ms passes.
std::optional<StoreStatsSample> wait_for_sample(
    StoreStatsPoller& p, int timeout_ms,
    const std::function<bool(const StoreStatsSample&)>& pred = [](const auto&) { return true; }) {
  auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    for (auto& s : p.drain())
      if (pred(s)) return std::move(s);
    std::this_thread::sleep_for(20ms);
  }
  return std::nullopt;
}

// Writes key0..key<n-1>: Redis as RESP commands on one connection (AUTH / SELECT as the URI
// says), memcached through libmemcached (a pool: ketama, as a user's client would place them).
void write_keys(const std::string& uri, int n) {
  const auto spec = parse_target_uri(uri);
  if (spec.protocol == kv::drive::Protocol::memcached) {
    std::vector<std::pair<std::string, int>> servers;
    for (const auto& s : spec.servers) servers.emplace_back(s.host, s.port);
    kv::test::LibmemcachedClient mc(servers);
    for (int i = 0; i < n; ++i) mc.set("key" + std::to_string(i), "value");
    return;
  }
  auto bulk = [](const std::string& a) {
    return "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  };
  std::string req;
  int replies = 0;
  if (!spec.password.empty()) {
    req += "*3\r\n" + bulk("AUTH") + bulk(spec.user.empty() ? "default" : spec.user) +
           bulk(spec.password);
    ++replies;
  }
  if (spec.db != 0) {
    req += "*2\r\n" + bulk("SELECT") + bulk(std::to_string(spec.db));
    ++replies;
  }
  for (int i = 0; i < n; ++i) {
    req += "*3\r\n" + bulk("SET") + bulk("key" + std::to_string(i)) + bulk("value");
    ++replies;
  }
  // Every reply is "+OK\r\n": the last one ends the exchange.
  std::string ok;
  for (int i = 0; i < replies; ++i) ok += "+OK\r\n";
  ASSERT_EQ(tcp_request(spec.servers.front().port, req, ok), ok);
}

size_t count(const std::string& haystack, const std::string& needle) {
  size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

// Milliseconds that stop() took.
int64_t timed_stop(StoreStatsPoller& p) {
  auto t0 = Clock::now();
  p.stop();
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

// Redis's persistence cost is in the store-stats rows (#20): a BGSAVE's fork time and
// copy-on-write size, and whether a save or rewrite is under way, straight from INFO.
TEST(StoreStatsIntegration, RedisBgsaveForkTimeAndCowAreRecorded) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  write_keys(redis.uri(), 500);
  StoreStatsPoller p(parse_target_uri(redis.uri()), 50 * kMs, 1000 * kMs);
  p.start();
  auto idle = wait_for_sample(p, 10'000);
  ASSERT_TRUE(idle);
  for (const char* f : {"rdb_bgsave_in_progress", "aof_rewrite_in_progress", "current_cow_size",
                        "latest_fork_usec", "rdb_last_cow_size"}) {
    EXPECT_TRUE(value_of(*idle, f)) << f << " missing from the store-stats rows";
  }
  EXPECT_EQ(value_of(*idle, "latest_fork_usec"), 0);  // never forked yet
  ASSERT_NE(kv::test::tcp_request(redis.port(), "BGSAVE\r\n", "\r\n").find("Background"),
            std::string::npos);
  auto saved = wait_for_sample(p, 20'000, [](const StoreStatsSample& s) {
    return value_of(s, "latest_fork_usec").value_or(0) > 0 &&
           value_of(s, "rdb_bgsave_in_progress") == 0;
  });
  ASSERT_TRUE(saved) << "no sample showed the BGSAVE's fork";
  p.stop();
}

// Redis's latency monitor in the store-stats rows (#20): with latency-monitor-threshold set, a
// DEBUG SLEEP is a 'command' latency event (its time and ms, as LATENCY LATEST says); with the
// threshold 0 the rows say so (latency_monitor_threshold_ms 0) and hold no event.
TEST(StoreStatsIntegration, RedisLatencyEventsAndTheThresholdAreRecorded) {
  StoreServer redis(StoreServer::Kind::redis,
                    {"--enable-debug-command", "local", "--latency-monitor-threshold", "50"});
  KV_START_OR_SKIP(redis);
  StoreStatsPoller p(parse_target_uri(redis.uri()), 50 * kMs, 2000 * kMs);
  p.start();
  auto idle = wait_for_sample(p, 10'000);
  ASSERT_TRUE(idle);
  EXPECT_EQ(value_of(*idle, "latency_monitor_threshold_ms"), 50);
  EXPECT_FALSE(value_of(*idle, "latency_command_latest_ms"));  // nothing recorded yet
  const double before_s = static_cast<double>(kv::now_ts_us() / 1'000'000);
  ASSERT_EQ(kv::test::tcp_request(redis.port(), "DEBUG SLEEP 0.2\r\n", "\r\n"), "+OK\r\n");
  auto slept = wait_for_sample(p, 10'000, [](const StoreStatsSample& s) {
    return value_of(s, "latency_command_latest_ms").has_value();
  });
  ASSERT_TRUE(slept) << "no sample showed the DEBUG SLEEP as a latency event";
  EXPECT_GE(value_of(*slept, "latency_command_latest_ms").value_or(0), 200);
  EXPECT_GE(value_of(*slept, "latency_command_max_ms").value_or(0), 200);
  EXPECT_GE(value_of(*slept, "latency_command_ts").value_or(0), before_s);
  p.stop();

  StoreServer off(StoreServer::Kind::redis,
                  {"--enable-debug-command", "local", "--latency-monitor-threshold", "0"});
  KV_START_OR_SKIP(off);
  StoreStatsPoller q(parse_target_uri(off.uri()), 50 * kMs, 2000 * kMs);
  q.start();
  ASSERT_EQ(kv::test::tcp_request(off.port(), "DEBUG SLEEP 0.2\r\n", "\r\n"), "+OK\r\n");
  const int64_t slept_ts = kv::now_ts_us();
  auto after = wait_for_sample(  // a poll after the sleep
      q, 10'000, [&](const StoreStatsSample& s) { return s.ts_us > slept_ts; });
  ASSERT_TRUE(after);
  EXPECT_EQ(value_of(*after, "latency_monitor_threshold_ms"), 0);
  EXPECT_FALSE(value_of(*after, "latency_command_latest_ms"));
  q.stop();
}

TEST(StoreStatsIntegration, RedisCountersMatchWhatWasWritten) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  const int kN = 57;
  write_keys(redis.uri(), kN);
  StoreStatsPoller p(parse_target_uri(redis.uri()), 100 * kMs, 1000 * kMs);
  p.start();
  auto s = wait_for_sample(p, 3000);
  ASSERT_TRUE(s);
  EXPECT_EQ(value_of(*s, "cmdstat_set_calls"), kN);
  EXPECT_EQ(value_of(*s, "db0_keys"), kN);
  EXPECT_EQ(value_of(*s, "process_id"), redis.pid());
  EXPECT_GT(value_of(*s, "used_memory").value_or(0), 0);
  EXPECT_GT(value_of(*s, "used_memory_rss").value_or(0), 0);
  EXPECT_GE(value_of(*s, "connected_clients").value_or(0), 1);
  EXPECT_TRUE(value_of(*s, "mem_fragmentation_ratio"));
  EXPECT_TRUE(value_of(*s, "used_cpu_user"));
  EXPECT_FALSE(value_of(*s, "cmdstat_get_calls"));  // never called
  EXPECT_GT(s->ts_us, 1'600'000'000'000'000);
  EXPECT_EQ(p.latest("db0_keys"), kN);
  EXPECT_FALSE(p.latest("no_such_counter"));
}

TEST(StoreStatsIntegration, RedisAuthAndDb) {
  StoreServer redis(StoreServer::Kind::redis, {"--requirepass", "s3cret"});
  KV_START_OR_SKIP(redis);
  std::string base = "127.0.0.1:" + std::to_string(redis.port());
  write_keys("redis://default:s3cret@" + base + "/2", 5);
  StoreStatsPoller good(parse_target_uri("redis://default:s3cret@" + base + "/2"), 100 * kMs,
                        1000 * kMs);
  good.start();
  auto s = wait_for_sample(good, 3000);
  ASSERT_TRUE(s);
  EXPECT_EQ(value_of(*s, "db2_keys"), 5);
  EXPECT_FALSE(value_of(*s, "db0_keys"));
  good.stop();

  testing::internal::CaptureStderr();
  StoreStatsPoller bad(parse_target_uri("redis://default:wrong-pw@" + base), 100 * kMs, 1000 * kMs);
  bad.start();
  std::this_thread::sleep_for(500ms);
  bad.stop();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(bad.drain().empty());
  EXPECT_EQ(count(log, "AUTH failed: WRONGPASS"), 1u) << log;
  EXPECT_EQ(log.find("wrong-pw"), std::string::npos) << log;
}

TEST(StoreStatsIntegration, MemcachedCountersMatchWhatWasWritten) {
  StoreServer mc(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(mc);
  const int kN = 43;
  write_keys(mc.uri(), kN);
  StoreStatsPoller p(parse_target_uri(mc.uri()), 100 * kMs, 1000 * kMs);
  p.start();
  auto s = wait_for_sample(p, 3000);
  ASSERT_TRUE(s);
  EXPECT_EQ(value_of(*s, "cmd_set"), kN);
  EXPECT_EQ(value_of(*s, "curr_items"), kN);
  EXPECT_EQ(value_of(*s, "cmd_get"), 0);
  EXPECT_EQ(value_of(*s, "limit_maxbytes"), 256.0 * 1024 * 1024);  // StoreServer runs -m 256
  EXPECT_EQ(value_of(*s, "pid"), mc.pid());
  EXPECT_GT(value_of(*s, "bytes").value_or(0), 0);
  EXPECT_GE(value_of(*s, "rusage_user").value_or(-1), 0);
  EXPECT_FALSE(value_of(*s, "version"));
  // The poller keeps one connection: connections do not grow with the polls.
  auto later = wait_for_sample(p, 3000, [](const auto& x) { return x.ts_us > 0; });
  ASSERT_TRUE(later);
  EXPECT_EQ(value_of(*later, "total_connections"), value_of(*s, "total_connections"));
}

TEST(StoreStatsIntegration, MemcachedPoolNamesArePrefixedPerServer) {
  StoreServer a(StoreServer::Kind::memcached), b(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  std::string pa = "127.0.0.1:" + std::to_string(a.port());
  std::string pb = "127.0.0.1:" + std::to_string(b.port());
  const int kN = 200;
  write_keys("memcached://" + pa + "," + pb, kN);
  StoreStatsPoller p(parse_target_uri("memcached://" + pa + "," + pb), 100 * kMs, 1000 * kMs);
  p.start();
  auto s = wait_for_sample(p, 3000);
  ASSERT_TRUE(s);
  auto sa = value_of(*s, pa + "/cmd_set"), sb = value_of(*s, pb + "/cmd_set");
  ASSERT_TRUE(sa && sb);
  EXPECT_EQ(*sa + *sb, kN);
  EXPECT_GT(*sa, 0);  // ketama spread the keys over both
  EXPECT_GT(*sb, 0);
  EXPECT_EQ(value_of(*s, pa + "/pid"), a.pid());
  EXPECT_EQ(value_of(*s, pb + "/pid"), b.pid());
  EXPECT_FALSE(value_of(*s, "cmd_set"));
  EXPECT_EQ(p.latest(pb + "/pid"), b.pid());

  // One server down: samples go on with the other's values.
  b.stop();
  auto partial = wait_for_sample(p, 3000, [&](const auto& x) { return !value_of(x, pb + "/pid"); });
  ASSERT_TRUE(partial);
  EXPECT_EQ(value_of(*partial, pa + "/pid"), a.pid());
}

TEST(StoreStatsIntegration, IntervalHoldsAndDrainClears) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreStatsPoller p(parse_target_uri(redis.uri()), 100 * kMs, 1000 * kMs);
  p.start();
  std::this_thread::sleep_for(550ms);
  auto samples = p.drain();
  ASSERT_GE(samples.size(), 3u);
  EXPECT_LE(samples.size(), 7u);  // ticks are 100 ms apart, not back to back
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_GT(samples[i].ts_us, samples[i - 1].ts_us);
  // On average: a sample is stamped when its reply is read, so a poll held up on a loaded
  // machine comes close before the next one on the 100 ms grid (8.9 ms apart once under TSan).
  EXPECT_GE(
      (samples.back().ts_us - samples.front().ts_us) / static_cast<int64_t>(samples.size() - 1),
      40 * kMs);
  EXPECT_LE(p.drain().size(), 1u);  // cleared; at most one new tick since
  EXPECT_LT(timed_stop(p), 500);
}

void expect_no_samples_one_warning(const std::string& uri, const std::string& label) {
  testing::internal::CaptureStderr();
  StoreStatsPoller p(parse_target_uri(uri), 100 * kMs, 500 * kMs);
  p.start();
  std::this_thread::sleep_for(700ms);  // several failed ticks
  EXPECT_LT(timed_stop(p), 2000);
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(p.drain().empty());
  EXPECT_FALSE(p.latest("pid"));
  EXPECT_EQ(count(log, "cannot poll " + label), 1u) << log;
}

TEST(StoreStatsIntegration, NothingListeningGivesNoSamplesAndOneWarning) {
  int port = kv::test::free_port();
  std::string hp = "127.0.0.1:" + std::to_string(port);
  expect_no_samples_one_warning("redis://" + hp, "redis " + hp);
  expect_no_samples_one_warning("memcached://" + hp, "memcached " + hp);
}

// A stopped (SIGSTOP) server accepts connections but never answers.
void check_stalled_then_resumed(StoreServer& server, const std::string& label) {
  server.process().signal(SIGSTOP);
  testing::internal::CaptureStderr();
  StoreStatsPoller p(parse_target_uri(server.uri()), 100 * kMs, 300 * kMs);
  p.start();
  std::this_thread::sleep_for(800ms);
  EXPECT_TRUE(p.drain().empty());
  server.process().signal(SIGCONT);
  auto s = wait_for_sample(p, 3000);
  auto stop_ms = timed_stop(p);
  std::string log = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s) << label;
  EXPECT_LT(stop_ms, 1000);
  EXPECT_EQ(count(log, "cannot poll " + label), 1u) << log;
  EXPECT_NE(log.find("no reply within the timeout"), std::string::npos) << log;
  EXPECT_EQ(count(log, label + " answers again"), 1u) << log;

  // Stopping while a poll hangs waits for that poll only (300 ms), not longer.
  StoreStatsPoller hung(parse_target_uri(server.uri()), 100 * kMs, 300 * kMs);
  server.process().signal(SIGSTOP);
  testing::internal::CaptureStderr();
  hung.start();
  std::this_thread::sleep_for(150ms);
  EXPECT_LT(timed_stop(hung), 1000);
  testing::internal::GetCapturedStderr();
  server.process().signal(SIGCONT);
}

TEST(StoreStatsIntegration, StalledServerTimesOutAndResumes) {
  StoreServer redis(StoreServer::Kind::redis), mc(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(mc);
  std::string hp = "127.0.0.1:";
  check_stalled_then_resumed(redis, "redis " + hp + std::to_string(redis.port()));
  check_stalled_then_resumed(mc, "memcached " + hp + std::to_string(mc.port()));
}

// Killed mid-run, restarted on the same port: samples resume, from the new process.
void check_killed_then_restarted(StoreServer& server, const std::string& pid_field) {
  StoreStatsPoller p(parse_target_uri(server.uri()), 100 * kMs, 500 * kMs);
  testing::internal::CaptureStderr();
  p.start();
  ASSERT_TRUE(wait_for_sample(p, 3000));
  pid_t old_pid = server.pid();
  server.process().signal(SIGKILL);
  server.process().wait(5000);
  std::this_thread::sleep_for(300ms);
  p.drain();
  server.restart();
  ASSERT_NE(server.pid(), old_pid);
  auto s = wait_for_sample(p, 5000, [&](const auto& x) {
    return value_of(x, pid_field) == static_cast<double>(server.pid());
  });
  p.stop();
  std::string log = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(s) << log;
  EXPECT_EQ(count(log, "cannot poll"), 1u) << log;
  EXPECT_EQ(count(log, "answers again"), 1u) << log;
}

TEST(StoreStatsIntegration, KilledServerRestartedSamplesResume) {
  StoreServer redis(StoreServer::Kind::redis), mc(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(mc);
  check_killed_then_restarted(redis, "process_id");
  check_killed_then_restarted(mc, "pid");
}

}  // namespace
