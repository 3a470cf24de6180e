// How a capacity search is shown (#17's report side): `kvdrive report` in text, JSON, CSV and
// HTML from a real short search against the fake store, whose 2 ms per reply on four
// connections caps it at 2,000 req/s: a step at 300 req/s passes (15 % busy: slack for a
// loaded machine), one at 20,000 fails. Also
// `report --run A --run B --html`, which overlays the two runs' per-second curves. No root, no
// real server: label integration (it runs the binaries for ~10 s).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "fake_store.hpp"
#include "kvdrive_test_util.hpp"
#include "output_fields.hpp"

namespace kv::test {
namespace {
using nlohmann::json;

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SearchReport, TextJsonCsvAndHtmlShowTheAnswerTheCurveAndTheFailedStep) {
  FakeStore store;
  FakeStore::Behavior slow;
  slow.delay_us = 2000;
  store.set_behavior_all(slow);
  TempDir dir;
  const std::string db = dir.file("search.db");
  // The client's limits off (a loaded machine must not make a step invalid): this test is
  // about how the steps are shown, not how they are judged.
  Outcome run = run_kvdrive(dir, {"--log-level",
                                  "warn",
                                  "run",
                                  "--db",
                                  db,
                                  "--target",
                                  store.redis_uri(),
                                  "--keys",
                                  "200",
                                  "--threads",
                                  "1",
                                  "--connections",
                                  "4",
                                  "--search",
                                  "--slo",
                                  "p90=200ms",
                                  "--min-achieved",
                                  "0.9",
                                  "--rates",
                                  "300,20000",
                                  "--duration",
                                  "2s",
                                  "--warmup",
                                  "1s",
                                  "--max-client-cpu",
                                  "1",
                                  "--max-slip",
                                  "1h"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Database d = Database::open(db);
  ASSERT_EQ(query_text(d, "SELECT group_concat(verdict, ',') FROM search_steps"), "pass,fail")
      << run.output;
  const std::string limit = query_text(d, "SELECT limit_reason FROM search_steps WHERE ordinal=1");

  // Text: the curve, the validity table, the answer and the step that limited it.
  Outcome text = run_kvdrive(dir, {"report", "--db", db});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  const std::string& t = text.output;
  EXPECT_NE(t.find("capacity search: " + store.redis_uri() + " (objective p90=200ms)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("offered req/s  achieved req/s"), std::string::npos) << t;
  EXPECT_NE(t.find("p90 ms"), std::string::npos) << t;
  EXPECT_NE(t.find("client thread cpu %  on cpu or runnable %"), std::string::npos) << t;
  EXPECT_NE(t.find("validity: a step is client-bound"), std::string::npos) << t;
  EXPECT_NE(t.find("used more than 100 % of a core"), std::string::npos) << t;  // as recorded
  EXPECT_NE(t.find("maximum compliant rate: 300 req/s (limited by " + limit +
                   " at the next step, 20,000 req/s"),
            std::string::npos)
      << t;
  EXPECT_EQ(count_of(t, "capacity search:"), 1u) << t;

  // JSON: searches and search_steps, every documented field and no other.
  Outcome js = run_kvdrive(dir, {"report", "--db", db, "--format", "json"});
  ASSERT_EQ(js.exit_code, 0) << js.output;
  json doc;
  ASSERT_NO_THROW(doc = json::parse(js.output)) << js.output;
  const json& r = doc["runs"][0];
  const auto docs = documented_fields();
  ASSERT_EQ(r["searches"].size(), 1u);
  const json& s = r["searches"][0];
  expect_documented(s, docs.at("searches"), "searches");
  EXPECT_EQ(s["max_compliant_rate"], 300);
  EXPECT_EQ(s["limiting_step"], 2);
  EXPECT_EQ(s["limiting_rate"], 20000);
  EXPECT_EQ(s["limit_reason"], limit);
  EXPECT_EQ(s["slo"], "p90=200ms");
  EXPECT_EQ(s["steps"], 2);
  ASSERT_EQ(r["search_steps"].size(), 2u);
  for (const auto& st : r["search_steps"]) expect_documented(st, docs.at("search_steps"), "steps");
  const json &pass = r["search_steps"][0], &fail = r["search_steps"][1];
  EXPECT_EQ(pass["verdict"], "pass");
  EXPECT_EQ(pass["is_max_compliant"], 1);
  EXPECT_EQ(pass["client_bound"], 0);
  EXPECT_EQ(fail["verdict"], "fail");
  EXPECT_EQ(fail["is_max_compliant"], 0);
  // Four connections at 2 ms a reply cannot answer 20,000 req/s.
  EXPECT_LT(fail["achieved_rate"].get<double>(), 2400) << fail;
  EXPECT_LT(fail["achieved_fraction"].get<double>(), 0.9) << fail;
  EXPECT_GT(fail["lat_p90_us"].get<double>(), pass["lat_p90_us"].get<double>()) << r;
  EXPECT_EQ(fail["requests"].get<int64_t>(),
            query_int(d, "SELECT requests FROM search_steps WHERE ordinal = 1"));
  // The objective as recorded with the run.
  EXPECT_EQ(r["parameters"]["search"]["slo"][0]["max_us"], 200000);
  EXPECT_EQ(r["parameters"]["search"]["rates"], json::parse("[300, 20000]"));

  // CSV: the two tables, the JSON's names.
  Outcome csv = run_kvdrive(dir, {"report", "--db", db, "--format", "csv", "search_steps"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("run_id,store,step,offered_rate,achieved_rate,", 0), 0u) << csv.output;
  EXPECT_EQ(count_of(csv.output, "\n"), 3u) << csv.output;  // header + 2 steps

  // HTML: the curve as SVG with the objective as a line and the knee marked, each step's dot
  // coloured by its verdict, and the two tables.
  Outcome html = run_kvdrive(dir, {"report", "--db", db, "--html", dir.file("r.html")});
  ASSERT_EQ(html.exit_code, 0) << html.output;
  const std::string h = slurp(dir.file("r.html"));
  EXPECT_NE(h.find("<h3>Capacity search on " + store.redis_uri()), std::string::npos);
  EXPECT_NE(h.find("maximum compliant rate: 300 req/s"), std::string::npos);
  EXPECT_NE(h.find(">objective p90 ≤ 200ms</text>"), std::string::npos);
  EXPECT_NE(h.find("stroke=\"#c0392b\""), std::string::npos);         // the objective's line
  EXPECT_NE(h.find(">max compliant 300 req/s<"), std::string::npos);  // the knee
  EXPECT_EQ(count_of(h, "<circle cx=\"") > 0, true);
  EXPECT_NE(h.find("fill=\"#2a9d4b\""), std::string::npos);  // a passing step's dot
  EXPECT_NE(h.find("fill=\"#e67e22\""), std::string::npos);  // the failing one's
  EXPECT_NE(h.find("<b>Validity</b>"), std::string::npos);
  EXPECT_NE(h.find(">client-bound</th>"), std::string::npos);

  // Two runs: their per-second curves overlaid in the comparison.
  Outcome plain = run_kvdrive(dir, {"--log-level", "warn", "run", "--db", db, "--target",
                                    store.redis_uri(), "--keys", "200", "--threads", "1"});
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  Outcome both = run_kvdrive(
      dir, {"report", "--db", db, "--run", "1", "--run", "2", "--html", dir.file("both.html")});
  ASSERT_EQ(both.exit_code, 0) << both.output;
  const std::string b = slurp(dir.file("both.html"));
  const size_t overlay = b.find("<h3>Per second, runs overlaid</h3>");
  ASSERT_NE(overlay, std::string::npos);
  const std::string charts = b.substr(overlay);
  for (const char* name : {"Throughput per second, runs overlaid", "Latency p99 per second"})
    EXPECT_NE(charts.find(name), std::string::npos) << name;
  for (const std::string run_name : {"run 1 ", "run 2 "})
    EXPECT_NE(charts.find(">" + run_name + store.redis_uri() + " set</text>"), std::string::npos)
        << run_name;
  EXPECT_NE(charts.find(">run 1 " + store.redis_uri() + " get</text>"), std::string::npos);
  EXPECT_NE(charts.find("<polyline"), std::string::npos);
}

}  // namespace
}  // namespace kv::test
