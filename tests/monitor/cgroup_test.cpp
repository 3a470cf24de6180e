// Unit tests of the cgroup parsers, the sampler and its event logic against fixture trees
// (tests/monitor/fixtures/cgroup/{v1,v2}: /proc/self/mountinfo, /proc/300/cgroup and the cgroup
// files under sys/fs/cgroup). The inotify path is exercised for real on a copy of the fixture
// (inotify on a regular file); the kernel's own cgroup notification is not (see
// cgroup_kernel_test).
#include "cgroup.hpp"

#include <gtest/gtest.h>
#include <poll.h>

#include <filesystem>
#include <fstream>
#include <iostream>

#include "kvbench/clock.hpp"
#include "psi_trigger.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

namespace fs = std::filesystem;

const std::string kFixtures = std::string(KV_SOURCE_DIR) + "/tests/monitor/fixtures/cgroup";
const ProcessKey kKey{300, 1};

TEST(CgroupParsers, ProcCgroupBothFormats) {
  ProcCgroup pc = parse_proc_cgroup(
      "12:memory:/kvtest\n4:cpu,cpuacct:/a/b\n9:name=systemd:/init.scope\n0::/system.slice/x\n");
  EXPECT_EQ(pc.v2, "/system.slice/x");
  EXPECT_EQ(pc.v1.at("memory"), "/kvtest");
  EXPECT_EQ(pc.v1.at("cpu"), "/a/b");
  EXPECT_EQ(pc.v1.at("cpuacct"), "/a/b");
  EXPECT_EQ(pc.v1.at("name=systemd"), "/init.scope");
  ProcCgroup only_v2 = parse_proc_cgroup("0::/\n");
  EXPECT_EQ(only_v2.v2, "/");
  EXPECT_TRUE(only_v2.v1.empty());
  EXPECT_FALSE(parse_proc_cgroup("garbage\n").v2);
}

