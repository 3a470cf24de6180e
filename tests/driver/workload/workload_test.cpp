#include "workload/workload.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

#include "kvbench/usage_error.hpp"
#include "report/text_table.hpp"
#include "stats/interval_stats.hpp"
#include "workload/phase_plan.hpp"
#include "workload/workload_options.hpp"

namespace {
using namespace kv::drive;

TEST(KeyFormatter, PrefixAndNumber) {
  KeyFormatter k("kv:");
  EXPECT_EQ(k.format(0), "kv:0");
  EXPECT_EQ(k.format(4999999), "kv:4999999");
  EXPECT_EQ(k.format(kCounterKey - 1), "kv:4611686018427387903");  // the largest written key
  EXPECT_EQ(k.format(kCounterKey | 42), "kv:~n:42");               // incr/decr's counter
  EXPECT_EQ(k.format(kCounterKey | kMissKey | 7), "kv:~n:~miss:7");
}

TEST(ValueTable, SizesAndDistinctValues) {
  ValueTable t(20 * 1024, 1);
  std::set<std::string> seen;
  for (uint64_t i = 0; i < 100; ++i) {
    auto v = t.value_for(i, 20 * 1024);
    ASSERT_EQ(v.size(), 20u * 1024);
    seen.insert(std::string(v));
  }
  EXPECT_EQ(seen.size(), 100u);
  EXPECT_EQ(t.value_for(7, 100), t.value_for(7, 100));  // re-derivable
  EXPECT_EQ(t.value_for(3, 1).size(), 1u);
}

TEST(ValueTable, Incompressible) {
  // Random bytes: every byte value appears in a 64 KiB value.
  ValueTable t(65536, 9);
  auto v = t.value_for(1, 65536);
  std::set<char> bytes(v.begin(), v.end());
  EXPECT_EQ(bytes.size(), 256u);
}

TEST(IntervalStats, SlotHandsOverEveryRecordExactlyOnce) {
  StatsSlot slot;
  IntervalStats a, b;
  slot.record(OpType::set, {OpStatus::ok, 1000, 1000, 10, 0, false, false, 0});
  slot.record(OpType::get, {OpStatus::hit, 2000, 2000, 5, 100, true, false, 0});
  slot.drain_into(a);
  slot.record(OpType::get, {OpStatus::miss, 3000, 3000, 5, 0, false, false, 0});
  slot.drain_into(b);
  slot.drain_into(b);  // nothing new
  EXPECT_EQ(a[OpType::set].ops, 1u);
  EXPECT_EQ(a[OpType::get].hits, 1u);
  EXPECT_EQ(a[OpType::get].bytes_in, 100u);
  EXPECT_EQ(a[OpType::get].wrong, 1u);
  EXPECT_EQ(b[OpType::get].ops, 1u);
  EXPECT_EQ(b[OpType::get].misses, 1u);
  EXPECT_EQ(b[OpType::set].ops, 0u);
}

TEST(WorkloadSpec, JsonHasTheParameters) {
  WorkloadSpec w;
  w.keys = 5;
  w.key_prefix = "a\"b";
  w.values = parse_value_sizes("1K:60,10K:40");
  std::string j = w.to_json();
  EXPECT_NE(j.find("\"value_size\":\"1024:60,10240:40\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"keys\":5"), std::string::npos) << j;
  EXPECT_NE(j.find("a\\\"b"), std::string::npos) << j;
  EXPECT_NE(j.find("[\"load\",\"read\"]"), std::string::npos) << j;
}

TEST(TextTable, AlignsNumbersRight) {
  TextTable t({"store", "req/s"});
  t.add_row({"redis", kv::fmt_int(1234567)});
  t.add_row({"memcached", kv::fmt_int(5)});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(), "store          req/s\nredis      1,234,567\nmemcached          5\n");
}

}  // namespace

