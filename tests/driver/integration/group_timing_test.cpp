// `kvdrive run --processes N` starts every phase in all its processes at one instant (a barrier:
// run/phase_barrier.hpp), so the group's phase windows are one window: two targets one after
// the other, three phases each, against real servers. A timing assertion: the plain build runs
// it, the sanitizer stages leave it out (scripts/sanitize.sh).
#include <gtest/gtest.h>

#include <string>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

TEST(GroupTiming, EveryPhaseOfAGroupStartsInAllItsProcessesAtOnce) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target",
                               memcached.uri(), "--processes", "3", "--threads", "1", "--keys",
                               "30000", "--phases", "load,read,mixed", "--requests", "45000"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  // Every phase of both targets, each in all three processes.
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM group_phase_starts WHERE processes = 3"), 6);
  // Started within 10 ms of one another (without the barrier: up to ~0.3 s for the first
  // phase, over a second apart by the second target).
  auto spread = db.prepare(
      "SELECT target_ordinal, phase_ordinal, kind, start_spread_us FROM group_phase_starts");
  while (spread.step())
    EXPECT_LE(spread.column_int(3), 10'000)
        << "target " << spread.column_int(0) << " phase " << spread.column_int(1) << " ("
        << spread.column_text(2) << ")";
  // The group's load took its processes' wall time, not the spread of three drifting ones: its
  // rate is within the processes' own.
  EXPECT_GT(query_int(db,
                      "SELECT count(*) FROM group_summary WHERE kind = 'load' AND req_per_s >= "
                      "0.5 * (SELECT MIN(ps.req_per_s) FROM phase_summary ps JOIN phases p "
                      "USING (phase_id) WHERE p.kind = 'load')"),
            0);
}

// A --search group: its load starts in every process at once (the same barrier, over the
// search's pipes), and so does each step (the parent's rate line carries the start time).
// Without them the load's starts spread ~140 ms.
TEST(GroupTiming, ASearchGroupsLoadAndStepsStartInAllItsProcessesAtOnce) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"run",      "--db",       dir.file("r.db"),
                               "--target", redis.uri(),  "--processes",
                               "3",        "--threads",  "1",
                               "--keys",   "20000",      "--search",
                               "--slo",    "p99=50ms",   "--search-steps",
                               "2",        "--duration", "1s",
                               "--warmup", "0"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM group_phase_starts WHERE processes = 3 AND "
                      "kind = 'load'"),
            1);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM group_phase_starts WHERE processes = 3"), 3);
  auto spread = db.prepare("SELECT phase_ordinal, kind, start_spread_us FROM group_phase_starts");
  while (spread.step())
    EXPECT_LE(spread.column_int(2), 20'000)
        << "phase " << spread.column_int(0) << " (" << spread.column_text(1) << ")";
}

}  // namespace
