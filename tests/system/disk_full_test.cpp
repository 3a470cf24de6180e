// The results file's disk fills up mid-run: kvdrive stops with a clear error and a non-zero
// exit, and everything it committed before is intact. Needs root to mount a small tmpfs.
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace {
using namespace kv::test;

const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";

class SmallDisk {
 public:
  bool mount_at(const std::string& dir, std::string* why) {
    if (geteuid() != 0) {
      *why = "needs root to mount a tmpfs";
      return false;
    }
    if (::mount("kvbench-full", dir.c_str(), "tmpfs", 0, "size=1m") != 0) {
      *why = std::string("mount tmpfs: ") + strerror(errno);
      return false;
    }
    dir_ = dir;
    return true;
  }
  ~SmallDisk() {
    if (!dir_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }

 private:
  std::string dir_;
};

TEST(DiskFull, ClearErrorNonZeroExitAndCommittedRowsIntact) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  std::string mnt = dir.file("small");
  ::mkdir(mnt.c_str(), 0755);
  SmallDisk disk;
  std::string why;
  if (!disk.mount_at(mnt, &why)) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  // Per-second rows and latency histograms of a long scenario outgrow 1 MiB.
  Process p({kKvdrive, "run", "--db", mnt + "/r.db", "--target", redis.uri(), "--keys", "2000",
             "--phases", "load,read", "--duration", "60s", "--value-size", "10-100000",
             "--key-pattern", "uniform", "--threads", "2"},
            dir.file("kvdrive.log"));
  int code = p.wait(120'000);
  std::ifstream log(dir.file("kvdrive.log"));
  std::stringstream out;
  out << log.rdbuf();
  EXPECT_NE(code, 0) << out.str();
  EXPECT_NE(code, -1) << "kvdrive hung on a full disk";
  EXPECT_NE(out.str().find("full"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("terminate"), std::string::npos) << out.str();
  // What was committed is readable and intact (copied off the full disk to open it).
  std::string copy = dir.file("copy.db");
  {
    std::ifstream src(mnt + "/r.db", std::ios::binary);
    std::ofstream dst(copy, std::ios::binary);
    dst << src.rdbuf();
  }
  for (const char* ext : {"-wal"}) {
    std::ifstream src(mnt + "/r.db" + ext, std::ios::binary);
    if (!src) continue;
    std::ofstream dst(copy + ext, std::ios::binary);
    dst << src.rdbuf();
  }
  auto db = kv::open_results_db(copy);
  auto ic = db.prepare("PRAGMA integrity_check");
  ASSERT_TRUE(ic.step());
  EXPECT_EQ(ic.column_text(0), "ok");
  auto n = db.prepare("SELECT count(*) FROM driver_seconds");
  ASSERT_TRUE(n.step());
  EXPECT_GT(n.column_int(0), 0);
  // Nothing is left `running`: the phase the disk filled in is failed, and so is the run (marked
  // by kvdrive when it still could, else by this open of the file). The schema and the load
  // phase alone leave the 1 MiB disk nearly full (a 956 KB WAL), so the disk fills in the load
  // phase, as the read phase's row is written (no read phase then), or in the read phase.
  auto count = [&](const std::string& sql) {
    auto q = db.prepare(sql);
    return q.step() ? q.column_int(0) : -1;
  };
  auto statuses =
      db.prepare("SELECT group_concat(kind || ' ' || status, ', ') FROM phases ORDER BY phase_id");
  const std::string phases = statuses.step() ? statuses.column_text(0) : "";
  EXPECT_EQ(count("SELECT count(*) FROM phases WHERE status = 'running'"), 0) << phases;
  EXPECT_EQ(count("SELECT count(*) FROM runs WHERE status = 'running'"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM runs WHERE status IN ('failed', 'incomplete')"), 1);
  const int64_t failed =
      count("SELECT count(*) FROM phases WHERE status IN ('failed', 'incomplete')");
  if (count("SELECT count(*) FROM phases WHERE kind = 'read'") > 0) {
    EXPECT_EQ(failed, 1) << phases << "\n" << out.str();  // 60 s: it cannot have completed
  } else {
    EXPECT_EQ(count("SELECT count(*) FROM phases"), 1) << phases;
    EXPECT_LE(failed, 1) << phases;
  }
}

}  // namespace
