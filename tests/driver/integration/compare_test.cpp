// kvdrive compare against real stores: two identical Redis servers are neither faster nor
// slower than each other, one held to a tenth of a core is slower, and two repeat groups are
// compared target by target.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cpu_cgroup.hpp"
#include "kvdrive_test_util.hpp"
#include "output_fields.hpp"

namespace {
using namespace kv::test;
using nlohmann::json;

// Closed loop, short phases: a round is two targets' load of 1,000 keys and 4,000 gets.
std::vector<std::string> rounds_args(const TempDir& dir, const std::vector<std::string>& targets,
                                     const std::string& name, int rounds) {
  std::vector<std::string> args = {"--log-level", "warn",           "run",
                                   "--db",        dir.file("r.db"), "--name",
                                   name,          "--repeat",       std::to_string(rounds),
                                   "--keys",      "1000",           "--requests",
                                   "4000",        "--threads",      "1"};
  for (const auto& t : targets) args.insert(args.end(), {"--target", t});
  return args;
}

json compare(const TempDir& dir, std::vector<std::string> more) {
  std::vector<std::string> args = {"--log-level",    "off",      "compare", "--db",
                                   dir.file("r.db"), "--format", "json"};
  args.insert(args.end(), more.begin(), more.end());
  auto out = run_kvdrive(dir, args);
  EXPECT_EQ(out.exit_code, 0) << out.output;
  return json::parse(out.output);
}

// A round with a second of client stall is left out (the verdicts need 4 fit rounds a side):
// on a busy host a group may lose too many, so up to three groups are tried, each named.
json compare_fit_group(const TempDir& dir, const std::vector<std::string>& targets,
                       const std::string& name, const std::vector<std::string>& more = {}) {
  json last;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    const std::string group = name + std::to_string(attempt);
    auto out = run_kvdrive(dir, rounds_args(dir, targets, group, 7));
    EXPECT_EQ(out.exit_code, 0) << out.output;
    last = compare(dir, more);
    if (last["left_out"].size() <= 3) return last;
  }
  ADD_FAILURE() << "three groups of 7 rounds each lost more than 3 rounds: " << last.dump(1);
  return last;
}

// The same store as both targets, so that nothing but chance and the order of the rounds tells
// them apart. (Two identical redis-servers on a 2-core host are not alike: the one that shares
// a core with kvdrive's worker had twice the p99 in every round, and compare said so.) Its
// throughput and median latency are neither faster nor slower; tails, which one stalled second
// moves, are not judged here.
TEST(Compare, TheSameStoreTwiceIsNeitherFasterNorSlower) {
  StoreServer a(StoreServer::Kind::redis);
  KV_START_OR_SKIP(a);
  TempDir dir;
  // A minimum effect of 50 %: the same store is no faster nor slower by anything near it, so
  // an honest verdict is "no detectable difference" or "indeterminate".
  const json c = compare_fit_group(dir, {a.uri(), a.uri()}, "same", {"--min-effect", "50%"});
  ASSERT_EQ(c["comparisons"].size(), 6u) << c.dump(1);  // load set, read get: req/s, p50, p99
  int judged = 0;
  for (const json& row : c["comparisons"]) {
    EXPECT_EQ(row["store"], a.uri());
    EXPECT_EQ(row["against"], a.uri());
    EXPECT_LE(row["a"].size(), 7u);
    if (row["figure"] == "p99") continue;
    ++judged;
    EXPECT_NE(row["verdict"], "faster") << row.dump();
    EXPECT_NE(row["verdict"], "slower") << row.dump();
  }
  EXPECT_EQ(judged, 4);
}

TEST(Compare, AStoreHeldToATenthOfACoreIsSlowerWithAnIntervalClearOfOne) {
  std::string why;
  CpuCgroup cg(1'000, 10'000, &why);  // 10 % of a core, in 1 ms slices
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  StoreServer a(StoreServer::Kind::redis), b(StoreServer::Kind::redis);
  KV_START_OR_SKIP(a);
  KV_START_OR_SKIP(b);
  ASSERT_TRUE(cg.add(b.pid()));
  TempDir dir;
  const json c = compare_fit_group(dir, {a.uri(), b.uri()}, "slow");
  // The quota stops the store for up to 9 ms of every 10 once it has used its 1 ms: fewer
  // requests a second and a p99 of milliseconds. Its median request, served between the pauses,
  // is not slower (it was a little faster: the store shared no core with kvdrive).
  int judged = 0;
  for (const json& row : c["comparisons"]) {
    if (row["phase"] != "read" || row["figure"] == "p50") continue;
    ++judged;
    EXPECT_EQ(row["verdict"], "slower") << row.dump();
    ASSERT_FALSE(row["high"].is_null()) << row.dump();
    if (row["figure"] == "req/s")
      EXPECT_LT(row["high"].get<double>(), 1.0) << row.dump();
    else
      EXPECT_GT(row["low"].get<double>(), 1.0) << row.dump();
  }
  EXPECT_EQ(judged, 2) << c.dump(1);
}