TEST(CgroupParsers, MountsAndDirectories) {
  CgroupMounts m = parse_cgroup_mounts(
      "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
      "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
      "35 31 0:32 /docker/abc /sys/fs/cgroup/memory rw shared:1 - cgroup cgroup rw,memory\n"
      "41 31 0:38 / /tmp/my\\040cg rw,relatime - cgroup2 cgroup2 rw\n"
      "42 31 0:39 / /other rw,relatime - cgroup2 cgroup2 rw\n");
  ASSERT_TRUE(m.v2);
  EXPECT_EQ(m.v2->mount_point, "/tmp/my cg");  // the first cgroup2 mount, unescaped
  EXPECT_EQ(m.v1.at("cpu").mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_EQ(m.v1.at("cpuacct").mount_point, "/sys/fs/cgroup/cpu,cpuacct");
  EXPECT_FALSE(m.v1.count("rw"));
  EXPECT_FALSE(m.v1.count("mode=755"));
  const CgroupMount& mem = m.v1.at("memory");
  EXPECT_EQ(mem.root, "/docker/abc");
  // a mount of a sub-cgroup (a container) shows only what is under its root
  EXPECT_EQ(cgroup_dir(mem, "/docker/abc/x"), "/sys/fs/cgroup/memory/x");
  EXPECT_EQ(cgroup_dir(mem, "/docker/abc"), "/sys/fs/cgroup/memory");
  EXPECT_FALSE(cgroup_dir(mem, "/docker/abcd"));
  EXPECT_FALSE(cgroup_dir(mem, "/other"));
  EXPECT_EQ(cgroup_dir(*m.v2, "/"), "/tmp/my cg");
}

TEST(CgroupParsers, LimitsKeyedFilesAndIoStat) {
  EXPECT_EQ(parse_cgroup_limit("max\n"), kNoCgroupLimit);
  EXPECT_EQ(parse_cgroup_limit("9223372036854771712\n"), kNoCgroupLimit);  // v1 unlimited
  EXPECT_EQ(parse_cgroup_limit("33554432\n"), 33554432);
  EXPECT_FALSE(parse_cgroup_limit(""));
  EXPECT_FALSE(parse_cgroup_limit("lots"));
  const char* ev = "low 0\nhigh 2\nmax 3\noom 4\noom_kill 5\noom_group_kill 6\n";
  EXPECT_EQ(keyed_value(ev, "oom"), 4);  // not oom_kill's or oom_group_kill's
  EXPECT_EQ(keyed_value(ev, "oom_kill"), 5);
  EXPECT_EQ(keyed_value(ev, "max"), 3);
  EXPECT_FALSE(keyed_value(ev, "kill"));
  EXPECT_FALSE(keyed_value(ev, "fail"));
  IoStat io =
      parse_io_stat("8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0\n9:0 rbytes=10 wios=40\n");
  EXPECT_EQ(io.read_bytes, 11);
  EXPECT_EQ(io.write_bytes, 2);
  EXPECT_EQ(io.reads, 3);
  EXPECT_EQ(io.writes, 44);
  IoStat none = parse_io_stat("");  // readable, no I/O yet: zeros
  EXPECT_EQ(none.read_bytes, 0);
}

TEST(CgroupEvents, ACounterThatGrewIsOneEventAndTheFirstReadingIsTheBaseline) {
  CgroupCounters a{2, 0, 0, 0, 0, 0, std::nullopt, std::nullopt};
  CgroupCounters b{5, 1, 1, 1, 0, 2, std::nullopt, std::nullopt};
  auto ev = cgroup_events(a, b, "redis", true);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].kind, "cgroup_high");
  EXPECT_EQ(ev[0].message.substr(0, 30), "redis: memory.events high 2 ->");
  EXPECT_EQ(ev[1].kind, "cgroup_max");
  EXPECT_EQ(ev[2].kind, "cgroup_oom");
  EXPECT_EQ(ev[3].kind, "cgroup_oom_kill");
  EXPECT_EQ(ev[4].kind, "cgroup_swap_fail");
  EXPECT_TRUE(cgroup_events(b, b, "redis", true).empty());
  EXPECT_TRUE(cgroup_events(CgroupCounters{}, b, "redis", true).empty());  // baseline
  CgroupCounters v1a{{}, {}, {}, 0, {}, {}, 0, 5};
  CgroupCounters v1b{{}, {}, {}, 1, {}, {}, 1, 9};
  auto v1 = cgroup_events(v1a, v1b, "redis", false);
  ASSERT_EQ(v1.size(), 3u);
  EXPECT_EQ(v1[0].kind, "cgroup_failcnt");
  EXPECT_EQ(v1[0].message.substr(0, 29), "redis: memory.failcnt 5 -> 9 ");
  EXPECT_EQ(v1[1].kind, "cgroup_oom_kill");
  EXPECT_EQ(v1[2].kind, "cgroup_under_oom");
}

