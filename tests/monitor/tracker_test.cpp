// Unit tests of target resolution (--name, --port, --pid, --pidfile) and the tracker (restarts,
// zombies, fork children, several processes of one name) against fixture /proc trees.
#include "tracker.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "records.hpp"
#include "sampling_fixture.hpp"
#include "servers.hpp"
#include "targets.hpp"

namespace kv::mon {
namespace {

TEST(Targets, NameMatchesCommOrArgv0AndSkipsForkChildren) {
  ProcFs procfs = fixture_fs();
  auto redis = resolve(procfs, make_selector(Selector::Kind::name, "redis-server"));
  ASSERT_EQ(redis.size(), 1u);  // 101 is 100's fork child
  EXPECT_EQ(redis[0].key, (ProcessKey{100, 89713}));
  auto memcached = resolve(procfs, make_selector(Selector::Kind::name, "memcached"));
  ASSERT_EQ(memcached.size(), 1u);  // by argv[0] basename
  EXPECT_EQ(memcached[0].key.pid, 200);
  EXPECT_TRUE(resolve(procfs, make_selector(Selector::Kind::name, "redis")).empty());
}

TEST(Targets, PortFindsTheListenerOwnerForIpv4AndIpv6) {
  ProcFs procfs = fixture_fs();
  auto inodes = listening_inodes(procfs, 6379);
  EXPECT_EQ(inodes, (std::vector<int64_t>{25738, 25739}));
  auto owners = resolve(procfs, make_selector(Selector::Kind::port, "6379"));
  ASSERT_EQ(owners.size(), 1u);  // 101 inherited the socket; its parent owns it
  EXPECT_EQ(owners[0].key.pid, 100);
  EXPECT_TRUE(resolve(procfs, make_selector(Selector::Kind::port, "6380")).empty());
}

TEST(Targets, PidAndPidfile) {
  ProcFs procfs = fixture_fs();
  EXPECT_EQ(resolve(procfs, make_selector(Selector::Kind::pid, "200")).at(0).comm, "my (odd) name");
  EXPECT_TRUE(resolve(procfs, make_selector(Selector::Kind::pid, "300")).empty());
  kv::test::TempDir dir;
  std::ofstream(dir.file("redis.pid")) << "100\n";
  auto found = resolve(procfs, make_selector(Selector::Kind::pidfile, dir.file("redis.pid")));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key.pid, 100);
  EXPECT_TRUE(resolve(procfs, make_selector(Selector::Kind::pidfile, dir.file("none"))).empty());
}

TEST(Targets, BadSelectorsThrow) {
  EXPECT_THROW(make_selector(Selector::Kind::pid, "0"), std::invalid_argument);
  EXPECT_THROW(make_selector(Selector::Kind::pid, "12a"), std::invalid_argument);
  EXPECT_THROW(make_selector(Selector::Kind::port, "70000"), std::invalid_argument);
  EXPECT_THROW(make_selector(Selector::Kind::name, ""), std::invalid_argument);
}

size_t count_kind(const Batch& b, const std::string& kind) {
  size_t n = 0;
  for (const EventRecord& e : b.events) n += e.kind == kind;
  return n;
}

TEST(Tracker, FollowsARestartWithAReusedPidAsANewInstance) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs, {make_selector(Selector::Kind::name, "redis-server")}, 100,
                  1'000'000'000);
  fs::remove_all(copy.proc() + "/100/task");  // no fork children in this test
  Batch first;
  tracker.tick(first);
  ASSERT_EQ(first.new_instances.size(), 1u);
  EXPECT_EQ(first.new_instances[0].selector, "name:redis-server");
  EXPECT_EQ(first.new_instances[0].started_ts_us, 1'000'000'000 + 897'130'000);  // 89713 ticks
  EXPECT_EQ(first.processes.size(), 1u);
  EXPECT_EQ(count_kind(first, "target_found"), 1u);

  // Same pid, new start time: the old process is gone and this is another one.
  std::string stat =
      "100 (redis-server) S 1 100 100 0 -1 0 1 0 0 0 1 1 0 0 20 0 4 0 99999 "
      "73441280 2048 0 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  copy.write("100/stat", stat);
  Batch second;
  tracker.tick(second);
  EXPECT_EQ(count_kind(second, "target_exited"), 1u);
  EXPECT_EQ(count_kind(second, "target_restarted"), 1u);
  ASSERT_EQ(second.new_instances.size(), 1u);
  EXPECT_EQ(second.new_instances[0].key, (ProcessKey{100, 99999}));
  ASSERT_EQ(second.processes.size(), 1u);
  EXPECT_EQ(second.processes[0].key.start_ticks, 99999);
}

TEST(Tracker, AZombieIsOneExitAndNoRestartUntilANewInstanceAppears) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs,
                  {make_selector(Selector::Kind::name, "redis-server"),
                   make_selector(Selector::Kind::pidfile, copy.proc() + "/redis.pid")},
                  100, 1'000'000'000);
  fs::remove_all(copy.proc() + "/100/task");
  fs::remove_all(copy.proc() + "/101");  // its fork child: not part of this test
  std::ofstream(copy.proc() + "/redis.pid") << "100\n";
  Batch first;
  tracker.tick(first);
  EXPECT_EQ(count_kind(first, "target_found"), 2u);
  // Killed, not reaped: /proc/100 stays, its state is Z (and a zombie has no memory lines).
  const std::string zombie =
      "100 (redis-server) Z 1 100 100 0 -1 4194560 2500 0 7 0 1234 567 0 "
      "0 20 0 1 0 89713 0 0 18446744073709551615 0 0 0 0 0 0 0 4097 "
      "17610 0 0 0 17 1 0 0 0 0 0";
  copy.write("100/stat", zombie);
  copy.write("100/status", "Name:\tredis-server\nState:\tZ (zombie)\nPPid:\t1\nThreads:\t1\n");
  size_t exited = 0, restarted = 0;
  for (int i = 0; i < 20; ++i) {
    Batch b;
    tracker.tick(b);
    exited += count_kind(b, "target_exited");
    restarted += count_kind(b, "target_restarted") + count_kind(b, "target_found");
    EXPECT_TRUE(b.processes.empty()) << "tick " << i << ": a zombie was sampled";
  }
  EXPECT_EQ(exited, 2u);  // once per selector
  EXPECT_EQ(restarted, 0u);
  // Reaped, and a new instance under the same pid: one restart per selector.
  std::string stat =
      "100 (redis-server) S 1 100 100 0 -1 0 1 0 0 0 1 1 0 0 20 0 4 0 99999 "
      "73441280 2048 0 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  copy.write("100/stat", stat);
  Batch back;
  tracker.tick(back);
  EXPECT_EQ(count_kind(back, "target_restarted"), 2u);
  EXPECT_EQ(back.processes.size(), 1u);
}

