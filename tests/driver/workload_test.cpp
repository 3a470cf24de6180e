#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "interval_stats.hpp"
#include "text_table.hpp"
#include "workload.hpp"

namespace {
using namespace kv::drive;

TEST(KeyFormatter, PrefixAndNumber) {
  KeyFormatter k("kv:");
  EXPECT_EQ(k.format(0), "kv:0");
  EXPECT_EQ(k.format(4999999), "kv:4999999");
  EXPECT_EQ(k.format(UINT64_MAX), "kv:18446744073709551615");
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
  slot.record(OpType::set, kv::drive::OpStatus::ok, 1000, 10, 0);
  slot.record(OpType::get, kv::drive::OpStatus::hit, 2000, 5, 100);
  slot.drain_into(a);
  slot.record(OpType::get, kv::drive::OpStatus::miss, 3000, 5, 0);
  slot.drain_into(b);
  slot.drain_into(b);  // nothing new
  EXPECT_EQ(a[OpType::set].ops, 1u);
  EXPECT_EQ(a[OpType::get].hits, 1u);
  EXPECT_EQ(a[OpType::get].bytes_in, 100u);
  EXPECT_EQ(b[OpType::get].ops, 1u);
  EXPECT_EQ(b[OpType::get].misses, 1u);
  EXPECT_EQ(b[OpType::set].ops, 0u);
}

TEST(WorkloadSpec, JsonHasTheParameters) {
  WorkloadSpec w;
  w.keys = 5;
  w.key_prefix = "a\"b";
  std::string j = w.to_json();
  EXPECT_NE(j.find("\"keys\":5"), std::string::npos) << j;
  EXPECT_NE(j.find("a\\\"b"), std::string::npos) << j;
  EXPECT_NE(j.find("[\"load\",\"read\"]"), std::string::npos) << j;
}

TEST(TextTable, AlignsNumbersRight) {
  TextTable t({"store", "req/s"});
  t.add_row({"redis", fmt_int(1234567)});
  t.add_row({"memcached", fmt_int(5)});
  std::ostringstream out;
  t.print(out);
  EXPECT_EQ(out.str(), "store          req/s\nredis      1,234,567\nmemcached          5\n");
}

}  // namespace
