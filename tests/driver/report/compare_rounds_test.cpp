// compare_rounds on rounds made up in the test: which rounds count, which targets and phases
// are paired, and what the table and JSON say.
#include "report/compare_rounds.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace {
using namespace kv::drive;

// A completed round of targets "a" (ordinal 0) and "b" (1), one read phase each, at these
// req/s and p50 (µs); p99 is twice the p50.
Round round_of(int n, double a_rps, double b_rps, double a_p50, double b_p50) {
  Round r;
  r.run_id = 100 + n;
  r.round = n;
  r.status = "completed";
  for (int t = 0; t < 2; ++t) {
    const double p50 = t ? b_p50 : a_p50;
    r.phases.push_back(RoundPhase{t,
                                  t ? "redis://b" : "redis://a",
                                  "redis",
                                  1,
                                  "read",
                                  "get",
                                  "completed",
                                  t ? b_rps : a_rps,
                                  {p50, 2 * p50}});
  }
  return r;
}

const FigureComparison* find(const RoundsComparison& c, const std::string& figure) {
  for (const auto& f : c.figures)
    if (f.figure == figure) return &f;
  return nullptr;
}

// Client-bound rounds are left out unless the client is what is compared; a run made once is
// named by its run id alone.
TEST(CompareRounds, ClientBoundRoundsCountOnlyWhenKept) {
  std::vector<Round> rounds;
  for (int n = 1; n <= 5; ++n) rounds.push_back(round_of(n, 1000, 1000, 100, 100));
  rounds[2].validity.client_bound = 1;
  rounds[2].round.reset();
  const RoundsComparison left = compare_targets(rounds, "runs", CompareSettings{});
  ASSERT_EQ(left.left_out.size(), 1u);
  EXPECT_EQ(left.left_out[0], "runs run 103: client-bound (a worker thread near a core)");
  EXPECT_EQ(find(left, "req/s")->a.size(), 4u);
  CompareSettings keep;
  keep.keep_client_bound = true;
  const RoundsComparison kept = compare_targets(rounds, "runs", keep);
  EXPECT_TRUE(kept.left_out.empty());
  EXPECT_EQ(find(kept, "req/s")->a.size(), 5u);
  // Said in the table's heading and the JSON.
  EXPECT_NE(comparison_table(kept, keep).notes_before.at(0).find("--keep-client-bound"),
            std::string::npos);
  EXPECT_EQ(comparison_table(left, CompareSettings{}).notes_before.at(0).find("client-bound"),
            std::string::npos);
  std::ostringstream json;
  print_comparison_json(kept, keep, json);
  EXPECT_TRUE(nlohmann::json::parse(json.str())["keep_client_bound"].get<bool>());
}

TEST(CompareRounds, EachTargetAgainstTheFirstAndUnfitRoundsLeftOutByName) {
  std::vector<Round> rounds;
  for (int n = 1; n <= 8; ++n)
    rounds.push_back(round_of(n, 1000 + n, 700 + n, 100 + n, 300 + n));  // B: slower
  rounds[1].validity.client_stalls = 2;
  rounds[4].status = "interrupted";
  rounds[5].phases[1].status = "failed";  // B's phase of round 6: that figure only
  const RoundsComparison c = compare_targets(rounds, "repeat group g", CompareSettings{});
  ASSERT_EQ(c.left_out.size(), 2u);
  EXPECT_EQ(c.left_out[0], "repeat group g round 2 (run 102): 2 seconds with a client stall");
  EXPECT_EQ(c.left_out[1], "repeat group g round 5 (run 105): interrupted");
  ASSERT_EQ(c.figures.size(), 3u);  // req/s, p50, p99 of the read phase's gets
  const FigureComparison* rps = find(c, "req/s");
  ASSERT_NE(rps, nullptr);
  EXPECT_EQ(rps->store, "redis://b");
  EXPECT_EQ(rps->against, "redis://a");
  EXPECT_EQ(rps->a, (std::vector<double>{1001, 1003, 1004, 1006, 1007, 1008}));
  EXPECT_EQ(rps->b, (std::vector<double>{701, 703, 704, 707, 708}));
  EXPECT_EQ(rps->verdict, kv::drive::compare::Verdict::slower);  // fewer req/s
  const FigureComparison* p50 = find(c, "p50");
  ASSERT_NE(p50, nullptr);
  EXPECT_EQ(p50->verdict, kv::drive::compare::Verdict::slower);  // higher latency
  EXPECT_FALSE(p50->higher_is_better);
}

TEST(CompareRounds, TwoSidesMatchTargetsByPositionAndProtocol) {
  std::vector<Round> a, b;
  for (int n = 1; n <= 5; ++n) {
    a.push_back(round_of(n, 1000, 1000, 100, 100));
    b.push_back(round_of(n, 1000 + n, 1000 - n, 100, 100));
  }
  for (auto& r : b) r.phases[1].protocol = "memcached";
  const RoundsComparison c = compare_sides(a, "repeat group x", b, "repeat group y", {});
  ASSERT_EQ(c.notes.size(), 1u);
  EXPECT_NE(c.notes[0].find("has no memcached target at its position"), std::string::npos)
      << c.notes[0];
  ASSERT_EQ(c.figures.size(), 3u);
  EXPECT_EQ(c.figures[0].store, "redis://a");
  EXPECT_EQ(c.figures[0].against, "redis://a");
  // req/s within 0.5 %: no detectable difference at 5 %; equal latencies likewise.
  for (const auto& f : c.figures)
    EXPECT_EQ(f.verdict, kv::drive::compare::Verdict::no_difference) << f.figure;
}

TEST(CompareRounds, TableAndJsonSayTheVerdictAndWhyNoneWithFewRounds) {
  std::vector<Round> rounds = {round_of(1, 1000, 900, 100, 100), round_of(2, 1000, 900, 100, 100)};
  const CompareSettings s;
  const RoundsComparison c = compare_targets(rounds, "runs 1, 2", s);
  const ReportTable t = comparison_table(c, s);
  ASSERT_EQ(t.rows.size(), 3u);
  ASSERT_EQ(t.keys.size(), t.rows[0].size());
  const auto col = [&](const std::string& key) {
    return static_cast<size_t>(std::find(t.keys.begin(), t.keys.end(), key) - t.keys.begin());
  };
  EXPECT_EQ(t.rows[0][col("verdict")].text, "indeterminate: too few rounds for a 95 % interval");
  EXPECT_EQ(t.rows[0][col("low")].text, "-");
  EXPECT_NEAR(*t.rows[0][col("ratio")].value, 0.9, 1e-12);
  std::ostringstream out;
  print_comparison_json(c, s, out);
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["comparisons"].size(), 3u);
  EXPECT_TRUE(j["comparisons"][0]["low"].is_null());
  EXPECT_EQ(j["comparisons"][0]["verdict"], "indeterminate");
  EXPECT_EQ(j["comparisons"][0]["b"], nlohmann::json::array({900, 900}));
}

}  // namespace
