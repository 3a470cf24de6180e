// Integration tests: the real kvmon's results file (deleted under it, its disk full, committed
// once per flush interval, locked by another writer: every tick stored or accounted for); and a
// BGSAVE child, a target of another user, PSS, bad arguments.
#include <gtest/gtest.h>
#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvbench/sqlite.hpp"
#include "kvmon_test_util.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

// The results file deleted under kvmon (rm results.db*): kvmon says so in one line and goes on
// in a new file at the same path, whose events say from when its data starts. Before, it kept
// writing into the deleted file without a word.
TEST(Kvmon, ADeletedResultsFileIsSaidAndCreatedAnewAtItsPath) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(getpid()), "--interval", "50ms",
                                    "--host-interval", "50ms", "--flush-interval", "100ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t deleted_ts_us = now_ts_us();
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(db + ext);
  // A new file at the path (not opened before kvmon made it: opening would create it), with a
  // session of its own, samples of the target again (its instance row written anew) and the
  // event saying what happened.
  ASSERT_TRUE(wait_until([&] { return std::filesystem::exists(db); }, 5000))
      << slurp(dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db,
                         "SELECT COUNT(*) FROM process_samples JOIN process_instances USING "
                         "(instance_id) WHERE pid = " +
                             std::to_string(getpid()))
                   .value_or(0) >= 3;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  // Under ThreadSanitizer kvmon once took over 10 s to stop here (the cause is not known yet;
  // see NOTES.md): give it 30 s, and say how long it took.
  kvmon.signal(SIGTERM);
  const auto stop_asked = std::chrono::steady_clock::now();
  EXPECT_EQ(kvmon.wait(30'000), 0) << slurp(dir.file("kvmon.log"));
  EXPECT_LT(std::chrono::steady_clock::now() - stop_asked, std::chrono::seconds(30));
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'results_file_replaced'"), 1);
  EXPECT_GE(query_int(db, "SELECT MIN(ts_us) FROM events WHERE kind = 'results_file_replaced'")
                .value_or(0),
            deleted_ts_us);
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
  const std::string log = slurp(dir.file("kvmon.log"));
  EXPECT_NE(log.find("was deleted while kvmon was writing it"), std::string::npos) << log;
  size_t said = 0;
  for (size_t at = log.find("was deleted"); at != std::string::npos;
       at = log.find("was deleted", at + 1))
    ++said;
  EXPECT_EQ(said, 1u) << log;
}

// A tmpfs of 1 MiB at `dir` while it lives (needs root).
class SmallDisk {
 public:
  bool mount_at(const std::string& dir, std::string* why) {
    if (geteuid() != 0) {
      *why = "needs root to mount a tmpfs";
      return false;
    }
    if (::mount("kvmon-full", dir.c_str(), "tmpfs", 0, "size=1m") != 0) {
      *why = std::string("mount tmpfs: ") + std::strerror(errno);
      return false;
    }
    dir_ = dir;
    return true;
  }
  ~SmallDisk() {
    if (!dir_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  // Space comes back for good: the disk grows. Removing the filler alone gave back only what it
  // had taken, which kvmon's write-ahead log refilled within a second or two (seen under
  // ThreadSanitizer, where the stop that followed then failed to write too).
  bool grow(std::string* why) {
    if (::mount("kvmon-full", dir_.c_str(), "tmpfs", MS_REMOUNT, "size=64m") == 0) return true;
    *why = std::string("remount tmpfs larger: ") + std::strerror(errno);
    return false;
  }

 private:
  std::string dir_;
};

// The results file's disk fills up and space comes back: kvmon records how many ticks it lost
// and when, and the session is not 'completed'. Before, it lost ~70 ticks and said completed.
TEST(Kvmon, AFullDiskRecordsTheTicksLostAndTheSessionIsIncomplete) {
  TempDir dir;
  const std::string mnt = dir.file("small");
  ::mkdir(mnt.c_str(), 0755);
  SmallDisk disk;
  std::string why;
  if (!disk.mount_at(mnt, &why)) {
    if (kv::test::servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  const std::string db = mnt + "/results.db";
  Process kvmon({kKvmon, "--db", db, "--pid", std::to_string(getpid()), "--interval", "20ms",
                 "--host-interval", "20ms", "--flush-interval", "100ms", "--log-level", "debug"},
                dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 5; }, 5000))
      << slurp(dir.file("kvmon.log"));
  {  // fill the disk
    std::ofstream filler(mnt + "/filler", std::ios::binary);
    std::string block(4096, 'x');
    while (filler.write(block.data(), static_cast<std::streamsize>(block.size())) &&
           filler.flush()) {
    }
  }
  ASSERT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("could not store") != std::string::npos; },
      20'000))
      << "no write failed on the full disk\n"
      << slurp(dir.file("kvmon.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // more ticks lost meanwhile
  std::filesystem::remove(mnt + "/filler");
  ASSERT_TRUE(disk.grow(&why)) << why;
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'samples_lost'")
                   .value_or(0) > 0;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
  // "N tick(s) of samples lost, due from A to B (R rows): ...": N > 0, and the samples stored
  // leave a gap of about that many ticks.
  const std::string msg = query_text(db, "SELECT message FROM events WHERE kind = 'samples_lost'");
  int64_t lost = std::atoll(msg.c_str());
  EXPECT_GT(lost, 0) << msg;
  EXPECT_NE(msg.find("due from"), std::string::npos) << msg;
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "incomplete");
  auto gap = query_int(db,
                       "SELECT MAX(gap) FROM (SELECT scheduled_ts_us - LAG(scheduled_ts_us) "
                       "OVER (ORDER BY scheduled_ts_us) AS gap FROM process_samples)");
  ASSERT_TRUE(gap.has_value());
  EXPECT_GE(*gap / 20'000, lost / 2) << "the lost ticks are not a gap in the samples: " << msg;
}

TEST(Kvmon, CommitsOncePerFlushIntervalAndSigtermStoresTheRest) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  const std::string session = "(SELECT MAX(session_id) FROM monitor_sessions)";
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(getpid()), "--interval", "50ms",
                                    "--host-interval", "50ms", "--flush-interval", "3s"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM monitor_sessions").value_or(0) == 1; },
      5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t started = now_ts_us();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  // Half a flush interval in, ~30 ticks taken and none committed yet.
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_samples"), 0);
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) > 0; }, 5000))
      << slurp(dir.file("kvmon.log"));
  const int64_t first_commit_s = (now_ts_us() - started) / 1'000'000;
  EXPECT_GE(first_commit_s, 1);  // ~3 s after the start, not at the first tick
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  // Everything taken before SIGTERM is stored: one sample per tick, from the first to the last.
  auto span_ticks = query_int(db,
                              "SELECT (MAX(scheduled_ts_us) - MIN(scheduled_ts_us)) / 50000 "
                              "+ 1 FROM host_samples WHERE session_id = " +
                                  session);
  auto skipped = query_int(db,
                           "SELECT COALESCE(SUM(CAST(message AS INTEGER)), 0) FROM events "
                           "WHERE kind = 'ticks_skipped'");
  // (kvmon is a fork child of its target, this test: sampled too, as its own instance.)
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples s JOIN process_instances i "
                      "USING (instance_id) WHERE i.parent_instance_id IS NULL")
                    .value_or(0) +
                skipped.value_or(0),
            span_ticks.value_or(-1));
  EXPECT_GE(span_ticks.value_or(0), 60);  // 3 s and more
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
}

