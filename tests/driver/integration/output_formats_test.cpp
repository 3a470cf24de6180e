// The machine outputs of #19: --percentiles, the JSON document (--json-out, report --format
// json) checked field by field against docs/output-fields.md, and CSV one file per table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kvbench/version.hpp"
#include "kvdrive_test_util.hpp"
#include "output_fields.hpp"

namespace {
using namespace kv::test;
using nlohmann::json;

std::vector<std::string> csv_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  std::string l;
  while (std::getline(in, l)) lines.push_back(l);
  return lines;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    auto c = s.find(',', start);
    out.push_back(s.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) return out;
    start = c + 1;
  }
}

TEST(OutputFormats, JsonDocumentHasEveryDocumentedFieldAndCsvOneFilePerTable) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("r.db");
  auto first = run_kvdrive(dir, {"--log-level", "off", "run", "--db", db, "--target", redis.uri(),
                                 "--keys", "3000", "--threads", "2", "--percentiles",
                                 "99.99,50,90,99,99.9", "--json-out", dir.file("a.json")});
  ASSERT_EQ(first.exit_code, 0) << first.output;
  // The summary's per-phase table shows the asked percentiles, in order (column widths follow
  // the values, so only the order is checked).
  size_t at = first.output.find("mean ms");
  for (const char* label :
       {" p50 ms", " p90 ms", " p99 ms", " p99.9 ms", " p99.99 ms", " max ms"}) {
    ASSERT_NE(at, std::string::npos) << first.output;
    at = first.output.find(label, at);
    EXPECT_NE(at, std::string::npos) << label << "\n" << first.output;
  }
  auto second = run_kvdrive(dir, {"--log-level", "off", "run", "--db", db, "--target", redis.uri(),
                                  "--keys", "2000", "--threads", "2"});
  ASSERT_EQ(second.exit_code, 0) << second.output;

  const auto docs = documented_fields();
  for (const char* t : {"runs", "metadata", "differences", "stores", "phases", "server", "hints",
                        "timeline", "process_samples", "host_samples", "events", "comparison"})
    EXPECT_FALSE(docs.count(t) == 0) << t;

  json a = json::parse(slurp(dir.file("a.json")));
  EXPECT_EQ(a["format"], "kvbench-results");
  EXPECT_EQ(a["format_version"], 1);
  EXPECT_EQ(a["percentiles"], json::parse("[50, 90, 99, 99.9, 99.99]"));
  ASSERT_EQ(a["runs"].size(), 1u);
  const json& run = a["runs"][0];
  const std::vector<std::string> pnames{"p50", "p90", "p99", "p999", "p9999"};
  expect_documented(
      run, docs.at("runs"), "runs",
      {"metadata", "stores", "phases", "parts", "steps", "server", "trace_curve", "hints",
       "searches", "search_steps", "timeline", "process_samples", "host_samples", "events"});
  EXPECT_TRUE(run["trace_curve"].empty());  // no --trace
  EXPECT_TRUE(run["searches"].empty());     // no --search
  EXPECT_EQ(run["status"], "completed");
  ASSERT_EQ(run["phases"].size(), 2u);
  for (const auto& p : run["phases"]) {
    expect_documented(p, expanded(docs.at("phases"), pnames), "phases");
    // Ascending, and never above the max.
    double prev = 0;
    for (const auto& n : pnames) {
      const double v = p["lat_" + n + "_us"].get<double>();
      EXPECT_GE(v, prev) << n;
      EXPECT_LE(v, p["lat_max_us"].get<double>()) << n;
      prev = v;
    }
  }
  EXPECT_EQ(run["phases"][0]["ops"], 3000);
  // Where the time went: per phase and op, at each percentile, the max and the mean.
  ASSERT_EQ(run["parts"].size(), 2u * (pnames.size() + 2));
  for (const auto& r : run["parts"]) expect_documented(r, docs.at("parts"), "parts");
  EXPECT_EQ(run["parts"][0]["at"], "p50");
  EXPECT_EQ(run["parts"][4]["at"], "p99.99");
  EXPECT_EQ(run["parts"][5]["at"], "max");
  EXPECT_EQ(run["parts"][6]["at"], "mean");
  for (const auto& s : run["stores"]) expect_documented(s, docs.at("stores"), "stores");
  ASSERT_FALSE(run["timeline"].empty());
  for (const auto& s : run["timeline"])
    expect_documented(s, expanded(docs.at("timeline"), pnames), "timeline");
  int64_t timeline_ops = 0;
  for (const auto& s : run["timeline"]) timeline_ops += s["ops"].get<int64_t>();
  EXPECT_EQ(timeline_ops, 6000);
  for (const auto& h : run["hints"]) expect_documented(h, docs.at("hints"), "hints");
  ASSERT_FALSE(run["metadata"].empty());
  for (const auto& m : run["metadata"]) expect_documented(m, docs.at("metadata"), "metadata");
  for (const auto& e : run["events"]) expect_documented(e, docs.at("events"), "events");

  // The percentiles agree with the results file's own view where it has them.
  auto d = kv::open_results_db(db);
  auto s = d.prepare(
      "SELECT lat_p50_us, lat_p90_us, lat_p99_us, lat_p999_us FROM phase_summary "
      "WHERE run_id = 1 ORDER BY phase_id, op DESC");
  for (int i = 0; s.step(); ++i) {
    const json& p = run["phases"][static_cast<size_t>(i)];
    EXPECT_DOUBLE_EQ(p["lat_p50_us"].get<double>(), s.column_double(0));
    EXPECT_DOUBLE_EQ(p["lat_p90_us"].get<double>(), s.column_double(1));
    EXPECT_DOUBLE_EQ(p["lat_p99_us"].get<double>(), s.column_double(2));
    EXPECT_DOUBLE_EQ(p["lat_p999_us"].get<double>(), s.column_double(3));
  }

  // Two runs: one document, with the comparison.
  auto both = run_kvdrive(dir, {"--log-level", "off", "report", "--db", db, "--run", "1", "--run",
                                "2", "--format", "json"});
  ASSERT_EQ(both.exit_code, 0) << both.output;
  json doc;
  ASSERT_NO_THROW(doc = json::parse(both.output)) << both.output;
  ASSERT_EQ(doc["runs"].size(), 2u);
  EXPECT_EQ(doc["runs"][1]["run_id"], 2);
  EXPECT_EQ(doc["percentiles"], json::parse("[50, 90, 99, 99.9]"));
  ASSERT_EQ(doc["comparison"].size(), 2u);  // write and read of the one store
  for (const auto& c : doc["comparison"]) expect_documented(c, docs.at("comparison"), "comparison");
  EXPECT_EQ(doc["comparison"][0]["base_run_id"], 1);
  ASSERT_FALSE(doc["differences"].empty());  // --keys
  for (const auto& c : doc["differences"])
    expect_documented(c, docs.at("differences"), "differences");

  // CSV: one file per table, one header each, the JSON's names.
  std::filesystem::create_directory(dir.file("csv"));
  auto csv = run_kvdrive(dir, {"--log-level", "off", "report", "--db", db, "--run", "1", "--run",
                               "2", "--format", "csv", "--out", dir.file("csv")});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  for (const char* t : {"runs", "metadata", "stores", "phases", "parts", "trace_curve", "timeline",
                        "process_samples", "host_samples", "events", "comparison", "differences"}) {
    SCOPED_TRACE(t);
    auto lines = csv_lines(dir.file("csv/" + std::string(t) + ".csv"));
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(std::count(lines.begin(), lines.end(), lines[0]), 1);
    EXPECT_EQ(std::count(lines.begin(), lines.end(), ""), 0);
    std::vector<std::string> expected;
    const std::string name = t;
    if (name != "runs" && name != "comparison" && name != "differences")
      expected.push_back("run_id");
    for (const auto& f : expanded(docs.at(t), {"p50", "p90", "p99", "p999"}))
      if (!f.optional && !f.json_only) expected.push_back(f.name);
    EXPECT_EQ(split(lines[0]), expected);
  }
  EXPECT_EQ(csv_lines(dir.file("csv/steps.csv")).size(), 1u);  // no scenario run: the header
  // timeline: a line per driver second of both runs.
  EXPECT_EQ(static_cast<int64_t>(csv_lines(dir.file("csv/timeline.csv")).size()) - 1,
            query_int(d, "SELECT COUNT(*) FROM driver_seconds"));
  // One table on stdout.
  auto phases = run_kvdrive(dir, {"--log-level", "off", "report", "--db", db, "--format", "csv",
                                  "--percentiles", "50,99.99", "phases"});
  ASSERT_EQ(phases.exit_code, 0) << phases.output;
  EXPECT_EQ(phases.output.rfind("run_id,store,phase,op,ops,seconds,req_per_s,failed_per_s,"
                                "mib_per_s,lat_mean_us,lat_p50_us,lat_p9999_us,lat_max_us,",
                                0),
            0u)
      << phases.output;
  EXPECT_EQ(std::count(phases.output.begin(), phases.output.end(), '\n'), 5);  // header + 4
}