TEST(CgroupSampler, ReadsEveryV2FileOfTheFixture) {
  ProcFs procfs(kFixtures + "/v2/proc", kFixtures + "/v2/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "cgroup_found");
  const std::string dir = kFixtures + "/v2/sys/fs/cgroup/system.slice/redis-server.service";
  EXPECT_EQ(cg.describe(kKey), "v2 " + dir);
  EXPECT_EQ(s.cg_memory_bytes, 268435456);
  EXPECT_EQ(s.cg_memory_max_bytes, 536870912);
  EXPECT_EQ(s.cg_memory_high_bytes, 402653184);
  EXPECT_EQ(s.cg_swap_bytes, 1048576);
  EXPECT_EQ(s.cg_swap_max_bytes, kNoCgroupLimit);
  EXPECT_FALSE(s.cg_memsw_bytes);  // v1 only
  EXPECT_FALSE(s.cg_memsw_max_bytes);
  EXPECT_EQ(s.cg_anon_bytes, 201326592);
  EXPECT_EQ(s.cg_file_bytes, 50331648);
  EXPECT_EQ(s.cg_kernel_bytes, 8388608);
  EXPECT_EQ(s.cg_shmem_bytes, 4096);
  EXPECT_EQ(s.cg_pgmajfault, 7);
  EXPECT_EQ(s.cg_workingset_refault_anon, 11);
  EXPECT_EQ(s.cg_workingset_refault_file, 22);
  EXPECT_EQ(s.cg_pgscan, 3000);
  EXPECT_EQ(s.cg_pgsteal, 2500);
  EXPECT_EQ(s.cg_events_high, 2);
  EXPECT_EQ(s.cg_events_max, 0);
  EXPECT_EQ(s.cg_events_oom_kill, 0);
  EXPECT_EQ(s.cg_swap_events_fail, 0);
  EXPECT_FALSE(s.cg_under_oom);  // v1 only
  EXPECT_FALSE(s.cg_failcnt);
  EXPECT_EQ(s.cg_cpu_usage_us, 5000000);
  EXPECT_EQ(s.cg_cpu_nr_periods, 100);
  EXPECT_EQ(s.cg_cpu_nr_throttled, 7);
  EXPECT_EQ(s.cg_cpu_throttled_us, 420000);
  EXPECT_EQ(s.cg_cpu_quota_us, 50000);  // cpu.max "50000 100000": half a core
  EXPECT_EQ(s.cg_cpu_period_us, 100000);
  EXPECT_EQ(s.cg_io_read_bytes, 5096);
  EXPECT_EQ(s.cg_io_write_bytes, 10192);
  EXPECT_EQ(s.cg_io_reads, 4);
  EXPECT_EQ(s.cg_io_writes, 6);
  EXPECT_EQ(s.cg_psi_memory_some_avg10, 1.5);
  EXPECT_EQ(s.cg_psi_memory_full_avg10, 0.75);
  EXPECT_EQ(s.cg_psi_io_some_avg10, 0.1);
  EXPECT_EQ(s.cg_psi_io_full_avg10, 0.05);
  EXPECT_EQ(s.cg_psi_cpu_some_avg10, 2.25);
  EXPECT_EQ(s.cg_psi_memory_some_us, 123456);  // total=: stall µs since the cgroup was made
  EXPECT_EQ(s.cg_psi_memory_full_us, 65432);
  EXPECT_EQ(s.cg_psi_io_some_us, 10);
  EXPECT_EQ(s.cg_psi_io_full_us, 5);
  EXPECT_EQ(s.cg_psi_cpu_some_us, 1000);
  // the second tick: nothing changed, no event
  ProcessSample s2;
  events.clear();
  cg.sample(kKey, "redis", s2, events);
  EXPECT_TRUE(events.empty());
}

TEST(CgroupSampler, ReadsEveryV1FileOfTheFixtureAndPressureFromTheV2BesideIt) {
  ProcFs procfs(kFixtures + "/v1/proc", kFixtures + "/v1/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  const std::string root = kFixtures + "/v1/sys/fs/cgroup";
  EXPECT_EQ(cg.describe(kKey), "v2 " + root + "/unified, v1 memory " + root +
                                   "/memory/kvtest, v1 cpu " + root + "/cpu,cpuacct/kvtest, " +
                                   "v1 cpuacct " + root + "/cpu,cpuacct/kvtest");
  EXPECT_EQ(s.cg_memory_bytes, 33550336);
  EXPECT_EQ(s.cg_memory_max_bytes, 33554432);
  EXPECT_FALSE(s.cg_memory_high_bytes);  // v2 only
  EXPECT_FALSE(s.cg_swap_bytes);
  EXPECT_EQ(s.cg_memsw_bytes, 33554432);
  EXPECT_EQ(s.cg_memsw_max_bytes, kNoCgroupLimit);
  EXPECT_EQ(s.cg_kernel_bytes, 1234944);
  EXPECT_EQ(s.cg_anon_bytes, 30000000);  // the hierarchical total_ values
  EXPECT_EQ(s.cg_file_bytes, 2000000);
  EXPECT_EQ(s.cg_shmem_bytes, 8192);
  EXPECT_EQ(s.cg_pgmajfault, 9);
  EXPECT_EQ(s.cg_workingset_refault_anon, 3);
  EXPECT_EQ(s.cg_workingset_refault_file, 4);
  EXPECT_FALSE(s.cg_pgscan);
  EXPECT_EQ(s.cg_failcnt, 5);
  EXPECT_EQ(s.cg_under_oom, 0);
  EXPECT_EQ(s.cg_events_oom_kill, 0);
  EXPECT_FALSE(s.cg_events_high);
  // cpu from the v1 hierarchy, not the v2 root's cpu.stat beside it
  EXPECT_EQ(s.cg_cpu_usage_us, 7000000);
  EXPECT_EQ(s.cg_cpu_nr_throttled, 5);
  EXPECT_EQ(s.cg_cpu_throttled_us, 2500);
  EXPECT_EQ(s.cg_cpu_quota_us, kNoCgroupLimit);  // cpu.cfs_quota_us -1: none
  EXPECT_EQ(s.cg_cpu_period_us, 100000);
  EXPECT_FALSE(s.cg_io_read_bytes);  // no io.stat at the v2 root
  EXPECT_EQ(s.cg_psi_memory_some_avg10, 3.0);
  EXPECT_FALSE(s.cg_psi_io_some_avg10);
}

// A writable copy of one fixture tree.
struct Copy {
  kv::test::TempDir dir;
  explicit Copy(const char* which) {
    fs::copy(kFixtures + "/" + which, dir.path(), fs::copy_options::recursive);
  }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(dir.path() + "/" + rel) << text;
  }
};

TEST(CgroupSampler, V1CountersPolledEachTickAndAnOomKillIsTheExitCause) {
  Copy c("v1");
  ProcFs procfs(c.dir.path() + "/proc", c.dir.path() + "/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  events.clear();
  c.write("sys/fs/cgroup/memory/kvtest/memory.failcnt", "12\n");
  cg.sample(kKey, "redis", s, events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "cgroup_failcnt");
  EXPECT_EQ(events[0].instance, kKey);
  EXPECT_EQ(s.cg_failcnt, 12);
  events.clear();
  c.write("sys/fs/cgroup/memory/kvtest/memory.oom_control",
          "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n");
  std::string cause = cg.exit_cause(kKey, events);
  EXPECT_EQ(cause.substr(0, 26), "killed by the OOM killer (");
  EXPECT_NE(cause.find("oom_kill 0 -> 1"), std::string::npos) << cause;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "cgroup_oom_kill");
  EXPECT_TRUE(cg.describe(kKey).empty());  // forgotten
}

TEST(CgroupSampler, AMoveIsFollowedWhenTwoTicksAgreeNotOnOneDuringAnExit) {
  Copy c("v1");
  ProcFs procfs(c.dir.path() + "/proc", c.dir.path() + "/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  const std::string before = cg.describe(kKey);
  c.write("proc/300/cgroup", "4:memory:/\n1:cpu,cpuacct:/\n0::/\n");  // as while it exits
  events.clear();
  cg.sample(kKey, "redis", s, events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(cg.describe(kKey), before);
  EXPECT_EQ(s.cg_memory_max_bytes, 33554432);  // still the cgroup it lived in
  cg.sample(kKey, "redis", s, events);         // the second tick that agrees: moved
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "cgroup_found");
  EXPECT_NE(events[0].message.find("moved to cgroup"), std::string::npos) << events[0].message;
  EXPECT_NE(cg.describe(kKey), before);
}

TEST(CgroupSampler, TheCgroupFileAndPressureAreReadAtTheirCadenceTheRestEverySample) {
  Copy c("v1");
  ProcFs procfs(c.dir.path() + "/proc", c.dir.path() + "/sys");
  CgroupSampler cg(procfs, CgroupCadence{3, 2});
  std::vector<EventRecord> events;
  ProcessSample s0;
  cg.sample(kKey, "redis", s0, events);  // sample 0: everything
  EXPECT_EQ(s0.cg_psi_memory_some_avg10, 3.0);
  const std::string before = cg.describe(kKey);
  events.clear();
  c.write("sys/fs/cgroup/unified/memory.pressure",
          "some avg10=7.00 avg60=0.00 avg300=0.00 total=90\n"
          "full avg10=2.00 avg60=0.00 avg300=0.00 total=40\n");
  c.write("sys/fs/cgroup/memory/kvtest/memory.usage_in_bytes", "1234\n");
  c.write("proc/300/cgroup", "4:memory:/\n1:cpu,cpuacct:/\n0::/\n");  // moved to the root
  ProcessSample s1;
  cg.sample(kKey, "redis", s1, events);  // 1: pressure repeated, usage read
  EXPECT_EQ(s1.cg_psi_memory_some_avg10, 3.0);
  EXPECT_EQ(s1.cg_psi_memory_full_avg10, 1.0);
  EXPECT_EQ(s1.cg_memory_bytes, 1234);
  ProcessSample s2;
  cg.sample(kKey, "redis", s2, events);  // 2: pressure read again
  EXPECT_EQ(s2.cg_psi_memory_some_avg10, 7.0);
  EXPECT_EQ(s2.cg_psi_memory_full_avg10, 2.0);
  ProcessSample s3;
  cg.sample(kKey, "redis", s3, events);  // 3: /proc/PID/cgroup read: a move, not yet agreed
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(cg.describe(kKey), before);
  ProcessSample s4;
  cg.sample(kKey, "redis", s4, events);  // 4: read again at once (a move waits), agrees
  ASSERT_EQ(events.size(), 1u);
  EXPECT_NE(events[0].message.find("moved to cgroup"), std::string::npos) << events[0].message;
  EXPECT_NE(cg.describe(kKey), before);
}

TEST(CgroupSampler, CadenceForAnIntervalIsFiveAndTwoSecondsInTicks) {
  EXPECT_EQ(cadence_for_interval(1'000'000).recheck_every, 5);
  EXPECT_EQ(cadence_for_interval(1'000'000).pressure_every, 2);
  EXPECT_EQ(cadence_for_interval(100'000).recheck_every, 50);
  EXPECT_EQ(cadence_for_interval(100'000).pressure_every, 20);
  EXPECT_EQ(cadence_for_interval(10'000'000).recheck_every, 1);  // at least every tick
  EXPECT_EQ(cadence_for_interval(10'000'000).pressure_every, 1);
}

TEST(CgroupSampler, AnExitWithoutAnOomKillHasNoCause) {
  ProcFs procfs(kFixtures + "/v1/proc", kFixtures + "/v1/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  EXPECT_EQ(cg.exit_cause(kKey, events), "");
}

TEST(CgroupSampler, V2MemoryEventsAreSeenThroughInotifyBetweenTicks) {
  std::cout << "[ kernel  ] exercised for real: inotify IN_MODIFY on a regular file (a copy of "
               "the v2 fixture); not exercised: the kernel's cgroup_file_notify on memory.events "
               "(no memory controller in cgroup v2 on this machine)\n";
  Copy c("v2");
  ProcFs procfs(c.dir.path() + "/proc", c.dir.path() + "/sys");
  CgroupSampler cg(procfs);
  ASSERT_GE(cg.notify_fd(), 0);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  events.clear();
  const std::string dir = "sys/fs/cgroup/system.slice/redis-server.service/";
  c.write(dir + "memory.events", "low 0\nhigh 3\nmax 1\noom 1\noom_kill 1\noom_group_kill 0\n");
  const int64_t written = now_ts_us();
  pollfd p{cg.notify_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);
  cg.on_notify(events);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].kind, "cgroup_high");
  EXPECT_EQ(events[3].kind, "cgroup_oom_kill");
  EXPECT_GE(events[0].ts_us, written - 1000);
  c.write(dir + "memory.swap.events", "high 0\nmax 2\nfail 0\n");
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);
  events.clear();
  cg.on_notify(events);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, "cgroup_swap_max");
  // the tick after has nothing new to say (the baseline moved with the notification)
  events.clear();
  cg.sample(kKey, "redis", s, events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(s.cg_events_oom_kill, 1);
}

TEST(CgroupSampler, AnOomKillNotifiedAfterTheLastTickIsStillTheExitCause) {
  Copy c("v2");
  ProcFs procfs(c.dir.path() + "/proc", c.dir.path() + "/sys");
  CgroupSampler cg(procfs);
  ProcessSample s;
  std::vector<EventRecord> events;
  cg.sample(kKey, "redis", s, events);
  c.write("sys/fs/cgroup/system.slice/redis-server.service/memory.events",
          "low 0\nhigh 2\nmax 1\noom 1\noom_kill 1\noom_group_kill 0\n");
  pollfd p{cg.notify_fd(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10'000), 1);
  cg.on_notify(events);
  EXPECT_NE(cg.exit_cause(kKey, events).find("killed by the OOM killer"), std::string::npos);
}

}  // namespace
}  // namespace kv::mon

namespace kv::mon {
namespace {

TEST(PsiTriggerSpec, ParsedWithTheKernelsBoundsAndRefusedWithAReason) {
  PsiTriggerSpec s = parse_psi_trigger("memory:some:150ms/1s");
  EXPECT_EQ(s.resource, "memory");
  EXPECT_EQ(s.kind, "some");
  EXPECT_EQ(s.stall_us, 150'000);
  EXPECT_EQ(s.window_us, 1'000'000);
  EXPECT_EQ(parse_psi_trigger("io:full:50ms/2s").window_us, 2'000'000);
  EXPECT_FALSE(s.cgroup);
  // On each target's cgroup: the same spec, and a cgroup's cpu has a full stall.
  PsiTriggerSpec c = parse_psi_trigger("cgroup:cpu:full:200ms/2s");
  EXPECT_TRUE(c.cgroup);
  EXPECT_EQ(c.resource, "cpu");
  EXPECT_EQ(c.kind, "full");
  EXPECT_EQ(c.stall_us, 200'000);
  auto refused = [](const char* text) {
    try {
      parse_psi_trigger(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refused("memory:some:150ms").find("RESOURCE:KIND:STALL/WINDOW"), std::string::npos);
  EXPECT_NE(refused("disk:some:1ms/1s").find("memory, io or cpu"), std::string::npos);
  EXPECT_NE(refused("cpu:full:10ms/1s").find("no cpu full"), std::string::npos);
  EXPECT_NE(refused("cpu:half:10ms/1s").find("some or full"), std::string::npos);
  EXPECT_NE(refused("cpu:some:10ms/100ms").find("500ms to 10s"), std::string::npos);
  EXPECT_NE(refused("cpu:some:2s/1s").find("below the window"), std::string::npos);
  EXPECT_NE(refused("cpu:some:x/1s").find("--psi-trigger 'cpu:some:x/1s'"), std::string::npos);
  EXPECT_NE(refused("cgroup:disk:some:1ms/1s").find("memory, io or cpu"), std::string::npos);
  EXPECT_NE(refused("cgroup:memory:some:1ms").find("[cgroup:]RESOURCE"), std::string::npos);
}

}  // namespace
}  // namespace kv::mon
