// Unit tests of the samplers (process, host, disks) and the batch writer's skipped ticks against
// fixture /proc trees and this machine's (target resolution and the tracker: tracker_test.cpp).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include "batch_writer.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "samplers.hpp"
#include "sampling_fixture.hpp"
#include "servers.hpp"
#include "targets.hpp"

namespace kv::mon {
namespace {

TEST(ProcessSampler, ReadsEveryColumnOfTheFixture) {
  ProcFs procfs = fixture_fs();
  ProcessSampler sampler(procfs, 100);
  auto s = sampler.sample(ProcessKey{100, 89713});
  ASSERT_TRUE(s.ok()) << s.error().message;
  const ProcessSample& p = s.value();
  EXPECT_EQ(p.rss_kib, 8192);
  EXPECT_EQ(p.rss_anon_kib, 5120);
  EXPECT_EQ(p.rss_file_kib, 3008);
  EXPECT_EQ(p.rss_shmem_kib, 64);
  EXPECT_EQ(p.swap_kib, 256);
  EXPECT_EQ(p.vsize_kib, 71720);
  EXPECT_EQ(p.cpu_user_us, 12'340'000);  // 1234 ticks at 100 Hz
  EXPECT_EQ(p.cpu_system_us, 5'670'000);
  EXPECT_EQ(p.threads, 5);
  EXPECT_EQ(p.fds, 5);
  EXPECT_EQ(p.io_read_bytes, 4096);
  EXPECT_EQ(p.io_write_bytes, 1048576);
  EXPECT_EQ(p.minor_faults, 2500);
  EXPECT_EQ(p.major_faults, 7);
  EXPECT_EQ(p.ctx_voluntary, 4321);
  EXPECT_EQ(p.ctx_involuntary, 17);
  EXPECT_FALSE(p.pss_kib.has_value());
}

TEST(ProcessSampler, PssIsOptInRareAndSkippedForLargeProcesses) {
  ProcFs procfs = fixture_fs();
  ProcessSampler on(procfs, 100, PssPolicy{3'600'000'000, 1 << 20});
  EXPECT_EQ(on.sample(ProcessKey{100, 89713}).value().pss_kib, 6100);
  EXPECT_FALSE(on.sample(ProcessKey{100, 89713}).value().pss_kib.has_value());  // not due yet
  ProcessSampler too_large(procfs, 100, PssPolicy{1, 8191});                    // RSS is 8192 KiB
  EXPECT_FALSE(too_large.sample(ProcessKey{100, 89713}).value().pss_kib.has_value());
  ProcessSampler every_time(procfs, 100, PssPolicy{1, 8192});
  EXPECT_EQ(every_time.sample(ProcessKey{100, 89713}).value().pss_kib, 6100);
}

TEST(ProcessSampler, UnreadableFilesAreNull) {
  ProcFs procfs = fixture_fs();
  ProcessSampler sampler(procfs, 100);
  auto s = sampler.sample(ProcessKey{200, 12345});  // no io file, no Vm lines
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s.value().io_read_bytes.has_value());
  EXPECT_FALSE(s.value().io_write_bytes.has_value());
  EXPECT_FALSE(s.value().rss_kib.has_value());
  EXPECT_EQ(s.value().fds, 1);
  EXPECT_FALSE(s.value().vsize_kib.has_value());  // status read, no VmSize: a kernel thread's
}

TEST(ProcessSampler, VirtualSizeFromStatOnlyWhenStatusCannotBeRead) {
  FixtureCopy copy;
  fs::remove(copy.proc() + "/200/status");
  ProcFs procfs(copy.proc(), copy.sys());
  ProcessSampler sampler(procfs, 100);
  auto s = sampler.sample(ProcessKey{200, 12345});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.value().vsize_kib, 3133440 / 1024);
  EXPECT_FALSE(s.value().rss_kib.has_value());
}

TEST(ProcessSampler, AKernelThreadsMemoryIsNullOnThisMachine) {
  // kthreadd, pid 2 where the kernel's threads are visible (not in a pid namespace).
  ProcFs procfs;
  auto info = read_process_info(procfs, 2);
  if (!info || info.value().ppid != 0 || info.value().comm != "kthreadd")
    GTEST_SKIP() << "pid 2 is not kthreadd here (a pid namespace)";
  ProcessSampler sampler(procfs, 100);
  auto s = sampler.sample(info.value().key);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s.value().vsize_kib.has_value());
  EXPECT_FALSE(s.value().rss_kib.has_value());
  EXPECT_TRUE(s.value().threads.has_value());
}

TEST(ProcessSampler, PermissionDeniedIoIsNullNotZero) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: chmod cannot deny a read";
  FixtureCopy copy;
  ASSERT_EQ(chmod((copy.proc() + "/100/io").c_str(), 0), 0);
  ProcFs procfs(copy.proc(), copy.sys());
  ProcessSampler sampler(procfs, 100);
  auto s = sampler.sample(ProcessKey{100, 89713});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s.value().io_read_bytes.has_value());
  EXPECT_EQ(s.value().rss_kib, 8192);
}

