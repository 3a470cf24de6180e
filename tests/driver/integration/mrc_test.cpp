// kvdrive mrc on generated traces: a zstd-compressed trace whose keys are all followed gives the
// exact LRU curve (tests/support/exact_lru.hpp) in JSON; text and CSV say the same.
#include <gtest/gtest.h>
#include <zstd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "exact_lru.hpp"
#include "kvdrive_test_util.hpp"
#include "workload/trace.hpp"

namespace {
using namespace kv::test;
using nlohmann::json;

TEST(Mrc, ACompressedTraceWithEveryKeyFollowedGivesTheExactCurve) {
  TempDir dir;
  kv::drive::TraceSpec spec;
  spec.requests = 20'000;
  spec.keys = 600;
  spec.zipf = 0.9;
  spec.write_fraction = 0.2;
  spec.value_min = 50;
  spec.value_max = 5'000;
  std::ostringstream text;
  kv::drive::write_trace(spec, text);
  const std::string plain = text.str();
  std::string packed(ZSTD_compressBound(plain.size()), '\0');
  packed.resize(ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3));
  std::ofstream(dir.file("t.csv.zst"), std::ios::binary) << packed;
  auto out = run_kvdrive(
      dir, {"--log-level", "off", "mrc", "--trace", dir.file("t.csv.zst"), "--format", "json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const json c = json::parse(out.output);
  const auto requests = requests_of_trace(plain);
  EXPECT_EQ(c["requests"], 20'000);
  EXPECT_EQ(c["sampling_rate"], 1.0);
  EXPECT_LE(c["keys"].get<double>(), 600);
  ASSERT_EQ(c["curve"].size(), 13u);
  for (const json& p : c["curve"]) {
    const auto objects = p["objects"].get<uint64_t>();
    EXPECT_NEAR(p["objects_miss_ratio"].get<double>(), exact_miss_ratio(requests, objects, false),
                1e-9)
        << p.dump();
    EXPECT_NEAR(p["bytes_miss_ratio"].get<double>(),
                exact_miss_ratio(requests, p["bytes"].get<uint64_t>(), true), 0.005)
        << p.dump();
  }
  // The smallest cache misses more than the whole working set.
  EXPECT_GT(c["curve"][0]["objects_miss_ratio"].get<double>(),
            c["curve"][12]["objects_miss_ratio"].get<double>());
  auto csv = run_kvdrive(
      dir, {"--log-level", "off", "mrc", "--trace", dir.file("t.csv.zst"), "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output.rfind("fraction,objects,objects_miss_ratio,bytes,bytes_miss_ratio\n", 0), 0u)
      << csv.output;
  auto shown = run_kvdrive(dir, {"mrc", "--trace", dir.file("t.csv.zst"), "--max-keys", "100"});
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find("100 keys followed"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("20,000 requests"), std::string::npos) << shown.output;
}

// --db keeps the curve in a results file as a run of its own: the same rows the JSON gives, the
// trace's totals as its metadata; the text report shows the curve, and a second curve is a
// second run beside the first (nothing overwritten).
TEST(Mrc, DbKeepsTheCurveAsARunOfItsOwn) {
  TempDir dir;
  kv::drive::TraceSpec spec;
  spec.requests = 5'000;
  spec.keys = 400;
  std::ostringstream text;
  kv::drive::write_trace(spec, text);
  std::ofstream(dir.file("t.csv")) << text.str();
  const std::string db = dir.file("r.db");
  auto out = run_kvdrive(dir, {"--log-level", "off", "mrc", "--trace", dir.file("t.csv"), "--db",
                               db, "--name", "sizing", "--format", "json"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const json c = json::parse(out.output);
  auto again = run_kvdrive(dir, {"mrc", "--trace", dir.file("t.csv"), "--db", db});
  ASSERT_EQ(again.exit_code, 0) << again.output;
  auto r = kv::open_results_db(db);
  EXPECT_EQ(query_int(r, "SELECT count(*) FROM runs WHERE status = 'completed'"), 2);
  EXPECT_EQ(query_text(r, "SELECT name FROM runs WHERE run_id = 1"), "sizing");
  EXPECT_EQ(query_int(r, "SELECT count(*) FROM trace_curves WHERE run_id = 1"),
            static_cast<int64_t>(c["curve"].size()));
  EXPECT_NEAR(query_double(r,
                           "SELECT objects_miss_ratio FROM trace_curves WHERE run_id = 1 AND "
                           "fraction = 0.5"),
              c["curve"][7]["objects_miss_ratio"].get<double>(), 1e-12);
  EXPECT_EQ(
      query_int(r, "SELECT value FROM run_metadata WHERE run_id = 1 AND name = 'trace_reads'"),
      c["reads"].get<int64_t>());
  auto report = run_kvdrive(dir, {"report", "--db", db, "--run", "1"});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("the trace's LRU miss ratio by cache size"), std::string::npos)
      << report.output;
  EXPECT_EQ(report.output.find("no measurements"), std::string::npos) << report.output;
}

}  // namespace
