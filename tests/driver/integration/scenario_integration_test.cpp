// Every shipped scenario, at a small scale, against real Redis and memcached.
#include <gtest/gtest.h>

#include "kvdrive_test_util.hpp"
#include "workload/scenario.hpp"

namespace {
using namespace kv::test;

struct ScenarioCase {
  const char* name;
  const char* scale;
  bool has_reads;
};

void PrintTo(const ScenarioCase& c, std::ostream* os) { *os << c.name << " x" << c.scale; }

class ShippedScenario : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ShippedScenario, RunsAgainstRedisAndMemcached) {
  const ScenarioCase& c = GetParam();
  StoreServer redis(StoreServer::Kind::redis);
  StoreServer memcached(StoreServer::Kind::memcached, {"-I", "4m"});  // 2 MB values
  KV_START_OR_SKIP(redis);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out = run_kvdrive(dir,
                         {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target",
                          memcached.uri(), "--scenario", c.name, "--scale", c.scale},
                         300'000);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, std::string("SELECT count(*) FROM runs WHERE status = 'completed' "
                                      "AND scenario = '") +
                              c.name + "'"),
            1);
  auto s = kv::drive::load_scenario(c.name);
  int64_t steps = static_cast<int64_t>(s.steps.size());
  EXPECT_EQ(query_int(db, "SELECT count(DISTINCT COALESCE(step, '')) FROM phases"), steps);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM step_summary WHERE write_req_per_s > 0"),
            2 * steps);
  if (c.has_reads) {
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM step_summary WHERE read_req_per_s > 0"),
              2 * steps);
  }
  EXPECT_EQ(query_int(db, "SELECT SUM(errors) FROM step_summary"), 0);
  // The stores counted what kvdrive counted.
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), driver_sum(db, "ops", "redis", "get"));
  std::string mstats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(mstats, "cmd_set"), driver_sum(db, "ops", "memcached", "set"));
  EXPECT_EQ(stat_value(mstats, "cmd_get"), driver_sum(db, "ops", "memcached", "get"));
  // The report prints one row per step.
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  for (const auto& step : s.steps) {
    if (!step.name.empty()) {
      EXPECT_NE(report.output.find("\n" + step.name + " "), std::string::npos) << step.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scaled, ShippedScenario,
                         ::testing::Values(ScenarioCase{"small-values", "0.002", true},
                                           ScenarioCase{"large-values", "0.002", true},
                                           ScenarioCase{"value-size-sweep", "0.2", true},
                                           ScenarioCase{"mixed-sizes", "0.002", true},
                                           ScenarioCase{"parallel-writers", "0.005", false}),
                         [](const auto& test_info) {
                           std::string n = test_info.param.name;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
