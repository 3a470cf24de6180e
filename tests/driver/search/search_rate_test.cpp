// The capacity search's logic with synthetic steps (no servers): growth, bisection, a
// failure that must repeat, a floor and a queue told apart, the client-bound stop, the printed
// result; a step's length; the search options' text.
#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "search/search.hpp"
#include "search_test_util.hpp"

namespace kv::drive {
namespace {

// Drives a search against a synthetic store that meets the objective up to `knee` req/s.
RateSearch search_against(const SearchOptions& s, double knee,
                          const std::function<bool(double)>& invalid = nullptr) {
  RateSearch search(s);
  int guard = 0;
  while (auto rate = search.next()) {
    StepVerdict v;
    if (invalid && invalid(*rate)) {
      v.verdict = Verdict::invalid;
      v.limit = "client-cpu";
      v.reason = "a kvdrive thread at 99 % of a core";
    } else if (*rate > knee) {
      v.verdict = Verdict::fail;
      v.limit = "p99";
      v.reason = "p99 3.000 ms > 1.000 ms";
    }
    search.record(*rate, v);
    EXPECT_LT(++guard, 100);
    if (guard >= 100) break;
  }
  return search;
}

TEST(RateSearch, GrowsGeometricallyThenBisectsToThePrecision) {
  auto s = options();
  s.start_rate = 1000;
  auto search = search_against(s, 5000);
  const auto& steps = search.steps();
  ASSERT_GE(steps.size(), 5u);
  EXPECT_EQ(steps[0].rate, 1000);
  EXPECT_EQ(steps[1].rate, 2000);
  EXPECT_EQ(steps[2].rate, 4000);
  EXPECT_EQ(steps[3].rate, 8000);  // first failure
  EXPECT_EQ(steps[4].rate, 6000);  // midpoint of 4000 and 8000
  const auto o = search.outcome();
  ASSERT_TRUE(o.max_compliant);
  ASSERT_TRUE(o.limiting_step);
  const double fail = steps[*o.limiting_step].rate;
  EXPECT_LE(*o.max_compliant, 5000);
  EXPECT_GT(fail, 5000);
  EXPECT_LE(fail - *o.max_compliant, s.precision * *o.max_compliant);
  EXPECT_EQ(o.stopped, "precision reached");
  const std::string text = describe_outcome(search);
  EXPECT_NE(
      text.find("maximum compliant rate: " + std::to_string(int(*o.max_compliant)).substr(0, 1)),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("limited by p99 at the next step"), std::string::npos) << text;
}

TEST(RateSearch, TheLimitingFailureMustRepeatAndANoisyOneIsOverruled) {
  auto s = options();
  s.start_rate = 1000;
  RateSearch search(s);
  bool noise_left = true;  // the first step at 4,000 fails (a stall), later ones pass
  for (int guard = 0; guard < 100; ++guard) {
    auto rate = search.next();
    if (!rate) break;
    StepVerdict v;
    if (*rate > 5000 || (*rate == 4000 && noise_left)) {
      noise_left = noise_left && *rate != 4000;
      v.verdict = Verdict::fail;
      v.limit = "p99";
      v.reason = "p99 3.000 ms > 1.000 ms";
    }
    search.record(*rate, v);
  }
  const auto o = search.outcome();
  ASSERT_TRUE(o.max_compliant);
  EXPECT_GT(*o.max_compliant, 4000);  // past the noisy failure
  EXPECT_LE(*o.max_compliant, 5000);
  ASSERT_TRUE(o.limiting_step);
  const double limit = search.steps()[*o.limiting_step].rate;
  int runs = 0;
  for (const auto& st : search.steps()) runs += st.rate == limit;
  EXPECT_EQ(runs, 2) << "the limiting failure is run twice";
}

TEST(RateSearch, AFirstStepThatFailsShrinksUntilOnePasses) {
  auto s = options();
  s.start_rate = 1000;
  auto search = search_against(s, 300);
  EXPECT_EQ(search.steps()[1].rate, 500);
  EXPECT_EQ(search.steps()[2].rate, 250);
  auto o = search.outcome();
  ASSERT_TRUE(o.max_compliant);
  EXPECT_LE(*o.max_compliant, 300);
  EXPECT_GE(*o.max_compliant, 300 * (1 - 2 * s.precision));
}

TEST(RateSearch, NothingCompliantDownToOneRequestPerSecond) {
  auto s = options();
  s.start_rate = 16;
  auto search = search_against(s, 0);
  auto o = search.outcome();
  EXPECT_FALSE(o.max_compliant);
  EXPECT_EQ(search.steps().back().rate, 1);
  EXPECT_EQ(o.stopped, "no rate down to 1 req/s met the objective");
  EXPECT_NE(describe_outcome(search).find("no compliant rate"), std::string::npos);
}

// Steps that fail p99 <= 1 ms with `p99_us(rate)`, passing at or below `knee`.
RateSearch search_latency(const SearchOptions& s, double knee,
                          const std::function<double(double)>& p99_us) {
  RateSearch search(s);
  int guard = 0;
  while (auto rate = search.next()) {
    StepMeasure m = step(*rate, *rate, *rate <= knee ? 500 : p99_us(*rate), 2);
    search.record(*rate, judge_step(s, m));
    if (++guard >= 100) break;
  }
  return search;
}

TEST(RateSearch, ALatencyThatHalvingTheRateDoesNotLowerIsAFloorNotACapacity) {
  auto s = options();
  s.start_rate = 1000;
  // 1.2 ms at every rate: the floor of the path, not a queue the store builds.
  auto search = search_latency(s, 0, [](double) { return 1200.0; });
  ASSERT_EQ(search.steps().size(), 2u) << "stops after the second failing step";
  EXPECT_EQ(search.steps()[1].rate, 500);
  auto o = search.outcome();
  EXPECT_FALSE(o.max_compliant);
  ASSERT_TRUE(o.floor_step);
  EXPECT_EQ(*o.floor_step, 1u);
  EXPECT_EQ(o.stopped, "a latency floor");
  const std::string text = describe_outcome(search);
  EXPECT_NE(text.find("no compliant rate: a latency floor, p99 1.2"), std::string::npos) << text;
  EXPECT_NE(text.find("the floor is in the wire"), std::string::npos) << text;
}

TEST(RateSearch, ALatencyThatFallsWithTheRateIsAQueueAndTheSearchGoesOn) {
  auto s = options();
  s.start_rate = 1000;
  // A queue: the latency falls with the rate (4 µs per req/s), so 250 req/s meets 1 ms.
  auto search = search_latency(s, 0, [](double rate) { return rate * 4.0; });
  auto o = search.outcome();
  EXPECT_FALSE(o.floor_step);
  ASSERT_TRUE(o.max_compliant);
  EXPECT_LE(*o.max_compliant, 250);
  EXPECT_GE(*o.max_compliant, 125);
}

TEST(RateSearch, AnInvalidStepStopsTheSearchAndSaysClientBound) {
  auto s = options();
  s.start_rate = 1000;
  auto search = search_against(s, 1e9, [](double r) { return r >= 8000; });
  EXPECT_EQ(search.steps().size(), 4u);
  auto o = search.outcome();
  ASSERT_TRUE(o.client_bound_at);
  EXPECT_EQ(*o.client_bound_at, 8000);
  EXPECT_EQ(*o.max_compliant, 4000);
  const std::string text = describe_outcome(search);
  EXPECT_NE(text.find("client-bound at 8,000 req/s"), std::string::npos) << text;
  EXPECT_NE(text.find("add threads or processes"), std::string::npos) << text;
}

TEST(RateSearch, StopsAtTheMaximumRateWhenStillCompliant) {
  auto s = options();
  s.start_rate = 1000;
  s.max_rate = 3000;
  auto search = search_against(s, 1e9);
  ASSERT_EQ(search.steps().size(), 3u);
  EXPECT_EQ(search.steps().back().rate, 3000);
  EXPECT_EQ(search.outcome().stopped, "--search-max reached, still compliant");
}

TEST(RateSearch, AFixedListStepsEveryRateInOrder) {
  auto s = options();
  s.rates = {3000, 1000, 2000};
  auto search = search_against(s, 1500);
  ASSERT_EQ(search.steps().size(), 3u);
  EXPECT_EQ(search.steps()[0].rate, 3000);
  EXPECT_EQ(*search.outcome().max_compliant, 1000);
}

TEST(RateSearch, TheStepCountIsBounded) {
  auto s = options();
  s.max_steps = 3;
  s.precision = 0.001;
  auto search = search_against(s, 1500);
  EXPECT_EQ(search.steps().size(), 3u);
}

TEST(SearchStep, LongEnoughForTheRequestsAndTheHighestPercentile) {
  auto s = options("p99.9=5ms");
  s.step_duration_us = 2'000'000;
  // p99.9 wants 10,000 requests: 10 s at 1,000/s, the minimum 2 s at 100,000/s.
  EXPECT_EQ(step_duration_us(s, 1000), 10'000'000);
  EXPECT_EQ(step_duration_us(s, 100'000), 2'000'000);
}

TEST(SearchOptionsText, SloRatesAndDistressParseOrNameTheProblem) {
  auto b = parse_slo("p50=200us,p99.9=5ms");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].name, "p50");
  EXPECT_DOUBLE_EQ(b[0].quantile, 0.5);
  EXPECT_DOUBLE_EQ(b[0].max_us, 200);
  EXPECT_DOUBLE_EQ(b[1].quantile, 0.999);
  for (const char* bad : {"", "p99", "p100=1ms", "x99=1ms", "p99=fast", "p99=0ms",
                          "p99=1ms,p99=2ms", "p99=1", "p99=0.5", "p50=1ms,p99=2"})
    EXPECT_THROW(parse_slo(bad), std::invalid_argument) << bad;
  try {  // a bound without a unit names what is missing
    parse_slo("p99=1");
    ADD_FAILURE() << "p99=1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs its unit"), std::string::npos) << e.what();
  }
  try {
    parse_slo("p99=fast");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--slo"), std::string::npos) << e.what();
  }
  auto r = parse_rate_list("1000,5k");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1], 5000);
  for (const char* bad : {"", "0", "1000,", "abc"})
    EXPECT_THROW(parse_rate_list(bad), std::invalid_argument) << bad;
  auto d = parse_distress("store-cpu=0.8,psi-full=off");
  EXPECT_DOUBLE_EQ(d.store_cpu_fraction, 0.8);
  EXPECT_LT(d.psi_memory_full_pct, 0);
  EXPECT_DOUBLE_EQ(d.swap_in_pages_per_s, DistressLimits{}.swap_in_pages_per_s);
  auto c = parse_distress("cpu-throttled=0.5,cgroup-max=off,cgroup-high=2,cgroup-psi-full=3");
  EXPECT_DOUBLE_EQ(c.cgroup_psi_full_pct, 3);
  EXPECT_DOUBLE_EQ(c.cpu_throttled_fraction, 0.5);
  EXPECT_LT(c.cgroup_max_events, 0);
  EXPECT_DOUBLE_EQ(c.cgroup_high_events, 2);
  EXPECT_DOUBLE_EQ(c.cgroup_oom_events, 0);
  for (const char* bad : {"store-cpu=2", "heat=1", "swap-in", "swap-in=-1", "cpu-throttled=1.5"})
    EXPECT_THROW(parse_distress(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace kv::drive