namespace {
using namespace kv::drive;

TEST(ValueSizes, FixedRangeAndWeighted) {
  auto fixed = parse_value_sizes("20KB");
  EXPECT_EQ(fixed.size_for(1), 20u * 1024);
  EXPECT_EQ(fixed.largest(), 20u * 1024);

  auto range = parse_value_sizes("100-1000");
  uint64_t lo = UINT64_MAX, hi = 0;
  for (uint64_t k = 0; k < 10'000; ++k) {
    uint64_t s = range.size_for(k);
    lo = std::min(lo, s);
    hi = std::max(hi, s);
    ASSERT_EQ(s, range.size_for(k)) << "a key's size must not change";
  }
  EXPECT_EQ(lo, 100u);
  EXPECT_EQ(hi, 1000u);

  auto weighted = parse_value_sizes("1K:60,10K:30,100K:10");
  std::map<uint64_t, int> count;
  for (uint64_t k = 0; k < 100'000; ++k) ++count[weighted.size_for(k)];
  EXPECT_NEAR(count[1024] / 1e5, 0.60, 0.01);
  EXPECT_NEAR(count[10240] / 1e5, 0.30, 0.01);
  EXPECT_NEAR(count[102400] / 1e5, 0.10, 0.01);
  EXPECT_EQ(weighted.largest(), 102400u);
  EXPECT_EQ(parse_value_sizes("2M").largest(), 2u << 20);
}

TEST(ValueSizes, BadInputNamesIt) {
  for (const char* bad :
       {"0", "1000-100", "1K:0", "1K:x", "1K,2K:3", "100M", "abc", "-5", "1K:60,"}) {
    try {
      parse_value_sizes(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad), std::string::npos) << e.what();
    }
  }
}

TEST(Phases, ParseAndReject) {
  auto p = parse_phases("load,mixed,read");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1], PhaseKind::mixed);
  EXPECT_THROW(parse_phases("load,,read"), std::invalid_argument);
  EXPECT_THROW(parse_phases("write"), std::invalid_argument);
}

TEST(KeyPatternParse, Forms) {
  EXPECT_EQ(parse_key_pattern("zipf").kind, KeyPattern::Kind::zipf);
  EXPECT_DOUBLE_EQ(parse_key_pattern("zipf:1.2").zipf_exponent, 1.2);
  EXPECT_EQ(parse_key_pattern("gaussian").kind, KeyPattern::Kind::gaussian);
  for (const char* bad : {"zipf:", "zipf:-1", "zipf:abc", "zipfy", "normal", ""})
    EXPECT_THROW(parse_key_pattern(bad), std::invalid_argument) << bad;
}

}  // namespace

