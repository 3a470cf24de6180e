// The Grafana dashboards of packaging/grafana/: valid JSON, every SQL query of the results-file
// dashboard runs on a real results file (a short kvdrive run against the fake store, watched by
// the real kvmon), and every metric the Prometheus dashboard asks for is one kvmon serves.
// Needs no real server.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "fake_store.hpp"
#include "kvdrive_test_util.hpp"
#include "metrics_text.hpp"

namespace kv::test {
namespace {

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";
const std::string kDir = std::string(KV_SOURCE_DIR) + "/packaging/grafana/";

nlohmann::json load(const std::string& name) {
  return nlohmann::json::parse(slurp(kDir + name));  // throws on invalid JSON
}

void expect_dashboard_shape(const nlohmann::json& d) {
  EXPECT_TRUE(d.at("title").is_string());
  EXPECT_TRUE(d.at("uid").is_string());
  EXPECT_FALSE(d.at("panels").empty());
  std::set<int> ids;
  for (const auto& p : d.at("panels")) {
    EXPECT_TRUE(ids.insert(p.at("id").get<int>()).second) << "duplicate panel id " << p.at("id");
    EXPECT_FALSE(p.at("targets").empty()) << p.at("title");
    const auto& g = p.at("gridPos");
    EXPECT_LE(g.at("x").get<int>() + g.at("w").get<int>(), 24) << p.at("title");
  }
}

TEST(GrafanaDashboards, EverySqlQueryRunsOnARealResultsFile) {
  FakeStore store;
  TempDir dir;
  const std::string db_path = dir.file("r.db");
  // kvmon finds the fake store's process (this test) by its port, as it would a real store.
  Process kvmon({kKvmon, "--db", db_path, "--port", std::to_string(store.port()), "--interval",
                 "200ms", "--flush-interval", "1s"},
                dir.file("kvmon.log"));
  ASSERT_TRUE(wait_for_value(db_path, "SELECT COUNT(*) FROM process_samples"))
      << slurp(dir.file("kvmon.log"));
  auto out =
      run_kvdrive(dir, {"run", "--db", db_path, "--target", store.redis_uri(), "--keys", "500",
                        "--phases", "load,read", "--duration", "2s", "--threads", "1"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  kvmon.signal(SIGTERM);
  ASSERT_EQ(kvmon.wait(30'000), 0) << slurp(dir.file("kvmon.log"));

  const nlohmann::json d = load("kvbench-results-sqlite.json");
  expect_dashboard_shape(d);
  auto db = kv::Database::open(db_path);
  const std::string run = std::to_string(query_int(db, "SELECT MAX(run_id) FROM runs"));
  auto bind = [&](std::string sql) {
    for (const auto& [var, value] : {std::pair<std::string, std::string>{"${run}", run},
                                     {"$run", run},
                                     {"$__from", "0"},
                                     {"$__to", "4102444800000"}}) {
      for (size_t p; (p = sql.find(var)) != std::string::npos;) sql.replace(p, var.size(), value);
    }
    EXPECT_EQ(sql.find('$'), std::string::npos) << "an unknown variable in\n" << sql;
    return sql;
  };
  std::vector<std::string> queries;
  for (const auto& v : d.at("templating").at("list"))
    if (v.at("type") == "query") queries.push_back(v.at("query").get<std::string>());
  int panels = 0;
  for (const auto& p : d.at("panels")) {
    ++panels;
    EXPECT_EQ(p.at("datasource").at("type"), "frser-sqlite-datasource");
    for (const auto& t : p.at("targets")) {
      EXPECT_EQ(t.at("rawQueryText"), t.at("queryText"));
      queries.push_back(t.at("rawQueryText").get<std::string>());
    }
  }
  EXPECT_GE(panels, 10);
  int with_rows = 0;
  for (const std::string& q : queries) {
    SCOPED_TRACE(q);
    int rows = 0;
    try {
      auto st = db.prepare(bind(q));
      while (st.step()) ++rows;
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
    if (rows > 0) ++with_rows;
  }
  // Every query but the events of the run (none here) has rows from this run.
  EXPECT_GE(with_rows, static_cast<int>(queries.size()) - 1) << out.output;

  // The latency lines are per store, phase and op (by op alone, two stores or phases would
  // merge into one line); the host panel's swap bytes have their own axis beside load.
  bool latency_seen = false, swap_axis = false;
  for (const auto& p : d.at("panels")) {
    if (p.at("title") == "Latency p50 / p99 / p99.9") {
      latency_seen = true;
      std::set<std::string> series;
      auto st = db.prepare(bind(p.at("targets")[0].at("rawQueryText").get<std::string>()));
      while (st.step()) series.insert(st.column_text(1));
      EXPECT_EQ(series, (std::set<std::string>{store.redis_uri() + " load set",
                                               store.redis_uri() + " read get"}));
    }
    if (p.at("title") == "Host load and swap") {
      const std::string overrides = p.at("fieldConfig").at("overrides").dump();
      swap_axis = overrides.find("host_swap_used_bytes") != std::string::npos &&
                  overrides.find("\"bytes\"") != std::string::npos &&
                  overrides.find("axisPlacement") != std::string::npos;
    }
  }
  EXPECT_TRUE(latency_seen);
  EXPECT_TRUE(swap_axis);
}

TEST(GrafanaDashboards, ThePrometheusDashboardAsksOnlyForMetricsKvmonServes) {
  const nlohmann::json d = load("kvmon-prometheus.json");
  expect_dashboard_shape(d);
  // Every family kvmon can serve: a page with every value known.
  kv::mon::MetricsRegistry reg({"name:redis-server"}, 100, 4096);
  kv::mon::Batch b;
  kv::mon::InstanceRecord r;
  r.key = {1, 1};
  r.selector = "name:redis-server";
  r.started_ts_us = 1;
  b.new_instances.push_back(r);
  ProcessSample s;
  s.key = {1, 1};
  for (const auto& f : kProcessFields) {
    if (auto* i = std::get_if<OptInt ProcessSample::*>(&f.member)) s.** i = 1;
    if (auto* x = std::get_if<OptReal ProcessSample::*>(&f.member)) s.** x = 1;
  }
  b.processes.push_back(s);
  HostSample h;
  for (const auto& f : kHostFields) {
    if (auto* i = std::get_if<OptInt HostSample::*>(&f.member)) h.** i = 1;
    if (auto* x = std::get_if<OptReal HostSample::*>(&f.member)) h.** x = 1;
  }
  h.disks.push_back(DiskStat{"vda", 1, 1, 1, 1, 1});
  b.host = h;
  reg.update(b);
  const std::string page = reg.render(false, kv::mon::SelfUsage{1.0, 1, 1.0});
  std::set<std::string> served;
  const std::regex sample(R"(^([a-z0-9_]+)[{ ])");
  std::istringstream in(page);
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, sample)) served.insert(m[1]);
  }
  const std::regex metric(R"(\b((kvmon|process)_[a-z0-9_]+)\b)");
  int exprs = 0;
  for (const auto& p : d.at("panels")) {
    EXPECT_EQ(p.at("datasource").at("type"), "prometheus");
    for (const auto& t : p.at("targets")) {
      const std::string e = t.at("expr");
      ++exprs;
      for (std::sregex_iterator it(e.begin(), e.end(), metric), end; it != end; ++it) {
        EXPECT_TRUE(served.count((*it)[1])) << (*it)[1] << " in " << e << " is not served";
      }
    }
  }
  EXPECT_GE(exprs, 15);
  for (const auto& v : d.at("templating").at("list")) {
    if (v.at("type") != "query") continue;
    const std::string q = v.at("query").at("query");
    for (std::sregex_iterator it(q.begin(), q.end(), metric), end; it != end; ++it)
      EXPECT_TRUE(served.count((*it)[1])) << (*it)[1] << " in " << q;
  }
}

}  // namespace
}  // namespace kv::test
