// The cross-host path for real: Redis and kvmon in their own network namespace (the "database
// host", reached over a veth pair), kvdrive in this one (the "client host"). kvmon listens on a
// non-loopback address, so it must require a token. Needs root and `ip netns`; skips with the
// reason elsewhere, fails in CI (KV_REQUIRE_SERVERS=1) where it cannot run.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace {
using namespace kv::test;

const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";
const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

int run(const std::vector<std::string>& argv, const std::string& log) {
  Process p(argv, log);
  return p.wait(30'000);
}

// A network namespace joined to this one by a veth pair: 10.213.<n>.1 here, .2 inside.
class DbHost {
 public:
  bool create(const TempDir& dir, std::string* why) {
    ip_ = find_program("ip");
    if (ip_.empty()) return fail(why, "the ip command (iproute2) is missing");
    if (geteuid() != 0) return fail(why, "needs root (ip netns)");
    int n = getpid() % 200 + 20;
    ns_ = "kvbench-db-" + std::to_string(getpid());
    veth_ = "kvb" + std::to_string(getpid() % 100000);
    here_ = "10.213." + std::to_string(n) + ".1";
    there_ = "10.213." + std::to_string(n) + ".2";
    log_ = dir.file("ip.log");
    if (run({ip_, "netns", "add", ns_}, log_) != 0) return fail(why, "ip netns add failed");
    created_ = true;
    const std::vector<std::vector<std::string>> steps = {
        {ip_, "link", "add", veth_ + "a", "type", "veth", "peer", "name", veth_ + "b"},
        {ip_, "link", "set", veth_ + "b", "netns", ns_},
        {ip_, "addr", "add", here_ + "/24", "dev", veth_ + "a"},
        {ip_, "link", "set", veth_ + "a", "up"},
        {ip_, "netns", "exec", ns_, ip_, "addr", "add", there_ + "/24", "dev", veth_ + "b"},
        {ip_, "netns", "exec", ns_, ip_, "link", "set", veth_ + "b", "up"},
        {ip_, "netns", "exec", ns_, ip_, "link", "set", "lo", "up"},
    };
    for (const auto& s : steps)
      if (run(s, log_) != 0) return fail(why, "network setup failed (see " + log_ + ")");
    return true;
  }
  ~DbHost() {
    if (!created_) return;
    run({ip_, "link", "del", veth_ + "a"}, log_);
    run({ip_, "netns", "del", ns_}, log_);
  }
  // argv run inside the namespace.
  std::vector<std::string> inside(std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {ip_, "netns", "exec", ns_});
    return argv;
  }
  const std::string& address() const { return there_; }

 private:
  bool fail(std::string* why, const std::string& what) {
    *why = what;
    return false;
  }
  std::string ip_, ns_, veth_, here_, there_, log_;
  bool created_ = false;
};

TEST(TwoHosts, KvdrivePullsKvmonSamplesAcrossANetworkWithAToken) {
  TempDir dir;
  DbHost db_host;
  std::string why;
  std::string redis_bin = find_program("redis-server");
  if (redis_bin.empty()) why = "redis-server is not installed";
  if (why.empty()) db_host.create(dir, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << "cannot build two hosts here: " << why;
    GTEST_SKIP() << why;
  }
  const std::string addr = db_host.address();
  Process redis(db_host.inside({redis_bin, "--port", "6379", "--bind", addr, "--save", "", "--dir",
                                dir.path(), "--protected-mode", "no"}),
                dir.file("redis.log"));
  std::ofstream(dir.file("token")) << "s3cret-token-0123456789\n";
  // A non-loopback listener without a token is refused ...
  Process open_kvmon(db_host.inside({kKvmon, "--db", dir.file("x.db"), "--name", "redis-server",
                                     "--listen", addr + ":7070"}),
                     dir.file("kvmon-open.log"));
  EXPECT_EQ(open_kvmon.wait(10'000), 2);
  // ... and with one it serves.
  Process kvmon(
      db_host.inside({kKvmon, "--db", dir.file("kvmon.db"), "--name", "redis-server", "--interval",
                      "200ms", "--listen", addr + ":7070", "--token-file", dir.file("token")}),
      dir.file("kvmon.log"));
  ASSERT_TRUE(file_contains_within(dir.file("kvmon.log"), "serving samples on", 30'000))
      << slurp(dir.file("kvmon.log"));

  // A wrong token is refused: an error, nothing written (long enough to be sent at all).
  std::ofstream(dir.file("wrong")) << "guess-guess-guess-1\n";
  int wrong =
      run({kKvdrive, "run", "--db", dir.file("wrong.db"), "--target", "redis://" + addr + ":6379",
           "--keys", "100", "--monitor", addr + ":7070", "--monitor-token-file", dir.file("wrong")},
          dir.file("wrong.log"));
  EXPECT_EQ(wrong, 1);

  int code = run({kKvdrive, "run", "--db", dir.file("r.db"), "--target",
                  "redis://" + addr + ":6379", "--keys", "20000", "--threads", "2", "--monitor",
                  addr + ":7070", "--monitor-token-file", dir.file("token")},
                 dir.file("kvdrive.log"));
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0);
  ASSERT_EQ(code, 0) << "see " << dir.file("kvdrive.log");

  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE status = 'completed'"), 1);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM monitor_sessions WHERE link = '" + addr +
                              ":7070' AND clock_offset_us IS NOT NULL"),
            1);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM process_samples WHERE remote_ts_us IS NOT NULL"),
            3);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM timeline WHERE rss_kib > 0"), 1);
}

}  // namespace
