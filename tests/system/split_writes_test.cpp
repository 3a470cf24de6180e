// The seed study's delayed-ACK cliff, for real (issue 16): memcached and kvdrive in a network
// namespace of their own whose loopback has the MTU of an Ethernet path (1500: an MSS of 1448
// bytes), made and removed here. With Nagle on (?nodelay=0) and a set written as the clients of
// that era wrote it (?writes=split: command line, then value, then read), a value shorter than
// one MSS waits for the server's delayed ACK of the command line (~40 ms); a value of several
// MSS does not (the server ACKs two full segments at once), nor one write, nor nodelay=1.
// Needs root and `ip netns`; skips with the reason elsewhere, fails in CI (KV_REQUIRE_SERVERS=1).
#include <gtest/gtest.h>
#include <unistd.h>

#include "db_query.hpp"
#include "kvbench/schema.hpp"
#include "netns.hpp"
#include "servers.hpp"

namespace {
using namespace kv::test;

const std::string kKvdrive = std::string(KV_BINARY_DIR) + "/driver/kvdrive";

struct Sets {
  double p50_ms = -1;
  double req_per_s = -1;
};

TEST(SplitWrites, NagleStallsASplitSetShorterThanOneMss) {
  TempDir dir;
  NetNamespace ns;
  std::string why;
  const std::string memcached_bin = find_program("memcached");
  if (memcached_bin.empty()) why = "memcached is not installed";
  if (why.empty()) ns.create(dir, "kvbench-mss", 1500, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << "cannot make the namespace here: " << why;
    GTEST_SKIP() << why;
  }
  Process memcached(
      ns.inside({memcached_bin, "-p", "11211", "-l", "127.0.0.1", "-U", "0", "-u", "root"}),
      dir.file("memcached.log"));
  ASSERT_TRUE(ns.accepts_within(11211, 15'000)) << slurp(dir.file("memcached.log"));

  // Closed loop, one connection: the load phase's sets, one at a time.
  int n = 0;
  auto sets = [&](const std::string& query, int value_size, int keys,
                  const std::vector<std::string>& more = {}) {
    const std::string db = dir.file(std::to_string(++n) + ".db");
    const std::string log = dir.file(std::to_string(n) + "-kvdrive.log");
    std::vector<std::string> argv = {kKvdrive,    "run",
                                     "--db",      db,
                                     "--target",  "memcached://127.0.0.1:11211?" + query,
                                     "--keys",    std::to_string(keys),
                                     "-d",        std::to_string(value_size),
                                     "--threads", "1"};
    argv.insert(argv.end(), more.begin(), more.end());
    if (more.empty()) argv.insert(argv.end(), {"--phases", "load", "--connections", "1"});
    int code = ns.run_inside(argv, log, 120'000);
    EXPECT_EQ(code, 0) << query << " " << value_size << ": " << slurp(log);
    Sets s;
    if (code != 0) return s;
    auto results = kv::open_results_db(db);
    EXPECT_EQ(query_int(results, "SELECT ops FROM phase_summary WHERE op = 'set'"), keys);
    EXPECT_EQ(query_int(results, "SELECT errors FROM phase_summary WHERE op = 'set'"), 0);
    s.p50_ms = query_double(results, "SELECT lat_p50_us FROM phase_summary WHERE op = 'set'") / 1e3;
    s.req_per_s = query_double(results, "SELECT req_per_s FROM phase_summary WHERE op = 'set'");
    return s;
  };

  // 1 KB, below the MSS: split, every set waits for the delayed ACK (~40 ms, ~25 sets/s) ...
  Sets text = sets("nodelay=0&writes=split", 1000, 25);
  EXPECT_GE(text.p50_ms, 30) << "text, split";
  EXPECT_LE(text.req_per_s, 35) << "text, split";
  Sets binary = sets("protocol=binary&nodelay=0&writes=split", 1000, 25);
  EXPECT_GE(binary.p50_ms, 30) << "binary, split";
  EXPECT_LE(binary.req_per_s, 35) << "binary, split";
  // ... one write (libmemcached's and the engine's default), or nodelay=1, do not wait ...
  EXPECT_LT(sets("nodelay=0", 1000, 200).p50_ms, 10) << "one write";
  EXPECT_LT(sets("nodelay=1&writes=split", 1000, 200).p50_ms, 10) << "split, nodelay=1";
  // ... nor a split value of several MSS: the cliff is where the path's MSS puts it.
  EXPECT_LT(sets("nodelay=0&writes=split", 4000, 200).p50_ms, 10) << "4 KB, split";
  // Split sets pipelined on several connections, text and binary: every set counted once and
  // ok (above), every value read back intact.
  for (const char* query : {"writes=split", "protocol=binary&writes=split"}) {
    sets(query, 3000, 300,
         {"--phases", "load,read", "--connections", "3", "--pipeline", "8", "--verify"});
    auto results = kv::open_results_db(dir.file(std::to_string(n) + ".db"));
    EXPECT_EQ(query_int(results, "SELECT ops FROM phase_summary WHERE op = 'get'"), 300) << query;
    EXPECT_EQ(
        query_int(results, "SELECT errors + wrong + misses FROM phase_summary WHERE op = 'get'"), 0)
        << query;
  }
}

}  // namespace
