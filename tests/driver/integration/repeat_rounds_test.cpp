// kvdrive run --repeat N: each round is its own run of the whole workload, the rounds share a
// repeat_group, the targets' order rotates round by round, and every round's requests are the
// stores' own counts.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// The target ordinal whose first phase started first in run `run`.
int64_t first_ordinal(kv::Database& db, int64_t run) {
  return query_int(db,
                   "SELECT t.ordinal FROM phases p JOIN targets t USING (target_id) "
                   "WHERE p.run_id = " +
                       std::to_string(run) + " ORDER BY p.started_ts_us, p.phase_id LIMIT 1");
}

TEST(Repeat, EachRoundIsARunTheTargetsRotateAndTheStoresCountEveryRound) {
  StoreServer a(StoreServer::Kind::redis), b(StoreServer::Kind::redis);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", a.uri(), "--target", b.uri(), "--keys",
            "200", "--requests", "600", "--threads", "1", "--repeat", "3", "--name", "ab"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("3 of 3 rounds recorded as runs 1 to 3 (repeat group ab-"),
            std::string::npos)
      << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs"), 3);
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT repeat_group) FROM runs"), 1);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM runs WHERE rounds = 3 AND status = 'completed' "
                      "AND run_group IS NULL"),
            3);
  for (int64_t round = 1; round <= 3; ++round) {
    const std::string where = " WHERE round = " + std::to_string(round);
    const int64_t run = query_int(db, "SELECT run_id FROM runs" + where);
    // The targets keep their positions; the one that runs first alternates: A B, B A, A B.
    EXPECT_EQ(query_text(db, "SELECT uri FROM targets WHERE ordinal = 0 AND run_id = " +
                                 std::to_string(run)),
              a.uri());
    EXPECT_EQ(first_ordinal(db, run), (round - 1) % 2) << "round " << round;
  }
  // Every round's requests reached the stores, and the file holds each of them.
  for (const StoreServer* s : {&a, &b}) {
    EXPECT_EQ(redis_command_calls(s->port(), "set"), 3 * 200);
    EXPECT_EQ(redis_command_calls(s->port(), "get"), 3 * 600);
  }
  EXPECT_EQ(driver_sum(db, "ops", "redis", "get"), 2 * 3 * 600);
  // A round's report says which round it is, and lists the stores as the comparison of two
  // rounds matches them
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--run", "2"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("round 2 of 3 (ab-"), std::string::npos) << report.output;
  // (stores by position, which round 2's order of running, B then A, does not change).
  auto stores = run_kvdrive(dir, {"--log-level", "off", "report", "--db", dir.file("r.db"), "--run",
                                  "2", "--format", "csv", "stores"});
  ASSERT_EQ(stores.exit_code, 0) << stores.output;
  const size_t at_a = stores.output.find("\n2," + a.uri() + ",");
  const size_t at_b = stores.output.find("\n2," + b.uri() + ",");
  ASSERT_NE(at_a, std::string::npos) << stores.output;
  ASSERT_NE(at_b, std::string::npos) << stores.output;
  EXPECT_LT(at_a, at_b) << stores.output;
}

// --json and --json-out with --repeat: one document of all the rounds, not one per round.
TEST(Repeat, JsonIsOneDocumentOfTheRounds) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(dir, {"--log-level", "off", "run", "--db", dir.file("r.db"), "--target",
                               redis.uri(), "--keys", "100", "--threads", "1", "--repeat", "2",
                               "--json", "--json-out", dir.file("rounds.json")});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const nlohmann::json doc = nlohmann::json::parse(out.output);
  ASSERT_EQ(doc["runs"].size(), 2u) << out.output;
  EXPECT_EQ(doc["runs"][1]["round"], 2);
  EXPECT_EQ(doc["runs"][0]["repeat_group"], doc["runs"][1]["repeat_group"]);
  EXPECT_EQ(nlohmann::json::parse(slurp(dir.file("rounds.json")))["runs"].size(), 2u);
}

// Ctrl-C in a round ends the rounds: that round is interrupted and no other starts.
TEST(Repeat, AnInterruptedRoundEndsTheRounds) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "50M",
             "--threads", "1", "--repeat", "3"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("load", 1))) << slurp(log);
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(30'000), 130) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(query_text(db, "SELECT status FROM runs WHERE round = 1"), "interrupted");
  EXPECT_NE(slurp(log).find("rounds 2 to 3 were not run"), std::string::npos) << slurp(log);
}

}  // namespace
