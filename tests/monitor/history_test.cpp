// The history ring: encoding of a tick, lookup by time, and its bounds.
#include "history.hpp"

#include <gtest/gtest.h>

namespace kv::mon {
namespace {

Batch make_batch(int64_t ts, bool new_instance) {
  Batch b;
  b.scheduled_ts_us = ts;
  ProcessKey key{42, 1000};
  if (new_instance)
    b.new_instances.push_back({key, std::nullopt, ts - 5, "redis-server", "redis-server *:6379",
                               "name:redis-server", ts});
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
  EXPECT_EQ(
      s.find("proc pid=42 start_ticks=1000 ts_us=1000003 scheduled_ts_us=1000000 rss_kib=1234"), 0u)
      << s;
  EXPECT_NE(s.find("\nhost ts_us=1000004 "), std::string::npos);
  EXPECT_NE(s.find("\ndisk ts_us=1000004 device=sda reads=1 writes=3 sectors_read=2"),
            std::string::npos)
      << s;
  EXPECT_TRUE(s.ends_with("\ntick scheduled_ts_us=1000000\n")) << s;
  EXPECT_EQ(s.find("swap_kib"), std::string::npos) << "an unknown value must be left out (NULL)";
  ASSERT_EQ(e.instances.size(), 1u);
  EXPECT_EQ(e.instances[0].pid, 42);
}

// The link lines byte for byte with every value known: the field order is the wire format
// (docs/protocol.md), now generated from kvbench/samples.hpp's field tables.
TEST(History, EncodesEveryFieldInTheDocumentedOrder) {
  ProcessSample s;
  s.key = {7, 99};
  s.ts_us = 11;
  s.scheduled_ts_us = 10;
  OptInt* ints[] = {&s.rss_kib,      &s.rss_anon_kib, &s.rss_file_kib,  &s.rss_shmem_kib,
                    &s.swap_kib,     &s.vsize_kib,    &s.cpu_user_us,   &s.cpu_system_us,
                    &s.threads,      &s.fds,          &s.io_read_bytes, &s.io_write_bytes,
                    &s.minor_faults, &s.major_faults, &s.ctx_voluntary, &s.ctx_involuntary,
                    &s.pss_kib};
  int64_t v = 1;
  for (OptInt* i : ints) *i = v++;
  EXPECT_EQ(proto::encode(process_message(s)),
            "proc pid=7 start_ticks=99 ts_us=11 scheduled_ts_us=10 rss_kib=1 rss_anon_kib=2 "
            "rss_file_kib=3 rss_shmem_kib=4 swap_kib=5 vsize_kib=6 cpu_user_us=7 cpu_system_us=8 "
            "threads=9 fds=10 io_read_bytes=11 io_write_bytes=12 minor_faults=13 major_faults=14 "
            "ctx_voluntary=15 ctx_involuntary=16 pss_kib=17\n");

  HostSample h;
  h.ts_us = 21;
  h.scheduled_ts_us = 20;
  h.load1 = 0.5;
  h.load5 = 1.5;
  h.load15 = 2.5;
  h.mem_total_kib = 1;
  h.mem_available_kib = 2;
  h.swap_total_kib = 3;
  h.swap_free_kib = 4;
  h.pswpin = 5;
  h.pswpout = 6;
  h.pgmajfault = 7;
  h.cpu_user_ticks = 8;
  h.cpu_system_ticks = 9;
  h.cpu_iowait_ticks = 10;
  h.cpu_steal_ticks = 11;
  h.cpu_idle_ticks = 12;
  h.psi_memory_some_avg10 = 0.25;
  h.psi_memory_full_avg10 = 0.75;
  h.psi_io_some_avg10 = 1.25;
  h.psi_io_full_avg10 = 1.75;
  h.psi_cpu_some_avg10 = 2.25;
  EXPECT_EQ(proto::encode(host_message(h)),
            "host ts_us=21 scheduled_ts_us=20 load1=0.5 load5=1.5 load15=2.5 mem_total_kib=1 "
            "mem_available_kib=2 swap_total_kib=3 swap_free_kib=4 pswpin=5 pswpout=6 "
            "pgmajfault=7 cpu_user_ticks=8 cpu_system_ticks=9 cpu_iowait_ticks=10 "
            "cpu_steal_ticks=11 cpu_idle_ticks=12 psi_memory_some_avg10=0.25 "
            "psi_memory_full_avg10=0.75 psi_io_some_avg10=1.25 psi_io_full_avg10=1.75 "
            "psi_cpu_some_avg10=2.25\n");

  EXPECT_EQ(proto::encode(disk_message(31, {"sda", 1, 2, 3, 4, 5})),
            "disk ts_us=31 device=sda reads=1 writes=3 sectors_read=2 sectors_written=4 io_ms=5\n");
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

TEST(History, DroppedTicksLeaveTheInstancesForTheTicksOfAClockSteppedBack) {
  HistoryRing ring;
  for (int i = 0; i < 10; ++i) ring.add(make_batch(100'000 + 1000 * i, i == 0));
  ring.drop_ticks();  // the wall clock went back: the next ticks are earlier
  EXPECT_TRUE(ring.empty());
  for (int i = 0; i < 3; ++i) ring.add(make_batch(50'000 + 1000 * i, false));
  EXPECT_EQ(ring.size(), 3u);
  EXPECT_EQ(ring.oldest_ts_us(), 50'000);
  EXPECT_EQ(ring.after(0)->scheduled_ts_us, 50'000);
  EXPECT_EQ(ring.after(50'500)->scheduled_ts_us, 51'000);
  EXPECT_EQ(ring.after(109'000), nullptr);
  ASSERT_NE(ring.instance_line({42, 1000}), nullptr) << "the new ticks still refer to it";
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
