#include "workload/scenario.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "workload/workload_options.hpp"

namespace {
using namespace kv::drive;

TEST(Scenario, DefaultsStepsAndOverrides) {
  auto s = parse_scenario("t", R"(# a comment
description = two sizes
keys = 1000
threads = 4
[step small]
value-size = 20
[step big]
value-size = 2M
threads = 2
)");
  EXPECT_EQ(s.description, "two sizes");
  ASSERT_EQ(s.steps.size(), 2u);
  auto steps = expand_scenario(s, WorkloadSpec{}, {{"threads", "3"}}, 1.0);
  EXPECT_EQ(steps[0].name, "small");
  EXPECT_EQ(steps[0].workload.values.largest(), 20u);
  EXPECT_EQ(steps[1].workload.values.largest(), 2u << 20);
  EXPECT_EQ(steps[0].workload.threads, 3);  // the command line wins
  EXPECT_EQ(steps[1].workload.threads, 3);
  EXPECT_EQ(steps[1].workload.keys, 1000u);
}

TEST(Scenario, ScaleShrinksCountsButKeepsTheShape) {
  auto s = parse_scenario("t", "keys = 5M\nrequests = 1M\nduration = 60s\nthreads = 16\n");
  auto steps = expand_scenario(s, WorkloadSpec{}, {}, 0.001);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].workload.keys, 5000u);
  EXPECT_EQ(steps[0].workload.requests, 1000u);
  EXPECT_EQ(steps[0].workload.duration_us, 1'000'000);  // at least a second
  EXPECT_EQ(steps[0].workload.threads, 16);
  auto tiny = expand_scenario(s, WorkloadSpec{}, {}, 1e-6);
  EXPECT_EQ(tiny[0].workload.keys, 16u);  // at least one key per thread
}

TEST(Scenario, ErrorsNameTheLine) {
  struct Case {
    const char* text;
    const char* mentions;
  } cases[] = {
      {"keys = 10\nbogus = 1\n", "line 2"},  {"keys = ten\n", "--keys"},
      {"[stepx]\n", "expected [step NAME]"}, {"[step a]\n[step a]\n", "twice"},
      {"just words\n", "option = value"},    {"[step a/b]\n", "without '/'"},
      {"value-size = 0\n", "value size"},
  };
  for (const auto& c : cases) {
    try {
      parse_scenario("bad", c.text);
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.mentions), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("scenario bad"), std::string::npos) << e.what();
    }
  }
}

TEST(Scenario, EveryShippedScenarioParsesAndExpands) {
  ASSERT_GE(shipped_scenarios().size(), 5u);
  for (const auto& e : shipped_scenarios()) {
    auto s = parse_scenario(e.name, e.text);
    EXPECT_FALSE(s.description.empty()) << e.name;
    auto steps = expand_scenario(s, WorkloadSpec{}, {}, 1.0);
    EXPECT_FALSE(steps.empty()) << e.name;
  }
  EXPECT_EQ(load_scenario("value-size-sweep").steps.size(), 13u);
  EXPECT_THROW(load_scenario("no-such-scenario"), std::invalid_argument);
}

TEST(WorkloadOptions, CombinationsAreChecked) {
  WorkloadSpec w;
  set_workload_option(w, "rate", "100");
  set_workload_option(w, "pipeline", "4");
  EXPECT_NO_THROW(check_workload(w));  // rate mode paces pipelines too
  WorkloadSpec v;
  set_workload_option(v, "keys", "3");
  set_workload_option(v, "threads", "4");
  EXPECT_THROW(check_workload(v), std::invalid_argument);
  EXPECT_THROW(set_workload_option(v, "ttl", "1.5s"), std::invalid_argument);
  EXPECT_THROW(set_workload_option(v, "nope", "1"), std::invalid_argument);
  EXPECT_THROW(set_workload_option(v, "hit-rate", "1.5"), std::invalid_argument);
  // A warm-up as long as the duration: refused where it is within it, taken where it is
  // added before it (a --search step).
  WorkloadSpec u;
  set_workload_option(u, "duration", "1s");
  set_workload_option(u, "warmup", "1s");
  EXPECT_THROW(check_workload(u), std::invalid_argument);
  EXPECT_NO_THROW(check_workload(u, true));
}

// Each message names the option and the whole value as typed.
TEST(WorkloadOptions, RefusalsNameTheOptionAndTheValue) {
  struct Case {
    const char* option;
    std::string value;
    const char* mentions;
  } cases[] = {
      {"keys", "0", "invalid --keys '0': must be at least 1"},
      {"ratio", "1:", "invalid --ratio '1:'"},
      {"ratio", ":1", "invalid --ratio ':1'"},
      {"ratio", "99999999999999999999:1", "invalid --ratio '99999999999999999999:1'"},
      {"rate", "2e9", "expected a number from 0 to 1e+09"},
      {"hit-rate", "nan", "expected a number from 0 to 1"},
      {"key-prefix", "a b", "no spaces or control characters"},
      {"key-prefix", "a\r", "no spaces or control characters"},
      {"key-prefix", std::string(201, 'k'), "longer than 200 bytes"},
  };
  for (const auto& c : cases) {
    WorkloadSpec w;
    try {
      set_workload_option(w, c.option, c.value);
      ADD_FAILURE() << "accepted --" << c.option << " " << c.value;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(c.mentions), std::string::npos) << e.what();
    }
  }
  WorkloadSpec w;
  set_workload_option(w, "key-prefix", "");  // keys are then the bare numbers
  set_workload_option(w, "key-prefix", std::string(200, 'k'));
  set_workload_option(w, "ratio", "0:1");
  EXPECT_EQ(w.ratio_sets, 0u);
  EXPECT_EQ(w.ratio_gets, 1u);
}

TEST(Scenario, ErrorsOfAStepNameTheScenarioAndTheStep) {
  Scenario s = parse_scenario("mine.scenario", "[step small]\nkeys = 3\nthreads = 4\n");
  try {
    expand_scenario(s, WorkloadSpec{}, {}, 1.0);
    ADD_FAILURE() << "threads above keys accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("scenario mine.scenario, step small: --threads", 0), 0u)
        << e.what();
  }
}

}  // namespace
