// Redis 7's LATENCY HISTOGRAM reply as store stat values, and the server's latency over a
// window from two polls (no server: replies are parsed from RESP bytes by hiredis's reader).
#include "store/redis_latency.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>

namespace kv::drive {
namespace {

struct ReplyFree {
  void operator()(void* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

Reply read_reply(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, resp.data(), resp.size());
  void* out = nullptr;
  EXPECT_EQ(redisReaderGetReply(reader, &out), REDIS_OK);
  redisReaderFree(reader);
  return Reply(static_cast<redisReply*>(out));
}

// What redis-server 7.0.15 answers after one SET (16 µs) and three GETs (8, 8, 32 µs).
const char* kReply =
    "*4\r\n$3\r\nset\r\n*4\r\n$5\r\ncalls\r\n:1\r\n$14\r\nhistogram_usec\r\n*2\r\n:16\r\n:1\r\n"
    "$3\r\nget\r\n*4\r\n$5\r\ncalls\r\n:3\r\n$14\r\nhistogram_usec\r\n*4\r\n:8\r\n:2\r\n:32\r\n"
    ":3\r\n";

double value_of(const std::vector<StatValue>& v, const std::string& name) {
  for (const auto& s : v)
    if (s.name == name) return s.value;
  ADD_FAILURE() << name << " missing";
  return -1;
}

TEST(RedisLatencyHistogram, EveryBucketOfEveryCommandIsAValue) {
  auto r = read_reply(kReply);
  auto v = parse_latency_histogram(r.get());
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(value_of(v, "latency_histogram_usec_set_16"), 1);
  EXPECT_EQ(value_of(v, "latency_histogram_usec_get_8"), 2);
  EXPECT_EQ(value_of(v, "latency_histogram_usec_get_32"), 3);
}

TEST(RedisLatencyHistogram, ErrorsAndMalformedRepliesGiveWhatCouldBeRead) {
  EXPECT_TRUE(parse_latency_histogram(nullptr).empty());
  EXPECT_TRUE(parse_latency_histogram(read_reply("-ERR unknown subcommand\r\n").get()).empty());
  EXPECT_TRUE(parse_latency_histogram(read_reply(":5\r\n").get()).empty());
  // A command whose body is not an array, then a good one.
  auto v = parse_latency_histogram(
      read_reply("*4\r\n$3\r\nbad\r\n:1\r\n$3\r\nget\r\n*2\r\n$14\r\nhistogram_usec\r\n*2\r\n"
                 ":4\r\n:7\r\n")
          .get());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].name, "latency_histogram_usec_get_4");
}

TEST(RedisLatencyHistogram, TheWindowIsTheDifferenceOfTwoCumulativePolls) {
  // Before: 100 gets at <= 8 µs. After: 100 more at <= 8 µs, 98 at <= 16, 2 at <= 1024; the
  // poller's own INFO calls (slow, 2048 µs) are left out.
  std::vector<StatValue> before = {{"latency_histogram_usec_get_8", 100},
                                   {"latency_histogram_usec_info_2048", 5}};
  std::vector<StatValue> after = {{"latency_histogram_usec_get_8", 200},
                                  {"latency_histogram_usec_get_16", 298},
                                  {"latency_histogram_usec_get_1024", 300},
                                  {"latency_histogram_usec_info_2048", 9},
                                  {"latency_histogram_usec_latency|histogram_4096", 4},
                                  {"cmdstat_get_calls", 300}};
  auto s = server_latency_between(before, after);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->calls, 200);
  EXPECT_EQ(s->p50_us, 8);  // the 100th of 200 is the last at <= 8 µs
  EXPECT_EQ(s->p99_us, 16);
  EXPECT_EQ(s->p999_us, 1024);
  // Two commands are summed; a command new in the window counts from zero.
  after.push_back({"latency_histogram_usec_set_64", 800});
  s = server_latency_between(before, after);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->calls, 1000);
  EXPECT_EQ(s->p50_us, 64);
  // Nothing in the window, or no histogram at all.
  EXPECT_FALSE(server_latency_between(before, before));
  EXPECT_FALSE(server_latency_between({}, {{"cmdstat_get_calls", 1}}));
}

}  // namespace
}  // namespace kv::drive
