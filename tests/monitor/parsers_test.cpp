// Unit tests of the /proc text parsers against fixture files, good and malformed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "proc_parsers.hpp"

namespace kv::mon {
namespace {

std::string fixture(const std::string& rel) {
  std::ifstream in(std::string(KV_SOURCE_DIR) + "/tests/monitor/fixtures/" + rel);
  EXPECT_TRUE(in.good()) << "missing fixture " << rel;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(PidStat, ParsesFieldsByPositionAfterComm) {
  auto st = parse_pid_stat(fixture("proc/100/stat"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st.value().comm, "redis-server");
  EXPECT_EQ(st.value().state, 'S');
  EXPECT_EQ(st.value().ppid, 1);
  EXPECT_EQ(st.value().minor_faults, 2500);
  EXPECT_EQ(st.value().major_faults, 7);
  EXPECT_EQ(st.value().utime_ticks, 1234);
  EXPECT_EQ(st.value().stime_ticks, 567);
  EXPECT_EQ(st.value().num_threads, 5);
  EXPECT_EQ(st.value().start_ticks, 89713);
  EXPECT_EQ(st.value().vsize_bytes, 73441280);
  EXPECT_EQ(st.value().rss_pages, 2048);
}

TEST(PidStat, CommWithSpacesAndParenthesesIsTakenToTheLastParen) {
  auto st = parse_pid_stat(fixture("proc/200/stat"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(st.value().comm, "my (odd) name");
  EXPECT_EQ(st.value().state, 'R');
  EXPECT_EQ(st.value().start_ticks, 12345);
  EXPECT_EQ(st.value().utime_ticks, 50);
}

TEST(PidStat, MalformedInputIsAnErrorNotACrash) {
  auto truncated = parse_pid_stat(fixture("malformed/stat_truncated"));
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.error().message.find("truncated"), std::string::npos);
  EXPECT_FALSE(parse_pid_stat(fixture("malformed/stat_no_paren")).ok());
  auto bad = parse_pid_stat(fixture("malformed/stat_bad_number"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("field 14"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(parse_pid_stat("").ok());
  EXPECT_FALSE(parse_pid_stat(")").ok());
  // Exactly the fields up to rss (24), the last one ending the line; one fewer is truncated.
  std::string line = "7 (x) S";
  for (int field = 4; field <= 24; ++field) line += " " + std::to_string(field);
  auto exact = parse_pid_stat(line + "\n");
  ASSERT_TRUE(exact.ok()) << exact.error().message;
  EXPECT_EQ(exact.value().rss_pages, 24);
  EXPECT_EQ(exact.value().start_ticks, 22);
  auto short_line = parse_pid_stat(line.substr(0, line.rfind(' ')) + "\n");
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.error().message.find("truncated (23 fields)"), std::string::npos)
      << short_line.error().message;
}

TEST(TextFields, FirstFieldsKeepsNAndCountsAll) {
  const auto f = kv::first_fields<3>("  a\tbb  c d e ");
  EXPECT_EQ(f.total, 5u);
  EXPECT_EQ(f.field[0], "a");
  EXPECT_EQ(f.field[1], "bb");
  EXPECT_EQ(f.field[2], "c");
  EXPECT_EQ(kv::first_fields<3>("").total, 0u);
  EXPECT_EQ(kv::first_fields<3>(" \t ").total, 0u);
}

TEST(TextFields, ForEachFieldSeesWhatSplitFieldsReturns) {
  for (std::string_view line : {"  a\tbb  c d e ", "", " \t ", "one", "some avg10=1 total=5"}) {
    std::vector<std::string_view> seen;
    const size_t n = kv::for_each_field(line, [&](size_t i, std::string_view f) {
      EXPECT_EQ(i, seen.size());
      seen.push_back(f);
    });
    EXPECT_EQ(seen, kv::split_fields(line)) << line;
    EXPECT_EQ(n, seen.size());
  }
}

TEST(PidStatus, ParsesMemoryThreadsAndContextSwitches) {
  PidStatus s = parse_pid_status(fixture("proc/100/status"));
  EXPECT_EQ(s.name, "redis-server");
  EXPECT_EQ(s.ppid, 1);
  EXPECT_EQ(s.vm_rss_kib, 8192);
  EXPECT_EQ(s.rss_anon_kib, 5120);
  EXPECT_EQ(s.rss_file_kib, 3008);
  EXPECT_EQ(s.rss_shmem_kib, 64);
  EXPECT_EQ(s.vm_swap_kib, 256);
  EXPECT_EQ(s.vm_size_kib, 71720);
  EXPECT_EQ(s.threads, 5);
  EXPECT_EQ(s.ctx_voluntary, 4321);
  EXPECT_EQ(s.ctx_involuntary, 17);
}

TEST(PidStatus, AbsentOrBrokenLinesAreNullNotZero) {
  PidStatus kernel_thread = parse_pid_status(fixture("proc/200/status"));
  EXPECT_EQ(kernel_thread.name, "my (odd) name");
  EXPECT_FALSE(kernel_thread.vm_rss_kib.has_value());
  EXPECT_FALSE(kernel_thread.vm_swap_kib.has_value());

  PidStatus truncated = parse_pid_status(fixture("malformed/status_truncated"));
  EXPECT_EQ(truncated.vm_rss_kib, 81);  // the digits that arrived; "kB" is not required
  PidStatus garbage = parse_pid_status(fixture("malformed/status_garbage"));
  EXPECT_FALSE(garbage.vm_rss_kib.has_value());
  EXPECT_FALSE(garbage.vm_swap_kib.has_value());
  EXPECT_FALSE(garbage.threads.has_value());
}

TEST(PidIo, ParsesStorageBytesOnly) {
  PidIo io = parse_pid_io(fixture("proc/100/io"));
  EXPECT_EQ(io.read_bytes, 4096);
  EXPECT_EQ(io.write_bytes, 1048576);
  PidIo empty = parse_pid_io("");
  EXPECT_FALSE(empty.read_bytes.has_value());
  EXPECT_FALSE(empty.write_bytes.has_value());
}

TEST(HostFiles, LoadAvg) {
  auto la = parse_loadavg(fixture("proc/loadavg"));
  ASSERT_TRUE(la.ok());
  EXPECT_DOUBLE_EQ(la.value().load1, 2.11);
  EXPECT_DOUBLE_EQ(la.value().load5, 0.83);
  EXPECT_DOUBLE_EQ(la.value().load15, 0.32);
  EXPECT_FALSE(parse_loadavg(fixture("malformed/loadavg_truncated")).ok());
  EXPECT_FALSE(parse_loadavg("a b c").ok());
  EXPECT_EQ(parse_loadavg_last_pid(fixture("proc/loadavg")), 5661);
  EXPECT_FALSE(parse_loadavg_last_pid(fixture("malformed/loadavg_truncated")).has_value());
  EXPECT_FALSE(parse_loadavg_last_pid("0.1 0.2 0.3 1/95 x\n").has_value());
  EXPECT_EQ(parse_loadavg_last_pid("0.1 0.2 0.3 1/95 77"), 77);  // no newline
  EXPECT_FALSE(parse_loadavg_last_pid("0.1 0.2 0.3 1/95 77 8\n").has_value());
}

TEST(HostFiles, MemInfoVmStatAndStat) {
  MemInfo m = parse_meminfo(fixture("proc/meminfo"));
  EXPECT_EQ(m.mem_total_kib, 24683652);
  EXPECT_EQ(m.mem_available_kib, 24185408);
  EXPECT_EQ(m.swap_total_kib, 2097148);
  EXPECT_EQ(m.swap_free_kib, 1048576);
  EXPECT_FALSE(parse_meminfo("MemTotal: 5 kB\n").swap_total_kib.has_value());

  VmStat v = parse_vmstat(fixture("proc/vmstat"));
  EXPECT_EQ(v.pswpin, 12);
  EXPECT_EQ(v.pswpout, 340);
  EXPECT_EQ(v.pgmajfault, 1372);

  HostStat h = parse_host_stat(fixture("proc/stat"));
  EXPECT_EQ(h.cpu_user_ticks, 12594 + 6);  // user + nice
  EXPECT_EQ(h.cpu_system_ticks, 6179);
  EXPECT_EQ(h.cpu_idle_ticks, 157683);
  EXPECT_EQ(h.cpu_iowait_ticks, 539);
  EXPECT_EQ(h.cpu_steal_ticks, 11);
  EXPECT_EQ(h.boot_time_s, 1796070568);
  HostStat old_kernel = parse_host_stat("cpu 1 2 3 4\n");
  EXPECT_EQ(old_kernel.cpu_idle_ticks, 4);
  EXPECT_FALSE(old_kernel.cpu_steal_ticks.has_value());
}

TEST(PidSmapsRollup, Pss) {
  EXPECT_EQ(parse_smaps_rollup_pss(fixture("proc/100/smaps_rollup")), 6100);
  EXPECT_FALSE(parse_smaps_rollup_pss("Rss: 5 kB\nPss_Anon: 3 kB\n").has_value());
}

TEST(HostFiles, Uptime) {
  auto up = parse_uptime_us(fixture("proc/uptime"));
  ASSERT_TRUE(up.ok());
  EXPECT_EQ(up.value(), 5'000'250'000);
  EXPECT_FALSE(parse_uptime_us("").ok());
  EXPECT_FALSE(parse_uptime_us("abc 1.0").ok());
  // Out of int64 microseconds (the fuzzer's input; the cast was undefined), inf and NaN.
  EXPECT_FALSE(parse_uptime_us("7.8e39 1.0").ok());
  EXPECT_FALSE(parse_uptime_us("inf 1.0").ok());
  EXPECT_FALSE(parse_uptime_us("nan 1.0").ok());
  EXPECT_EQ(parse_uptime_us("9100000000000 1.0").value(), 9'100'000'000'000'000'000);
}

TEST(HostFiles, OverflowingCountersAreNull) {
  // user + nice beyond int64: NULL, not a wrapped negative number.
  HostStat h = parse_host_stat("cpu 9223372036854775807 1 3 4\n");
  EXPECT_FALSE(h.cpu_user_ticks.has_value());
  EXPECT_EQ(h.cpu_system_ticks, 3);
  EXPECT_EQ(ticks_to_us(250, 100), 2'500'000);
  EXPECT_FALSE(ticks_to_us(int64_t{1} << 60, 100).has_value());
  EXPECT_FALSE(ticks_to_us(1, 0).has_value());
}

TEST(HostFiles, Pressure) {
  Pressure p = parse_pressure(fixture("proc/pressure/memory"));
  EXPECT_DOUBLE_EQ(*p.some_avg10, 37.33);
  EXPECT_DOUBLE_EQ(*p.full_avg10, 1.5);
  EXPECT_EQ(p.some_total_us, 46034936);  // the stall time since boot, a counter
  EXPECT_EQ(p.full_total_us, 0);         // read, and none: a known 0
  Pressure g = parse_pressure(fixture("malformed/pressure_garbage"));
  EXPECT_FALSE(g.some_avg10.has_value());
  EXPECT_FALSE(g.full_avg10.has_value());
  EXPECT_FALSE(g.some_total_us.has_value());
  EXPECT_FALSE(g.full_total_us.has_value());
  // A total that is not a number is unknown, the average beside it still read.
  Pressure t = parse_pressure("some avg10=2.00 avg60=1.00 avg300=0.50 total=12x\n");
  EXPECT_DOUBLE_EQ(*t.some_avg10, 2.0);
  EXPECT_FALSE(t.some_total_us.has_value());
}

TEST(HostFiles, DiskStats) {
  auto disks = parse_diskstats(fixture("proc/diskstats"));
  ASSERT_EQ(disks.size(), 4u);
  EXPECT_EQ(disks[1].device, "vda");
  EXPECT_EQ(disks[1].reads, 70824);
  EXPECT_EQ(disks[1].sectors_read, 3665138);
  EXPECT_EQ(disks[1].writes, 23710);
  EXPECT_EQ(disks[1].sectors_written, 2235416);
  EXPECT_EQ(disks[1].io_ms, 8776);
  EXPECT_EQ(disks[3].device, "zram0");  // an old-format line of 11 counters
  EXPECT_TRUE(parse_diskstats(fixture("malformed/diskstats_short")).empty());
}

TEST(NetTcp, ParsesListenersOfBothFamilies) {
  auto v4 = parse_net_tcp(fixture("proc/net/tcp"));
  ASSERT_EQ(v4.size(), 2u);  // header and garbage skipped
  EXPECT_EQ(v4[0].local_port, 6379);
  EXPECT_EQ(v4[0].state, kTcpListen);
  EXPECT_EQ(v4[0].inode, 25738);
  EXPECT_EQ(v4[1].state, 0x01);
  auto v6 = parse_net_tcp(fixture("proc/net/tcp6"));
  ASSERT_EQ(v6.size(), 1u);
  EXPECT_EQ(v6[0].local_port, 6379);
  EXPECT_EQ(v6[0].inode, 25739);
}

// A state or port field that is not wholly hex, or out of range, skips its line (a case that
// tests/fuzz/proc_parsers_fuzz reaches): read in part, or as it stands, it would give an
// impossible value (state 0xA000, port 0x118EB).
TEST(ParseNetTcp, SkipsLinesWithOutOfRangeOrPartialFields) {
  const std::string good =
      "   0: 0100007F:18EB 00000000:0000 0A 00000000:00000000 00:00000000 "
      "00000000     0        0 25738 1 0 100 0 0 10 0\n";
  ASSERT_EQ(parse_net_tcp(good).size(), 1u);
  EXPECT_TRUE(parse_net_tcp("   0: 0100007F:18EB 00000000:0000 00A000 00000000:00000000 "
                            "00:00000000 00000000     0        0 25738 1\n")
                  .empty());
  EXPECT_TRUE(parse_net_tcp("   0: 0100007F:118EB 00000000:0000 0A 00000000:00000000 "
                            "00:00000000 00000000     0        0 25738 1\n")
                  .empty());
  EXPECT_TRUE(parse_net_tcp("   0: 0100007F:18EBzz 00000000:0000 0A 00000000:00000000 "
                            "00:00000000 00000000     0        0 25738 1\n")
                  .empty());
}

// Found by tests/fuzz/proc_parsers_fuzz (ASan: SEGV): a line of 13 fields made the parser read
// a 14th one past the end of its field vector.
TEST(ParseDiskstats, SkipsALineOneCounterShort) {
  EXPECT_EQ(parse_diskstats("   7    0 loop0 1 2 3 4 5 6 7 8 9 10 11\n").size(), 1u);
  EXPECT_TRUE(parse_diskstats("   7    0 loop0 1 2 3 4 5 6 7 8 9 10\n").empty());
}

TEST(ParseBlockStat, ReadsTheCountersOfOldAndNewKernels) {
  // Linux >= 5.5: 17 fields (discard and flush counters at the end).
  auto d = parse_block_stat(
      "   70824    23799  3665138    18354    23710    17350  2235416     "
      "6295        0     8776    25142     4676       59  1142640      455 "
      "    1037       36\n");
  ASSERT_TRUE(d.has_value());
  EXPECT_TRUE(d->device.empty());
  EXPECT_EQ(d->reads, 70824);
  EXPECT_EQ(d->sectors_read, 3665138);
  EXPECT_EQ(d->writes, 23710);
  EXPECT_EQ(d->sectors_written, 2235416);
  EXPECT_EQ(d->io_ms, 8776);
  // Before 4.18: 11 fields.
  auto old = parse_block_stat("5 0 40 0 1 0 8 0 0 3 0");
  ASSERT_TRUE(old.has_value());
  EXPECT_EQ(old->reads, 5);
  EXPECT_EQ(old->writes, 1);
  EXPECT_EQ(old->io_ms, 3);
  EXPECT_FALSE(parse_block_stat("5 0 40 0 1 0 8 0 0 3\n").has_value());  // one short
  EXPECT_FALSE(parse_block_stat("5 0 40 0 x 0 8 0 0 3 0\n").has_value());
  EXPECT_FALSE(parse_block_stat("").has_value());
  // Only the first line counts.
  EXPECT_FALSE(parse_block_stat("5 0 40 0 1\n0 8 0 0 3 0\n").has_value());
}

TEST(ParseInt, RejectsPartialNumbers) {
  EXPECT_EQ(parse_int("42"), 42);
  EXPECT_EQ(parse_int("-3"), -3);
  EXPECT_FALSE(parse_int("").has_value());
  EXPECT_FALSE(parse_int("4x").has_value());
  EXPECT_FALSE(parse_int("99999999999999999999").has_value());
}

}  // namespace
}  // namespace kv::mon