// Two groups (two `run --repeat`): the second's target against the first's at its position.
// Text and CSV say the same as JSON.
TEST(Compare, TwoGroupsTargetByTargetInTextCsvAndJson) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  for (const char* name : {"before", "after"}) {
    auto out = run_kvdrive(dir, rounds_args(dir, {redis.uri()}, name, 4));
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string before = query_text(db, "SELECT repeat_group FROM runs WHERE name = 'before'");
  const std::string after = query_text(db, "SELECT repeat_group FROM runs WHERE name = 'after'");
  const json c = compare(dir, {"--group", before, "--group", after});
  EXPECT_EQ(c["a"], "repeat group " + before);
  EXPECT_EQ(c["b"], "repeat group " + after);
  // By the runs' --name: the latest group so named.
  EXPECT_EQ(compare(dir, {"--group", "before", "--group", "after"})["a"], c["a"]);
  EXPECT_EQ(c["comparisons"].size(), 6u) << c.dump(1);
  // Every field documented in docs/output-fields.md, and no other.
  const auto docs = documented_fields();
  for (const json& row : c["comparisons"]) expect_documented(row, docs.at("comparisons"), "row");
  auto text = run_kvdrive(dir, {"compare", "--db", dir.file("r.db"), "--group", before, "--group",
                                after, "--html", dir.file("c.html")});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("repeat group " + after + " (B) against repeat group " + before),
            std::string::npos)
      << text.output;
  // The page: the table and a chart per row, each round a point.
  const std::string html = slurp(dir.file("c.html"));
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<title>kvbench report: comparison of"), std::string::npos);
  size_t charts = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1))
    ++charts;
  EXPECT_EQ(charts, 6u);
  // B's interval in every chart whose row has one (rounds left out on a busy host may leave
  // too few for one).
  size_t intervals = 0, legends = 0;
  for (const json& row : c["comparisons"]) intervals += !row["low"].is_null();
  for (size_t at = html.find("interval (A"); at != std::string::npos;
       at = html.find("interval (A", at + 1))
    ++legends;
  EXPECT_EQ(legends, intervals);
  auto csv = run_kvdrive(dir, {"--log-level", "off", "compare", "--db", dir.file("r.db"), "--group",
                               before, "--group", after, "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("store,against,phase,op,figure,a_median,b_median,ratio,low,", 0), 0u)
      << csv.output;
  EXPECT_EQ(std::count(csv.output.begin(), csv.output.end(), '\n'), 7) << csv.output;
  // One group of one target has nothing to compare within: said, exit 2.
  auto alone = run_kvdrive(dir, {"compare", "--db", dir.file("r.db"), "--group", before});
  EXPECT_EQ(alone.exit_code, 2) << alone.output;
  EXPECT_NE(alone.output.find("one target"), std::string::npos) << alone.output;
}

// Two builds' A/B as bench/driver_vs_peers.sh records it: runs made one at a time into two
// files, the baseline's of an older schema (as an older kvdrive leaves it). compare --baseline
// reads that file without changing it, takes the listed runs as rounds, and finds pipeline 16
// faster than pipeline 1. Closed loop with one thread is client-bound, which is what a
// comparison of clients measures: --keep-client-bound counts those rounds.
TEST(Compare, RunsOfABaselineFileOfAnOlderSchemaAgainstRunsOfAnother) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const auto one_run = [&](const std::string& db, const std::string& pipeline) {
    auto out = run_kvdrive(dir, {"--log-level", "warn", "run", "--db", dir.file(db), "--target",
                                 redis.uri(), "--keys", "1000", "--requests", "4000", "--threads",
                                 "1", "--connections", "2", "--pipeline", pipeline});
    EXPECT_EQ(out.exit_code, 0) << out.output;
  };
  std::vector<std::string> listed;
  for (int i = 1; i <= 6; ++i) {
    one_run("a.db", "1");
    one_run("b.db", "16");
    listed.insert(listed.end(), {"--baseline-run", std::to_string(i), "--run", std::to_string(i)});
  }
  make_schema_018(dir.file("a.db"));
  const std::string a_bytes = slurp(dir.file("a.db"));
  std::vector<std::string> args = {
      "--log-level",    "off",        "compare",        "--db",
      dir.file("b.db"), "--baseline", dir.file("a.db"), "--keep-client-bound",
      "--format",       "json"};
  args.insert(args.end(), listed.begin(), listed.end());
  auto out = run_kvdrive(dir, args);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const json c = json::parse(out.output);
  EXPECT_EQ(c["a"], dir.file("a.db") + " runs 1, 2, 3, 4, 5, 6");
  EXPECT_EQ(c["b"], dir.file("b.db") + " runs 1, 2, 3, 4, 5, 6");
  EXPECT_TRUE(c["keep_client_bound"].get<bool>());
  for (const json& l : c["left_out"])
    EXPECT_EQ(l.get<std::string>().find("client-bound"), std::string::npos) << l;
  int judged = 0;
  for (const json& row : c["comparisons"]) {
    if (row["figure"] != "req/s") continue;
    ++judged;
    EXPECT_EQ(row["verdict"], "faster") << row.dump();
    ASSERT_FALSE(row["low"].is_null()) << row.dump();
    EXPECT_GT(row["low"].get<double>(), 1.0) << row.dump();
  }
  EXPECT_EQ(judged, 2) << c.dump(1);  // load set, read get
  EXPECT_EQ(slurp(dir.file("a.db")), a_bytes) << "the baseline file was written";
  auto a = kv::Database::open_read_only(dir.file("a.db"));
  EXPECT_EQ(a.user_version(), 18);
}

}  // namespace