TEST(Kvmon, BgsaveChildIsItsOwnInstanceWithItsRssAndWrites) {
  TempDir dir;
  // 400 keys of 16 KiB, saved uncompressed with a 2.5 ms pause per key: a 1 s BGSAVE.
  StoreServer redis(StoreServer::Kind::redis,
                    {"--rdbcompression", "no", "--rdb-key-save-delay", "2500"});
  KV_START_OR_SKIP(redis);
  std::string mset = "*801\r\n$4\r\nMSET\r\n";
  for (int i = 0; i < 400; ++i) {
    std::string key = "key:" + std::to_string(i);
    std::string value(16384, static_cast<char>('a' + i % 26));
    mset += "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n$" +
            std::to_string(value.size()) + "\r\n" + value + "\r\n";
  }
  ASSERT_EQ(kv::test::tcp_request(redis.port(), mset, "\r\n"), "+OK\r\n");
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(dir, {"--pid", std::to_string(redis.pid()), "--interval", "20ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 2; },
      5000));
  ASSERT_EQ(kv::test::tcp_request(redis.port(), "BGSAVE\r\n", "\r\n"),
            "+Background saving started\r\n");
  const std::string child =
      "(SELECT instance_id FROM process_instances WHERE "
      "parent_instance_id IS NOT NULL)";
  EXPECT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'child_exited'") == 1; },
      10'000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);

  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_instances WHERE parent_instance_id = "
                      "(SELECT instance_id FROM process_instances WHERE pid = " +
                          std::to_string(redis.pid()) + ")"),
            1);
  EXPECT_EQ(query_text(db, "SELECT selector FROM process_instances WHERE instance_id = " + child),
            "child:pid:" + std::to_string(redis.pid()));
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM process_samples WHERE instance_id = " + child)
                .value_or(0),
            10);
  // The child shares the parent's pages: its RSS is several MiB, not a fresh process's.
  EXPECT_GT(query_int(db, "SELECT MAX(rss_kib) FROM process_samples WHERE instance_id = " + child)
                .value_or(0),
            4096);
  // It writes the ~6.4 MB dump (unless the temp dir is tmpfs, which counts no storage writes).
  auto written = query_int(db,
                           "SELECT MAX(io_write_bytes) FROM process_samples WHERE "
                           "instance_id = " +
                               child);
  ASSERT_TRUE(written.has_value()) << "io_write_bytes is NULL even as the same user";
  struct statfs sfs {};
  if (statfs(dir.path().c_str(), &sfs) == 0 && sfs.f_type != TMPFS_MAGIC) {
    EXPECT_GT(*written, 1'000'000);
  }
}

