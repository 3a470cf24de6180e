// The history ring: encoding of a tick, lookup by time, and its bounds.
#include <gtest/gtest.h>

#include "history.hpp"

namespace kv::mon {
namespace {

Batch make_batch(int64_t ts, bool new_instance) {
  Batch b;
  b.scheduled_ts_us = ts;
  ProcessKey key{42, 1000};
  if (new_instance) b.new_instances.push_back({key, std::nullopt, ts - 5, "redis-server", "redis-server *:6379", "name:redis-server", ts});
  ProcessSample s;
  s.key = key;
  s.ts_us = ts + 3;
  s.scheduled_ts_us = ts;
  s.rss_kib = 1234;
  b.processes.push_back(s);
  HostSample h;
  h.ts_us = ts + 4;
  h.scheduled_ts_us = ts;
  h.load1 = 0.5;
  h.disks.push_back({"sda", 1, 2, 3, 4, 5});
  b.host = h;
  return b;
}

TEST(History, EncodesATickEndingWithItsTickLine) {
  TickEntry e = encode_tick(make_batch(1'000'000, true));
  const std::string& s = *e.lines;
  EXPECT_EQ(s.find("proc pid=42 start_ticks=1000 ts_us=1000003 scheduled_ts_us=1000000 rss_kib=1234"), 0u) << s;
  EXPECT_NE(s.find("\nhost ts_us=1000004 "), std::string::npos);
  EXPECT_NE(s.find("\ndisk ts_us=1000004 device=sda reads=1 writes=3 sectors_read=2"), std::string::npos) << s;
  EXPECT_TRUE(s.ends_with("\ntick scheduled_ts_us=1000000\n")) << s;
  EXPECT_EQ(s.find("swap_kib"), std::string::npos) << "an unknown value must be left out (NULL)";
  ASSERT_EQ(e.instances.size(), 1u);
  EXPECT_EQ(e.instances[0].pid, 42);
}

TEST(History, AnEncodedTickKeepsNoAppendSlack) {
  // The ring holds an hour of ticks: a line string built by appending may have up to twice its
  // size allocated (the 30-minute soak measured 1.77 KiB held per 0.96 KiB tick before).
  Batch b = make_batch(1'000'000, false);
  ProcessSample second = b.processes[0];
  second.key = {43, 1000};
  b.processes.push_back(second);
  TickEntry e = encode_tick(b);
  EXPECT_LE(e.lines->capacity(), e.lines->size() + e.lines->size() / 8)
      << e.lines->size() << " bytes encoded, " << e.lines->capacity() << " allocated";
}

TEST(History, AfterFindsTheNextTick) {
  HistoryRing ring;
  for (int i = 0; i < 10; ++i) ring.add(make_batch(1000 * (i + 1), i == 0));
  EXPECT_EQ(ring.after(0)->scheduled_ts_us, 1000);
  EXPECT_EQ(ring.after(1000)->scheduled_ts_us, 2000);
  EXPECT_EQ(ring.after(1500)->scheduled_ts_us, 2000);
  EXPECT_EQ(ring.after(10'000), nullptr);
  ASSERT_NE(ring.instance_line({42, 1000}), nullptr);
  EXPECT_TRUE(ring.instance_line({42, 1000})->starts_with("instance pid=42 start_ticks=1000"));
}

TEST(History, KeepsAtLeastTheMinimumThenEvictsByAgeAndBytes) {
  HistoryRing by_age({/*min_age_us=*/5000, /*min_ticks=*/3, /*max_bytes=*/1u << 30});
  for (int i = 0; i < 100; ++i) by_age.add(make_batch(1000 * (i + 1), i == 0));
  EXPECT_EQ(by_age.size(), 6u);  // newest 100000: keeps 95000..100000
  EXPECT_EQ(by_age.oldest_ts_us(), 95'000);
  EXPECT_NE(by_age.instance_line({42, 1000}), nullptr) << "still sampled: must be kept";
  for (int i = 100; i < 110; ++i) {
    Batch b = make_batch(1000 * (i + 1), false);
    b.processes.clear();
    by_age.add(b);
  }
  EXPECT_EQ(by_age.instance_line({42, 1000}), nullptr) << "kept after its last tick left";

  HistoryRing by_bytes({1'000'000'000, 1'000'000, 2000});
  for (int i = 0; i < 100; ++i) by_bytes.add(make_batch(1000 * (i + 1), false));
  EXPECT_LE(by_bytes.bytes(), 2000u);
  EXPECT_GE(by_bytes.size(), 1u);
  EXPECT_EQ(by_bytes.newest_ts_us(), 100'000);
}

}  // namespace
}  // namespace kv::mon