TEST(Tracker, ForkChildrenAreInstancesOfTheirOwnWithTheirParent) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs, {make_selector(Selector::Kind::port, "6379")}, 100, std::nullopt);
  Batch first;
  tracker.tick(first);
  ASSERT_EQ(first.new_instances.size(), 2u);
  const InstanceRecord& child = first.new_instances[1];
  EXPECT_EQ(child.key, (ProcessKey{101, 95000}));
  ASSERT_TRUE(child.parent.has_value());
  EXPECT_EQ(*child.parent, (ProcessKey{100, 89713}));
  EXPECT_EQ(child.selector, "child:port:6379");
  ASSERT_EQ(first.processes.size(), 2u);
  EXPECT_EQ(first.processes[1].rss_kib, 4096);
  EXPECT_EQ(count_kind(first, "child_started"), 1u);

  Batch second;  // still there: sampled, not announced again
  tracker.tick(second);
  EXPECT_TRUE(second.new_instances.empty());
  EXPECT_EQ(second.processes.size(), 2u);

  fs::remove_all(copy.proc() + "/101");
  copy.write("100/task/100/children", "");
  Batch third;
  tracker.tick(third);
  EXPECT_EQ(count_kind(third, "child_exited"), 1u);
  EXPECT_EQ(third.processes.size(), 1u);
  EXPECT_EQ(count_kind(third, "target_exited"), 0u);
}