// kvmon sampling every 20 ms while another writer holds the results file for 1.5 s; returns
// once kvmon has stopped, its file holding what it stored and the events of what it did not.
void lock_the_file_under_kvmon(const TempDir& dir) {
  const std::string db = dir.file("results.db");
  Process kvmon =
      start_kvmon(dir, {"--interval", "20ms", "--host-interval", "20ms", "--max-queued", "5"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM host_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  {
    Database other = Database::open(db);  // another writer holds the file for 1.5 s
    other.exec("BEGIN EXCLUSIVE");
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    other.exec("COMMIT");
  }
  ASSERT_TRUE(wait_until(
      [&] {
        return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'samples_dropped'") >= 1;
      },
      5000))
      << slurp(dir.file("kvmon.log"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(stop_kvmon(kvmon), 0) << slurp(dir.file("kvmon.log"));
}

int64_t samples_dropped(const std::string& db) {
  return query_int(db,
                   "SELECT SUM(CAST(message AS INTEGER)) FROM events "
                   "WHERE kind = 'samples_dropped'")
      .value_or(0);
}

// Every tick is accounted for, in every build: stored, counted as dropped, or (when the timer
// overran, as a sanitizer or a loaded machine makes it) counted as skipped.
TEST(Kvmon, ALockedDatabaseDropsSamplesWithAnEventAndEveryTickIsAccountedFor) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  ASSERT_NO_FATAL_FAILURE(lock_the_file_under_kvmon(dir));
  const int64_t dropped = samples_dropped(db);
  EXPECT_GE(dropped, 1);
  auto skipped = query_int(db,
                           "SELECT SUM(CAST(message AS INTEGER)) FROM events "
                           "WHERE kind = 'ticks_skipped'")
                     .value_or(0);
  auto stored = query_int(db, "SELECT COUNT(*) FROM host_samples").value_or(0);
  auto span_ticks = query_int(db,
                              "SELECT (MAX(scheduled_ts_us) - MIN(scheduled_ts_us)) / 20000 "
                              "+ 1 FROM host_samples")
                        .value_or(0);
  EXPECT_EQ(stored + dropped + skipped, span_ticks) << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(query_text(db, "SELECT status FROM monitor_sessions"), "completed");
}

// The timer never waits for the file: the samples taken while it was locked were taken on time,
// and most of the 75 ticks of the lock were dropped rather than skipped. Timing assertions: the
// suite runs in the plain build only (scripts/sanitize.sh).
TEST(KvmonTiming, ALockedDatabaseNeverDelaysTheTimer) {
  TempDir dir;
  const std::string db = dir.file("results.db");
  ASSERT_NO_FATAL_FAILURE(lock_the_file_under_kvmon(dir));
  EXPECT_GE(samples_dropped(db), 40) << slurp(dir.file("kvmon.log"));  // ~75 locked, 5 queued
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM host_samples WHERE "
                      "ts_us - scheduled_ts_us NOT BETWEEN -5000 AND 200000"),
            0);
}

TEST(Kvmon, AnotherUsersTargetGivesNullNotZeroWhereUnreadable) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to run kvmon as another user (nobody)";
  std::string setpriv = kv::test::find_program("setpriv");
  if (setpriv.empty()) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  StoreServer redis(StoreServer::Kind::redis);  // runs as root
  KV_START_OR_SKIP(redis);
  TempDir dir;
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  const std::string db = dir.file("results.db");
  Process kvmon({setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", kKvmon, "--db", db,
                 "--pid", std::to_string(redis.pid()), "--interval", "50ms"},
                dir.file("kvmon.log"));
  // Our queries run as root: let kvmon create the file (and its WAL files) as nobody first.
  ASSERT_TRUE(wait_until(
      [&] { return slurp(dir.file("kvmon.log")).find("sampling") != std::string::npos; }, 5000))
      << slurp(dir.file("kvmon.log"));
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 3; }, 5000))
      << slurp(dir.file("kvmon.log"));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE io_read_bytes IS NOT NULL "
                      "OR io_write_bytes IS NOT NULL OR fds IS NOT NULL"),
            0);
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM process_samples WHERE rss_kib IS NULL "
                      "OR cpu_user_us IS NULL"),
            0);  // status and stat stay readable
  std::string log = slurp(dir.file("kvmon.log"));
  EXPECT_NE(log.find("CAP_SYS_PTRACE"), std::string::npos) << log;
  size_t warnings = 0;
  for (size_t at = log.find("cannot read"); at != std::string::npos;
       at = log.find("cannot read", at + 1)) {
    ++warnings;
  }
  EXPECT_EQ(warnings, 2u) << "one warning each for io and fd/, not one per sample:\n" << log;
}