// A bad list is one line and exit 2, with nothing written.
TEST(OutputFormats, BadPercentileListsAndCsvUsageAreOneLineExit2) {
  TempDir dir;
  for (const char* bad : {"", "50,abc", "100", "0", "50,,99", "-1", "99.9999", "nan", "50;99"}) {
    SCOPED_TRACE(bad);
    auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", "redis://127.0.0.1:1",
                                 "--percentiles", bad});
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
    EXPECT_NE(out.output.find("--percentiles"), std::string::npos) << out.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
  }
  // A results file to report on.
  kv::open_results_db(dir.file("e.db"));
  for (std::vector<std::string> args : {std::vector<std::string>{"--format", "csv"},
                                        {"--format", "csv", "nope"},
                                        {"phases"},
                                        {"--out", dir.path()},
                                        {"--format", "csv", "--out", dir.file("no/such")},
                                        {"--format", "csv", "--out", dir.file("e.db")},
                                        {"--format", "csv", "--out", dir.path(), "phases"},
                                        {"--percentiles", "50,200"}}) {
    args.insert(args.begin(), {"report", "--db", dir.file("e.db")});
    auto out = run_kvdrive(dir, args);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
  }
}

// Run metadata: kvdrive's host and build, and each store's own settings, recorded with every run;
// comparing two runs names what differs.
TEST(OutputFormats, RunMetadataRecordsHostAndStoreSettingsAndComparisonNamesWhatDiffers) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached, {"-t", "3", "-m", "48", "-I", "2m"});
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  const std::string db = dir.file("r.db");
  auto set_maxmemory = [&](const std::string& v) {
    Process p({find_program("redis-cli"), "-p", std::to_string(redis.port()), "config", "set",
               "maxmemory", v},
              dir.file("cli.log"));
    EXPECT_EQ(p.wait(30'000), 0) << slurp(dir.file("cli.log"));
  };
  set_maxmemory("0");
  for (int run = 1; run <= 2; ++run) {
    if (run == 2) set_maxmemory("64mb");
    auto out = run_kvdrive(dir, {"--log-level", "off", "run", "--db", db, "--target", redis.uri(),
                                 "--target", memcached.uri(), "--keys", "500", "--threads", "1"});
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }
  auto d = kv::open_results_db(db);
  auto value = [&](int run, const std::string& scope, const std::string& name) {
    auto s = d.prepare(
        "SELECT m.value FROM run_metadata m LEFT JOIN targets t USING (target_id) "
        "WHERE m.run_id = ? AND COALESCE(t.protocol, 'client') = ? AND m.name = ?");
    s.bind(1, run).bind(2, scope).bind(3, name);
    EXPECT_TRUE(s.step()) << scope << " " << name;
    return s.is_null(0) ? std::string("NULL") : s.column_text(0);
  };
  EXPECT_EQ(value(1, "client", "kvbench_version"), kv::version());
  EXPECT_EQ(value(1, "client", "cpu_count"), std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)));
  EXPECT_GT(std::stoll(value(1, "client", "mem_total_kib")), 0);
  EXPECT_EQ(value(1, "client", "kernel").rfind("Linux ", 0), 0u);
  value(1, "client", "git_revision");  // recorded (NULL outside a git checkout)
  value(1, "client", "cpu_model");
  EXPECT_EQ(value(1, "redis", "maxmemory"), "0");
  EXPECT_EQ(value(2, "redis", "maxmemory"), "67108864");
  for (const char* n : {"save", "appendonly", "io-threads", "maxmemory-policy"})
    value(1, "redis", n);
  EXPECT_EQ(value(1, "memcached", "num_threads"), "3");
  EXPECT_EQ(value(1, "memcached", "maxbytes"), std::to_string(48 * 1024 * 1024));
  EXPECT_EQ(value(1, "memcached", "item_size_max"), std::to_string(2 * 1024 * 1024));

  // The report shows them, and the comparison names what differs (and only that).
  auto text = run_kvdrive(dir, {"report", "--db", db, "--run", "1", "--run", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("maxmemory=0, "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("num_threads=3"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("parameters and settings that differ"), std::string::npos);
  auto csv = run_kvdrive(dir, {"--log-level", "off", "report", "--db", db, "--run", "1", "--run",
                               "2", "--format", "csv", "differences"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  EXPECT_EQ(csv.output,
            "base_run_id,run_id,scope,name,base_value,value\n"
            "1,2,target 1,maxmemory,0,67108864\n")
      << csv.output;
}

// A table the run has no rows for is still a table: its header, so a script reading the CSV
// finds its columns (before, `report --format csv steps` printed nothing at all).
TEST(OutputFormats, ACsvTableWithoutRowsIsItsHeader) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("r.db");
  auto run = run_kvdrive(dir, {"--log-level", "off", "run", "--db", db, "--target", redis.uri(),
                               "--keys", "200", "--phases", "load", "--threads", "1"});
  ASSERT_EQ(run.exit_code, 0) << run.output;
  for (const char* table : {"steps", "searches", "search_steps"}) {
    SCOPED_TRACE(table);
    auto out = run_kvdrive(dir, {"report", "--db", db, "--format", "csv", table});
    ASSERT_EQ(out.exit_code, 0) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
    EXPECT_EQ(out.output.rfind("run_id,", 0), 0u) << out.output;
  }
  // No kvmon watched: the server table's kvmon columns are empty, kvdrive's own CPU is there.
  auto server = run_kvdrive(dir, {"report", "--db", db, "--format", "csv", "server"});
  ASSERT_EQ(server.exit_code, 0) << server.output;
  EXPECT_EQ(server.output.rfind("run_id,store,phase,load1,", 0), 0u) << server.output;
  // One file per table, the empty ones included, in a directory --out makes.
  const std::string out_dir = dir.file("csv");
  ASSERT_FALSE(std::filesystem::exists(out_dir));
  auto files = run_kvdrive(dir, {"report", "--db", db, "--format", "csv", "--out", out_dir});
  ASSERT_EQ(files.exit_code, 0) << files.output;
  const auto lines = csv_lines(out_dir + "/search_steps.csv");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("lat_p99_us"), std::string::npos) << lines[0];
}

// At a terminal (or with $COLUMNS) the end-of-run summary fits its width: headers wrapped, a
// table per store, columns left out in order and named with where to see them; piped without
// $COLUMNS it is the whole table, as `report` prints it.
TEST(OutputFormats, TheRunSummaryFitsTheTerminalsWidthAndSaysWhatItLeftOut) {
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer mc(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(mc);
  TempDir dir;
  const std::string db = dir.file("r.db");
  auto lines_of = [](const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  };
  const std::vector<std::string> args = {
      "--log-level", "off",        "run",    "--db",      db,    "--target",
      redis.uri(),   "--target",   mc.uri(), "--keys",    "300", "--phases",
      "load,read",   "--duration", "1s",     "--threads", "1"};
  auto narrow = run_kvdrive(dir, args, 120'000, {"/usr/bin/env", "COLUMNS=80"});
  ASSERT_EQ(narrow.exit_code, 0) << narrow.output;
  for (const auto& l : lines_of(narrow.output)) EXPECT_LE(l.size(), 80u) << l;
  EXPECT_NE(narrow.output.find(redis.uri() + ":\n"), std::string::npos) << narrow.output;
  EXPECT_NE(narrow.output.find(mc.uri() + ":\n"), std::string::npos) << narrow.output;
  EXPECT_NE(narrow.output.find("left out to fit 80 columns: "), std::string::npos) << narrow.output;
  EXPECT_NE(narrow.output.find("--run 1"), std::string::npos) << narrow.output;
  // The headline figures stay: each store's read row with its p99.
  size_t read_rows = 0;
  for (const auto& l : lines_of(narrow.output))
    if (l.rfind("read   get", 0) == 0 && l.find("completed") != std::string::npos) ++read_rows;
  EXPECT_EQ(read_rows, 2u) << narrow.output;

  auto wide = run_kvdrive(dir, args, 120'000, {"/usr/bin/env", "-u", "COLUMNS"});
  ASSERT_EQ(wide.exit_code, 0) << wide.output;
  EXPECT_EQ(wide.output.find("left out to fit"), std::string::npos) << wide.output;
  size_t longest = 0;
  for (const auto& l : lines_of(wide.output)) longest = std::max(longest, l.size());
  EXPECT_GT(longest, 120u) << wide.output;

  // A search's summary too, the objective's percentile kept (p50 is otherwise left out early).
  auto search = run_kvdrive(
      dir,
      {"--log-level", "off",      "run",      "--db",      db,           "--target", redis.uri(),
       "--keys",      "300",      "--phases", "load,read", "--duration", "1s",       "--threads",
       "1",           "--search", "--slo",    "p50=50ms",  "--rates",    "1000,2000"},
      120'000, {"/usr/bin/env", "COLUMNS=60"});
  ASSERT_EQ(search.exit_code, 0) << search.output;
  for (const auto& l : lines_of(search.output)) EXPECT_LE(l.size(), 60u) << l;
  // In the steps table's header, which may wrap ("p50" over "ms"): the line starting "step"
  // or the one above it.
  {
    const auto lines = lines_of(search.output);
    bool kept = false;
    for (size_t i = 0; i < lines.size(); ++i)
      if (lines[i].rfind("step ", 0) == 0 && lines[i].find("verdict") != std::string::npos)
        kept = kept || lines[i].find("p50") != std::string::npos ||
               (i > 0 && lines[i - 1].find("p50") != std::string::npos);
    EXPECT_TRUE(kept) << search.output;
  }
  EXPECT_NE(search.output.find("client-bound"), std::string::npos) << search.output;
  // The report's phase rows of a search name their step (two phases "read" otherwise).
  auto csv = run_kvdrive(dir, {"report", "--db", db, "--run", "3", "--format", "csv", "phases"});
  ASSERT_EQ(csv.exit_code, 0) << csv.output;
  const auto rows = lines_of(csv.output);
  ASSERT_EQ(rows.size(), 4u) << csv.output;  // header, load, step 1, step 2
  EXPECT_EQ(rows[0].rfind("run_id,store,phase,op,search_step,ops,", 0), 0u) << rows[0];
  EXPECT_NE(rows[1].find(",load,set,,"), std::string::npos) << rows[1];
  EXPECT_NE(rows[2].find(",read,get,1,"), std::string::npos) << rows[2];
  EXPECT_NE(rows[3].find(",read,get,2,"), std::string::npos) << rows[3];
}

}  // namespace