TEST(Tracker, AChildForkedByAThreadThatTookAnothersPlaceIsFollowed) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs, {make_selector(Selector::Kind::port, "6379")}, 100, std::nullopt);
  Batch first;
  tracker.tick(first);
  ASSERT_EQ(count_kind(first, "child_started"), 1u);  // 101, forked by thread 100

  // Thread 102 exits and 103 starts (the thread count stays the same); 103 forks 104. The
  // children file kvmon holds for 102 still reads, empty, as a gone thread's does on Linux.
  fs::remove_all(copy.proc() + "/100/task/102");
  fs::create_directories(copy.proc() + "/100/task/103");
  copy.write("100/task/103/children", "104 ");
  fs::copy(copy.proc() + "/101", copy.proc() + "/104",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  copy.write("104/stat",
             "104 (redis-server) S 100 100 100 0 -1 4194560 10 0 0 0 3 4 0 0 20 0 1 0 96000 "
             "73441280 1024 18446744073709551615 1 1 0 0 0 0 0 4097 17610 0 0 0 17 1 0 0 0 0 0\n");
  copy.write("loadavg", "2.11 0.83 0.32 1/95 5670\n");  // pids were handed out
  Batch second;
  tracker.tick(second);
  EXPECT_EQ(count_kind(second, "child_started"), 1u);
  ASSERT_EQ(second.new_instances.size(), 1u);
  EXPECT_EQ(second.new_instances[0].key, (ProcessKey{104, 96000}));
  ASSERT_TRUE(second.new_instances[0].parent.has_value());
  EXPECT_EQ(*second.new_instances[0].parent, (ProcessKey{100, 89713}));
  EXPECT_EQ(second.processes.size(), 3u);  // 100, 101 and 104
}

TEST(Tracker, PidTargetIsNotReResolved) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs, {make_selector(Selector::Kind::pid, "200")}, 100, std::nullopt);
  Batch first;
  tracker.tick(first);
  ASSERT_EQ(first.processes.size(), 1u);
  EXPECT_FALSE(first.new_instances.at(0).started_ts_us.has_value());  // no boot time known
  fs::remove_all(copy.proc() + "/200");
  Batch second;
  tracker.tick(second);
  EXPECT_EQ(count_kind(second, "target_exited"), 1u);
  fs::copy(kFixtures + "/proc/200", copy.proc() + "/200",
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  Batch third;
  tracker.tick(third);
  EXPECT_TRUE(third.processes.empty());
  EXPECT_TRUE(third.new_instances.empty());
}

TEST(Tracker, ANameWithSeveralProcessesFindsOneThatRestartsWhileTheOtherRuns) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  fs::remove_all(copy.proc() + "/100/task");  // no fork children in this test
  auto redis_200 = [&](int start_ticks) {
    fs::remove_all(copy.proc() + "/200");
    fs::copy(kFixtures + "/proc/200", copy.proc() + "/200",
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    copy.write("200/status", "Name:\tredis-server\n");
    copy.write("200/stat", "200 (redis-server) S 1 200 200 0 -1 0 1 0 0 0 1 1 0 0 20 0 1 0 " +
                               std::to_string(start_ticks) +
                               " 3133440 415 0 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0");
  };
  redis_200(777);
  Tracker tracker(procfs, {make_selector(Selector::Kind::name, "redis-server")}, 100, std::nullopt);
  Batch first;
  tracker.tick(first);
  EXPECT_EQ(first.new_instances.size(), 2u);
  EXPECT_EQ(count_kind(first, "target_found"), 2u);

  fs::remove_all(copy.proc() + "/200");
  Batch second;
  tracker.tick(second);
  EXPECT_EQ(count_kind(second, "target_exited"), 1u);
  EXPECT_EQ(second.processes.size(), 1u);  // 100 still sampled

  redis_200(888);  // back, while 100 kept running
  Batch third;
  tracker.tick(third);
  EXPECT_EQ(count_kind(third, "target_restarted"), 1u);
  ASSERT_EQ(third.new_instances.size(), 1u);
  EXPECT_EQ(third.new_instances[0].key, (ProcessKey{200, 888}));
  EXPECT_EQ(third.processes.size(), 2u);

  Batch fourth;  // all back: nothing new, both sampled
  tracker.tick(fourth);
  EXPECT_TRUE(fourth.new_instances.empty());
  EXPECT_TRUE(fourth.events.empty());
  EXPECT_EQ(fourth.processes.size(), 2u);
}

TEST(Tracker, WaitsForANameThatIsNotRunningYet) {
  FixtureCopy copy;
  ProcFs procfs(copy.proc(), copy.sys());
  Tracker tracker(procfs, {make_selector(Selector::Kind::name, "kvstore")}, 100, std::nullopt);
  Batch first;
  tracker.tick(first);
  EXPECT_TRUE(first.processes.empty());
  copy.write("200/status", "Name:\tkvstore\n");
  copy.write("200/stat",
             "200 (kvstore) R 1 200 200 0 -1 0 1 0 0 0 1 1 0 0 20 0 1 0 777 "
             "3133440 415 0 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0");
  Batch second;
  tracker.tick(second);
  ASSERT_EQ(second.processes.size(), 1u);
  EXPECT_EQ(second.processes[0].key, (ProcessKey{200, 777}));
  EXPECT_EQ(count_kind(second, "target_found"), 1u);
}

}  // namespace
}  // namespace kv::mon