TEST(Kvmon, PssOnlyWhenAskedAndOnlyAtItsInterval) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("results.db");
  Process kvmon = start_kvmon(
      dir, {"--pid", std::to_string(redis.pid()), "--interval", "20ms", "--pss-interval", "200ms"});
  ASSERT_TRUE(wait_until(
      [&] { return query_int(db, "SELECT COUNT(*) FROM process_samples").value_or(0) >= 40; },
      5000));
  EXPECT_EQ(stop_kvmon(kvmon), 0);
  auto with_pss = query_int(db, "SELECT COUNT(*) FROM process_samples WHERE pss_kib > 0");
  auto all = query_int(db, "SELECT COUNT(*) FROM process_samples");
  EXPECT_GE(with_pss.value_or(0), 2);
  EXPECT_LE(with_pss.value_or(0) * 5, all.value_or(0));  // about 1 in 10 samples
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_samples WHERE pss_kib > rss_kib"), 0);
}

TEST(Kvmon, BadArgumentsExitTwoWithOneLine) {
  TempDir dir;
  for (std::vector<std::string> args : {std::vector<std::string>{"--pid", "1"},
                                        {"--db", dir.file("x.db"), "--interval", "5ms"},
                                        {"--db", dir.file("x.db"), "--port", "99999"},
                                        {"--db", dir.file("x.db"), "--bogus"}}) {
    args.insert(args.begin(), kKvmon);
    const std::string log = dir.file("err" + std::to_string(args.size()) + args.back() + ".log");
    Process p(args, log);
    EXPECT_EQ(p.wait(5000), 2) << args.back();
    std::string err = slurp(log);
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

}  // namespace
}  // namespace kv::mon