TEST(ProcessSampler, ReusedOrMissingPidIsGone) {
  ProcFs procfs = fixture_fs();
  ProcessSampler sampler(procfs, 100);
  EXPECT_FALSE(sampler.sample(ProcessKey{100, 1}).ok());  // same pid, other start time
  EXPECT_FALSE(sampler.sample(ProcessKey{999, 1}).ok());
}

TEST(ProcessSampler, ForgetsWhatItKeptOpenForProcessesNoLongerSampled) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  ProcessSampler sampler(procfs, 100, PssPolicy{3'600'000'000, 1 << 20});
  ASSERT_TRUE(sampler.sample(ProcessKey{100, 89713}).ok());
  ASSERT_TRUE(sampler.sample(ProcessKey{200, 12345}).ok());
  EXPECT_EQ(sampler.open_processes(), 2u);
  const std::vector<ProcessKey> kept = {ProcessKey{100, 89713}};
  sampler.retain(kept);  // 200 was not sampled this tick
  EXPECT_EQ(sampler.open_processes(), 1u);
  fs::remove_all(copy.proc() + "/100");  // exits: found gone and forgotten at once
  EXPECT_FALSE(sampler.sample(ProcessKey{100, 89713}).ok());
  EXPECT_EQ(sampler.open_processes(), 0u);
  EXPECT_FALSE(sampler.sample(ProcessKey{999, 1}).ok());
  EXPECT_EQ(sampler.open_processes(), 0u);
}

TEST(BatchWriter, AGapInScheduledTimesIsATicksSkippedEvent) {
  kv::test::TempDir dir;
  const std::string db_path = dir.file("results.db");
  {
    BatchWriter writer(std::make_unique<SqliteSink>(db_path, SessionInfo{"h", 1, 10'000, 1, ""}),
                       100, 1'000'000);
    for (int64_t tick : {0, 1, 2, 6, 7}) {  // ticks 3, 4 and 5 were skipped
      Batch b;
      b.scheduled_ts_us = 1'000'000 + tick * 10'000;
      b.host = HostSample{};
      b.host->ts_us = b.host->scheduled_ts_us = b.scheduled_ts_us;
      writer.push(std::move(b));
    }
    writer.close("completed");
  }
  Database db = Database::open(db_path);
  Statement st =
      db.prepare("SELECT COUNT(*), MIN(message) FROM events WHERE kind = 'ticks_skipped'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 1);
  EXPECT_TRUE(st.column_text(1).starts_with("3 tick(s) skipped")) << st.column_text(1);
  Statement hosts = db.prepare("SELECT COUNT(*) FROM host_samples");
  ASSERT_TRUE(hosts.step());
  EXPECT_EQ(hosts.column_int(0), 5);
}

// A stored batch comes back from fresh() empty, its vectors' capacity kept (no allocation per
// tick); one not stored yet never does.
TEST(BatchWriter, FreshHandsBackAStoredBatchClearedWithItsCapacity) {
  kv::test::TempDir dir;
  const std::string db_path = dir.file("results.db");
  {
    BatchWriter writer(std::make_unique<SqliteSink>(db_path, SessionInfo{"h", 1, 10'000, 1, ""}),
                       100, 10'000);
    Batch first = writer.fresh();
    EXPECT_EQ(first.events.capacity(), 0u);  // nothing stored yet: a new one
    first.scheduled_ts_us = 1'000'000;
    first.host = HostSample{};
    first.host->ts_us = first.host->scheduled_ts_us = first.scheduled_ts_us;
    for (int i = 0; i < 40; ++i)
      first.events.push_back(EventRecord{1'000'000 + i, "test", "event", std::nullopt});
    writer.push(std::move(first));
    Batch again;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      again = writer.fresh();
      if (again.events.capacity() >= 40) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_GE(again.events.capacity(), 40u) << "the stored batch never came back";
    EXPECT_TRUE(again.events.empty());
    EXPECT_FALSE(again.host.has_value());
    EXPECT_EQ(again.scheduled_ts_us, 0);
    writer.close("completed");
  }
  Database db = Database::open(db_path);
  Statement st = db.prepare("SELECT COUNT(*) FROM events WHERE kind = 'test'");
  ASSERT_TRUE(st.step());
  EXPECT_EQ(st.column_int(0), 40);
}

TEST(HostSampler, ReadsHostFilesAndOnlyWholeBusyDisks) {
  ProcFs procfs = fixture_fs();
  HostSampler host(procfs);
  HostSample h = host.sample();
  EXPECT_DOUBLE_EQ(*h.load1, 2.11);
  EXPECT_EQ(h.mem_available_kib, 24185408);
  EXPECT_EQ(h.swap_free_kib, 1048576);
  EXPECT_EQ(h.pswpout, 340);
  EXPECT_EQ(h.cpu_iowait_ticks, 539);
  EXPECT_DOUBLE_EQ(*h.psi_memory_some_avg10, 37.33);
  EXPECT_DOUBLE_EQ(*h.psi_io_full_avg10, 0.16);
  EXPECT_DOUBLE_EQ(*h.psi_cpu_some_avg10, 2.0);
  // loop0: idle virtual disk, skipped; vda1: a partition (no /sys/block/vda1); zram0 has I/O.
  ASSERT_EQ(h.disks.size(), 2u);
  EXPECT_EQ(h.disks[0].device, "vda");
  EXPECT_EQ(h.disks[1].device, "zram0");
  auto boot_ts_us = host.boot_ts_us();  // now - 5000.25 s of uptime
  ASSERT_TRUE(boot_ts_us.has_value());
  EXPECT_NEAR(static_cast<double>(now_ts_us() - *boot_ts_us), 5000.25e6, 1e6);
}

TEST(HostSampler, VmstatReadInPartFindsItsLinesWhenTheyMoveOrGo) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  HostSampler host(procfs);
  EXPECT_EQ(host.sample().pgmajfault, 1372);
  EXPECT_EQ(host.sample().pgmajfault, 1372);  // from the part read last time
  // 4 KiB of new lines before the wanted ones: past the part read last time.
  std::string filler;
  for (int i = 0; filler.size() < 4096; ++i)
    filler += "nr_new_counter_" + std::to_string(i) + " 7\n";
  copy.write("vmstat", filler + "pswpin 13\npswpout 341\npgmajfault 1400\npgfault 1\n");
  HostSample moved = host.sample();
  EXPECT_EQ(moved.pswpin, 13);
  EXPECT_EQ(moved.pswpout, 341);
  EXPECT_EQ(moved.pgmajfault, 1400);
  copy.write("vmstat", "pswpin 14\npgmajfault 1401\n");  // a kernel without pswpout
  HostSample missing = host.sample();
  EXPECT_EQ(missing.pswpin, 14);
  EXPECT_FALSE(missing.pswpout.has_value());
  EXPECT_EQ(missing.pgmajfault, 1401);
}

TEST(HostSampler, PressureIsReadEveryPsiEverySamplesAndRepeatedBetween) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  HostSampler host(procfs, 2);
  HostSample first = host.sample();
  EXPECT_DOUBLE_EQ(first.psi_memory_some_avg10.value_or(-1), 37.33);
  EXPECT_EQ(first.psi_memory_some_us, 46034936);
  copy.write("pressure/memory",
             "some avg10=5.50 avg60=0.00 avg300=0.00 total=46100000\n"
             "full avg10=1.25 avg60=0.00 avg300=0.00 total=70000\n");
  copy.write("meminfo", "MemTotal: 100 kB\nMemAvailable: 42 kB\n");
  HostSample between = host.sample();
  EXPECT_DOUBLE_EQ(between.psi_memory_some_avg10.value_or(-1), 37.33);  // the last reading
  EXPECT_EQ(between.psi_memory_some_us, 46034936);
  EXPECT_EQ(between.mem_available_kib, 42);  // the rest: fresh
  HostSample next = host.sample();
  EXPECT_DOUBLE_EQ(next.psi_memory_some_avg10.value_or(-1), 5.5);
  EXPECT_DOUBLE_EQ(next.psi_memory_full_avg10.value_or(-1), 1.25);
  EXPECT_EQ(next.psi_memory_some_us, 46100000);
  EXPECT_EQ(next.psi_memory_full_us, 70000);
  EXPECT_DOUBLE_EQ(next.psi_cpu_some_avg10.value_or(-1), 2.0);
}

TEST(HostSampler, VmstatMatchesTheWholeFileOnThisMachine) {
  ProcFs procfs;
  HostSampler host(procfs);
  for (int i = 0; i < 3; ++i) {  // the first reads the whole file, the others a part
    VmStat before = parse_vmstat(procfs.read("vmstat").text);
    HostSample h = host.sample();
    VmStat after = parse_vmstat(procfs.read("vmstat").text);
    ASSERT_TRUE(h.pgmajfault.has_value());
    EXPECT_GE(*h.pgmajfault, *before.pgmajfault);
    EXPECT_LE(*h.pgmajfault, *after.pgmajfault);
    ASSERT_EQ(h.pswpin.has_value(), before.pswpin.has_value());
    if (h.pswpin) {
      EXPECT_GE(*h.pswpin, *before.pswpin);
      EXPECT_LE(*h.pswpin, *after.pswpin);
    }
  }
}

// The first sample lists the disks from /proc/diskstats; the next ones read each listed disk's
// /sys/block/<dev>/stat (the fixture's sysfs counters differ from its diskstats on purpose).
TEST(HostSampler, ReadsListedDisksFromSysfsAndListsAgainWhenOneGoes) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  HostSampler host(procfs);
  HostSample first = host.sample();
  ASSERT_EQ(first.disks.size(), 2u);
  EXPECT_EQ(first.disks[0].reads, 70824);  // /proc/diskstats
  HostSample second = host.sample();
  ASSERT_EQ(second.disks.size(), 2u);
  EXPECT_EQ(second.disks[0].device, "vda");
  EXPECT_EQ(second.disks[0].reads, 70900);  // /sys/block/vda/stat
  EXPECT_EQ(second.disks[0].sectors_written, 2235500);
  EXPECT_EQ(second.disks[0].io_ms, 8800);
  EXPECT_EQ(second.disks[1].device, "zram0");
  EXPECT_EQ(second.disks[1].reads, 6);
  // A disk attached meanwhile shows up at the next listing (every 60 samples), not before.
  {
    std::ofstream(copy.proc() + "/diskstats", std::ios::app)
        << "   8       0 sdb 9 0 72 0 0 0 0 0 0 1 0\n";
    fs::create_directories(copy.sys() + "/block/sdb");
    std::ofstream(copy.sys() + "/block/sdb/stat") << "9 0 72 0 0 0 0 0 0 1 0\n";
  }
  int samples = 2;
  while (host.sample().disks.size() == 2u && samples < 100) ++samples;
  EXPECT_EQ(samples, 60);
  // A disk whose file stops reading (detached: sysfs answers ENODEV; here it is emptied, as an
  // unlinked fixture file would still read): listed again at once, from /proc/diskstats.
  std::ofstream(copy.sys() + "/block/zram0/stat", std::ios::trunc).flush();
  std::ofstream(copy.proc() + "/diskstats")
      << " 254       0 vda 70824 23799 3665138 18354 23710 17350 2235416 6295 0 8776 25142\n"
         "   8       0 sdb 9 0 72 0 0 0 0 0 0 1 0\n";
  HostSample after = host.sample();
  ASSERT_EQ(after.disks.size(), 2u);
  EXPECT_EQ(after.disks[0].device, "vda");
  EXPECT_EQ(after.disks[0].reads, 70824);  // listed again: these are diskstats' counters
  EXPECT_EQ(after.disks[1].device, "sdb");
  EXPECT_EQ(host.sample().disks[0].reads, 70900);  // and then sysfs again
}

// On this machine: the disks read from sysfs are the ones /proc/diskstats lists, and their
// counters lie between a diskstats read just before and one just after.
TEST(HostSampler, SysfsDiskCountersMatchDiskstatsOnThisMachine) {
  ProcFs procfs;
  HostSampler host(procfs);
  (void)host.sample();  // the listing
  for (int i = 0; i < 3; ++i) {
    auto before = parse_diskstats(procfs.read("diskstats").text);
    HostSample h = host.sample();
    auto after = parse_diskstats(procfs.read("diskstats").text);
    for (const DiskStat& d : h.disks) {
      auto find = [&](const std::vector<DiskStat>& v) {
        return std::find_if(v.begin(), v.end(),
                            [&](const DiskStat& x) { return x.device == d.device; });
      };
      auto b = find(before), a = find(after);
      ASSERT_NE(b, before.end()) << d.device;
      ASSERT_NE(a, after.end()) << d.device;
      EXPECT_GE(d.reads, b->reads);
      EXPECT_LE(d.reads, a->reads);
      EXPECT_GE(d.sectors_written, b->sectors_written);
      EXPECT_LE(d.sectors_written, a->sectors_written);
      EXPECT_GE(d.io_ms, b->io_ms);
      EXPECT_LE(d.io_ms, a->io_ms);
    }
  }
}

TEST(ProcessSampler, CountsOpenFdsOnThisMachine) {
  ProcFs procfs;
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  int major = 0, minor = 0;
  ASSERT_EQ(std::sscanf(u.release, "%d.%d", &major, &minor), 2);
  // Linux 6.2 reports the number of fds as the size of /proc/PID/fd: no listing needed.
  EXPECT_EQ(procfs.fd_dir_size_is_count(), major > 6 || (major == 6 && minor >= 2)) << u.release;
  auto self = read_process_info(procfs, getpid());
  ASSERT_TRUE(self.ok()) << self.error().message;
  ProcessSampler sampler(procfs, sysconf(_SC_CLK_TCK));
  auto before = sampler.sample(self.value().key);
  ASSERT_TRUE(before.ok() && before.value().fds.has_value());
  int pipes[3][2];
  for (auto& p : pipes) ASSERT_EQ(pipe(p), 0);
  auto after = sampler.sample(self.value().key);
  for (auto& p : pipes) {
    close(p[0]);
    close(p[1]);
  }
  ASSERT_TRUE(after.ok() && after.value().fds.has_value());
  EXPECT_EQ(*after.value().fds - *before.value().fds, 6);
  int64_t listed = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++listed;
  auto now = sampler.sample(self.value().key);
  ASSERT_TRUE(now.ok());
  EXPECT_EQ(now.value().fds, listed - 1);  // the iterator had one more open
}

TEST(HostSampler, MissingPressureIsNull) {
  FixtureCopy copy;
  fs::remove_all(copy.proc() + "/pressure");
  ProcFs procfs(copy.proc(), copy.sys());
  HostSample h = HostSampler(procfs).sample();
  EXPECT_FALSE(h.psi_memory_some_avg10.has_value());
  EXPECT_FALSE(h.psi_cpu_some_avg10.has_value());
  EXPECT_TRUE(h.load1.has_value());
}

}  // namespace
}  // namespace kv::mon