namespace {

TEST(OpMix, ParsedInOrderAndRatioIsItsShorthand) {
  using kv::drive::MixEntry;
  const auto mix = parse_mix("get:60,set:20,delete:10,incr:10,touch:0");
  ASSERT_EQ(mix.size(), 5u);
  EXPECT_EQ(mix[0], (MixEntry{OpType::get, 60}));
  EXPECT_EQ(mix[2], (MixEntry{OpType::del, 10}));
  EXPECT_EQ(mix_text(mix), "get:60,set:20,delete:10,incr:10,touch:0");
  WorkloadSpec w;
  EXPECT_EQ(w.op_mix(), (std::vector<MixEntry>{{OpType::set, 1}, {OpType::get, 10}}));
  set_workload_option(w, "mix", "get:1,decr:1");
  EXPECT_EQ(w.to_json().find("\"mix\":\"get:1,decr:1\"") != std::string::npos, true) << w.to_json();
  for (const char* bad :
       {"get", "get:1,get:2", "x:1", "get:0", "get:1,,set:1", "get:1000001", "backfill:1"})
    EXPECT_THROW(parse_mix(bad), kv::UsageError) << bad;
}

TEST(OpMix, WhatEachPhaseSendsAndTheCounterKeysLoaded) {
  WorkloadSpec w;
  w.keys = 1000;
  w.phases = {PhaseKind::load, PhaseKind::read};
  w.mix = parse_mix("get:5,incr:1,touch:0");
  EXPECT_TRUE(w.phase_sends(PhaseKind::load, OpType::set));
  EXPECT_FALSE(w.phase_sends(PhaseKind::load, OpType::get));
  EXPECT_TRUE(w.phase_sends(PhaseKind::read, OpType::get));
  EXPECT_TRUE(w.phase_sends(PhaseKind::mixed, OpType::incr));
  EXPECT_FALSE(w.phase_sends(PhaseKind::mixed, OpType::touch));  // weight 0
  EXPECT_FALSE(w.phase_sends(PhaseKind::mixed, OpType::set));
  // No mixed phase: no counters, one set per key.
  EXPECT_FALSE(w.uses_counters());
  EXPECT_EQ(plan_phase(PhaseKind::load, w).requests, 1000u);
  w.phases = {PhaseKind::load, PhaseKind::mixed};
  EXPECT_TRUE(w.uses_counters());
  EXPECT_EQ(plan_phase(PhaseKind::load, w).requests, 2000u);
}

TEST(OpMix, MultiKeyGetMakesEveryGetAnMget) {
  using kv::drive::MixEntry;
  WorkloadSpec w;
  w.phases = {PhaseKind::read, PhaseKind::mixed};
  set_workload_option(w, "multi-key-get", "8");
  EXPECT_EQ(w.op_mix(), (std::vector<MixEntry>{{OpType::set, 1}, {OpType::mget, 10}}));
  EXPECT_TRUE(w.phase_sends(PhaseKind::read, OpType::mget));
  EXPECT_FALSE(w.phase_sends(PhaseKind::read, OpType::get));
  EXPECT_NE(w.to_json().find("\"multi_key_get\":8"), std::string::npos) << w.to_json();
  EXPECT_THROW(parse_mix("mget:1"), kv::UsageError);  // --multi-key-get's, never a mix's
}

TEST(OpMix, EachOpsOwnKeyPatternAndValueSizes) {
  const auto patterns = kv::drive::parse_mix_patterns("delete=uniform;get=zipf:1.2");
  EXPECT_FALSE(patterns[static_cast<size_t>(OpType::set)]);
  ASSERT_TRUE(patterns[static_cast<size_t>(OpType::del)]);
  EXPECT_EQ(patterns[static_cast<size_t>(OpType::del)]->kind, kv::drive::KeyPattern::Kind::uniform);
  EXPECT_EQ(kv::drive::mix_patterns_text(patterns), "get=zipf:1.20;delete=uniform");
  const auto values = kv::drive::parse_mix_values("append=16;set=1K:60,10K:40");
  ASSERT_TRUE(values[static_cast<size_t>(OpType::append)]);
  EXPECT_EQ(values[static_cast<size_t>(OpType::append)]->largest(), 16u);
  EXPECT_EQ(kv::drive::mix_values_text(values), "set=1024:60,10240:40;append=16");
  WorkloadSpec w;
  w.phases = {PhaseKind::load, PhaseKind::mixed};
  w.mix_values = values;
  EXPECT_EQ(w.largest_value(), 10240u);
  EXPECT_EQ(&w.values_of(PhaseKind::load, OpType::set), &w.values);  // the load's: --value-size
  EXPECT_EQ(w.values_of(PhaseKind::mixed, OpType::append).largest(), 16u);
  EXPECT_EQ(&w.values_of(PhaseKind::mixed, OpType::add), &w.values);
  for (const char* bad : {"get", "get=zap", "x=uniform", "get=uniform;get=zipf", "backfill=zipf",
                          "mget=zipf", "get=uniform;"})
    EXPECT_THROW(kv::drive::parse_mix_patterns(bad), kv::UsageError) << bad;
  for (const char* bad : {"get=10", "delete=10", "set=0", "set=10;set=20", "set"})
    EXPECT_THROW(kv::drive::parse_mix_values(bad), kv::UsageError) << bad;
}

}  // namespace
