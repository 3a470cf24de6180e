// kvdrive check against real stores: a planted regression exits 4 and is recorded, two rounds
// of noise exit 5, the same store within generous objectives exits 0.
#include <gtest/gtest.h>

#include "cpu_cgroup.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// Rounds of one target into `db` (closed loop, a load of 1,000 keys and 4,000 gets), until its
// latest group has 4 rounds fit to judge by (kvdrive itself stalled in none, nothing failed):
// on a busy host a round may be spoiled; three groups are tried.
void record_rounds(const TempDir& dir, const std::string& db, const std::string& target, int rounds,
                   bool need_fit = true) {
  for (int attempt = 1; attempt <= 3; ++attempt) {
    auto out = run_kvdrive(
        dir, {"--log-level", "warn", "run", "--db", db, "--target", target, "--repeat",
              std::to_string(rounds), "--keys", "1000", "--requests", "4000", "--threads", "1"});
    ASSERT_EQ(out.exit_code, 0) << out.output;
    if (!need_fit) return;
    const int64_t fit = query_int(
        db,
        "SELECT count(*) FROM runs r WHERE r.repeat_group = (SELECT repeat_group FROM runs "
        "ORDER BY run_id DESC LIMIT 1) AND r.status = 'completed' AND NOT EXISTS (SELECT 1 "
        "FROM events e WHERE e.run_id = r.run_id AND e.kind IN ('client_stall', "
        "'client_bound'))");
    if (fit >= 4) return;
  }
  FAIL() << "three groups of " << rounds << " rounds had fewer than 4 fit to judge by";
}

TEST(Check, APlantedRegressionExitsFourAndIsRecorded) {
  std::string why;
  CpuCgroup cg(1'000, 10'000, &why);  // 10 % of a core, in 1 ms slices
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string base = dir.file("base.db"), cand = dir.file("cand.db");
  record_rounds(dir, base, redis.uri(), 7);
  ASSERT_TRUE(cg.add(redis.pid()));  // the candidate: the same store, held to a tenth of a core
  record_rounds(dir, cand, redis.uri(), 7);
  const std::string base_bytes = slurp(base);
  auto out = run_kvdrive(dir, {"check", "--db", cand, "--baseline", base, "--max-regression",
                               "throughput=5%,p99=10%"});
  EXPECT_EQ(out.exit_code, 4) << out.output;
  EXPECT_NE(out.output.find("regression: " + redis.uri() + " read get req/s: "), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("more than the 5.0 % allowed"), std::string::npos) << out.output;
  EXPECT_TRUE(slurp(base) == base_bytes) << "the baseline file changed";
  auto db = kv::open_results_db(cand);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM check_results WHERE figure = 'req/s' AND phase = "
                      "'read' AND verdict = 'regression' AND high < 0.95"),
            1);
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT figure) FROM check_results"), 2);  // req/s, p99
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM events WHERE kind = 'check'"), 1);
  EXPECT_GE(query_int(db, "SELECT count(*) FROM events WHERE kind = 'check_regression'"), 1);
  // On the candidate's last round, which a merge carries with it.
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM check_results WHERE run_id = "
                      "(SELECT max(run_id) FROM runs)"),
            query_int(db, "SELECT count(*) FROM check_results"));
}

TEST(Check, TwoRoundsOfNoiseExitFive) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string base = dir.file("base.db"), cand = dir.file("cand.db");
  record_rounds(dir, base, redis.uri(), 2, false);
  record_rounds(dir, cand, redis.uri(), 2, false);
  auto out = run_kvdrive(
      dir, {"check", "--db", cand, "--baseline", base, "--max-regression", "throughput=5%"});
  EXPECT_EQ(out.exit_code, 5) << out.output;
  EXPECT_NE(out.output.find("too few rounds for an interval"), std::string::npos) << out.output;
  EXPECT_EQ(query_int(cand, "SELECT count(*) FROM check_results WHERE verdict = 'indeterminate'"),
            query_int(cand, "SELECT count(*) FROM check_results"));
}

TEST(Check, TheSameStoreWithinGenerousObjectivesPasses) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string base = dir.file("base.db"), cand = dir.file("cand.db");
  record_rounds(dir, base, redis.uri(), 7);
  record_rounds(dir, cand, redis.uri(), 7);
  auto out = run_kvdrive(dir, {"check", "--db", cand, "--baseline", base, "--max-regression",
                               "throughput=50%,p50=100%"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("0 regression(s), 0 indeterminate"), std::string::npos) << out.output;
  EXPECT_EQ(query_int(cand, "SELECT count(*) FROM check_results WHERE verdict = 'pass'"), 4);
}

}  // namespace
