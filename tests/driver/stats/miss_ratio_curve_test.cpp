// Miss-ratio curves (the exact most recent keys, SHARDS for the rest) against an exact LRU
// simulation (tests/support/exact_lru.hpp): exact while every key is followed, and at the sizes
// the most recent keys answer; within 0.02 at 20 sizes from 0.5 % of the keys up when a trace
// has 100,000 keys and 2,048 are followed.
#include "stats/miss_ratio_curve.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "exact_lru.hpp"
#include "workload/trace.hpp"

namespace {
using namespace kv::drive;
using kv::test::exact_miss_ratio;
using kv::test::Request;

std::vector<Request> requests_of(const TraceSpec& spec) {
  std::ostringstream text;
  write_trace(spec, text);
  return kv::test::requests_of_trace(text.str());
}

// Both passes: the keys' threshold, then the curve.
MissRatioCurve curve_of(const std::vector<Request>& requests, size_t max_keys) {
  KeySample sample(max_keys);
  for (const Request& q : requests) sample.see(q.key);
  MissRatioCurve c(sample.threshold(), max_keys);
  for (const Request& q : requests) c.access(q.key, q.size, q.kind);
  return c;
}

// Reads and writes of 2,000 keys (values 50 B - 10 KB), every key followed: in objects, where
// positions below 1,024 are binned one by one, the curve is the exact one; in bytes, binned
// 0.5 % wide, within 0.005.
TEST(MissRatioCurve, EveryKeyFollowedIsTheExactCurve) {
  TraceSpec spec;
  spec.requests = 60'000;
  spec.keys = 2'000;
  spec.zipf = 0.9;
  spec.write_fraction = 0.2;
  spec.value_min = 50;
  spec.value_max = 10'000;
  const auto requests = requests_of(spec);
  const MissRatioCurve c = curve_of(requests, 4096);
  EXPECT_EQ(c.sampling_rate(), 1.0);
  EXPECT_EQ(c.reads(), static_cast<uint64_t>(std::count_if(
                           requests.begin(), requests.end(),
                           [](const Request& q) { return q.kind == CacheAccess::read; })));
  const std::vector<uint64_t> objects = {1, 10, 50, 100, 200, 400, 600, 800, 1000, 1023};
  for (const auto& p : c.by_objects(objects))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 1e-12) << p.cache;
  const std::vector<uint64_t> bytes = {20'000,    100'000,   300'000,   600'000,   1'000'000,
                                       1'500'000, 2'000'000, 3'000'000, 4'000'000, 6'000'000};
  for (const auto& p : c.by_bytes(bytes))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, true), 0.005) << p.cache;
}

// Few keys followed, many accesses: the clock is renumbered many times, and the curve stays
// exact.
TEST(MissRatioCurve, RenumberingTheClockKeepsTheDistances) {
  TraceSpec spec;
  spec.requests = 30'000;
  spec.keys = 40;
  spec.write_fraction = 0.3;
  const auto requests = requests_of(spec);
  const MissRatioCurve c = curve_of(requests, 64);
  EXPECT_EQ(c.sampling_rate(), 1.0);
  for (const auto& p : c.by_objects({1, 2, 5, 10, 20, 30, 40}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 1e-12) << p.cache;
}

// Deletes make LRU no stack algorithm: the slot a delete frees is filled before anything is
// evicted, while the curve takes the object out of every cache size at once (what was below it
// moves up). With 10 % deletes over a small key space, the worst case here, that costs under
// 0.01 of miss ratio; with 5 % over 2,000 keys, under 0.001.
TEST(MissRatioCurve, DeletesAreCloseToTheExactCurve) {
  TraceSpec spec;
  spec.requests = 30'000;
  spec.keys = 40;
  spec.write_fraction = 0.3;
  spec.delete_fraction = 0.1;
  auto requests = requests_of(spec);
  for (const auto& p : curve_of(requests, 64).by_objects({1, 2, 5, 10, 20, 30, 40}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 0.01) << p.cache;
  spec.requests = 60'000;
  spec.keys = 2'000;
  spec.zipf = 0.9;
  spec.delete_fraction = 0.05;
  requests = requests_of(spec);
  for (const auto& p : curve_of(requests, 4096).by_objects({10, 100, 400, 800, 1000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 0.001) << p.cache;
}

// 300,000 requests over 100,000 keys (zipf 0.8, 20 % writes, 2 % deletes), 2,048 followed (a
// rate near 2 %): within 0.02 of the exact curve at every size. Measured: 500 objects and 2,000
// (under the 2,046 the most recent keys answer) exact, 1 MB 0.0003 (the 0.5 % bins); the others
// at most 0.0058 in objects and 0.0069 in bytes (5 MB, past the 3.5 MB the most recent keys
// held). SHARDS alone ran 0.043 low at 500 objects and 1 MB. NOTES.md, "Miss-ratio curves".
TEST(MissRatioCurve, SampledWithinTwoHundredthsOfTheExactCurve) {
  TraceSpec spec;
  spec.requests = 300'000;
  spec.keys = 100'000;
  spec.zipf = 0.8;
  spec.write_fraction = 0.2;
  spec.delete_fraction = 0.02;
  spec.value_min = 50;
  spec.value_max = 10'000;
  const auto requests = requests_of(spec);
  const MissRatioCurve c = curve_of(requests, 2048);
  EXPECT_LE(c.keys_followed(), 2048u);
  EXPECT_NEAR(c.sampling_rate(), 2048.0 / 100'000, 0.01);
  EXPECT_GE(c.exact_objects(), 2'000u);
  EXPECT_GE(c.exact_bytes(), 1'000'000u);
  for (const auto& p :
       c.by_objects({500, 2'000, 5'000, 10'000, 20'000, 30'000, 40'000, 50'000, 70'000, 90'000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 0.02) << p.cache;
  for (const auto& p : c.by_bytes({1'000'000, 5'000'000, 10'000'000, 25'000'000, 50'000'000,
                                   75'000'000, 100'000'000, 150'000'000, 200'000'000, 300'000'000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, true), 0.02) << p.cache;
}

// A steep popularity (zipf 1.2, 20,000 keys, 1,024 followed: a rate near 13 %) and small
// caches: the few hottest keys decide the miss ratio, and SHARDS alone, by whether they are
// followed, was 0.05 low at 100 objects and 0.16 at 10. The most recent keys make it exact.
TEST(MissRatioCurve, SmallCachesAreExactWhateverKeysAreFollowed) {
  TraceSpec spec;
  spec.requests = 100'000;
  spec.keys = 20'000;
  spec.zipf = 1.2;
  spec.write_fraction = 0.2;
  spec.value_min = 50;
  spec.value_max = 10'000;
  const auto requests = requests_of(spec);
  const MissRatioCurve c = curve_of(requests, 1024);
  EXPECT_LT(c.sampling_rate(), 0.2);
  EXPECT_GE(c.exact_objects(), 1'000u);
  for (const auto& p : c.by_objects({10, 100, 500, 1'000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 1e-12) << p.cache;
  for (const auto& p : c.by_bytes({20'000, 200'000, 1'000'000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, true), 0.001) << p.cache;
}

// Every key followed (threshold UINT64_MAX) but only 64 most recent kept exactly, over 2,000
// keys: the sampled part grows past max_keys, the reads the recent keys miss take their
// positions from it, and the curve is exact at every size.
TEST(MissRatioCurve, KeysDroppedFromTheRecentOnesLeaveTheCurveExact) {
  TraceSpec spec;
  spec.requests = 40'000;
  spec.keys = 2'000;
  spec.zipf = 0.9;
  spec.write_fraction = 0.2;
  const auto requests = requests_of(spec);
  MissRatioCurve c(UINT64_MAX, 64);
  for (const Request& q : requests) c.access(q.key, q.size, q.kind);
  EXPECT_GT(c.keys_followed(), 64u);
  EXPECT_EQ(c.exact_objects(), 64u);  // no deletes: the recent keys stay 64
  for (const auto& p : c.by_objects({1, 10, 63, 64, 100, 500, 1'000, 2'000}))
    EXPECT_NEAR(p.miss_ratio, exact_miss_ratio(requests, p.cache, false), 1e-12) << p.cache;
}

// The first pass: with no more keys than it keeps, every key is followed (rate 1); with more,
// the threshold is the largest of the smallest hashes it kept.
TEST(MissRatioCurve, TheKeySampleKeepsTheSmallestHashes) {
  KeySample few(4);
  for (const char* k : {"a", "b", "c", "d", "a"}) few.see(k);
  EXPECT_EQ(few.threshold(), UINT64_MAX);
  KeySample many(2);
  std::vector<uint64_t> hashes;
  for (const char* k : {"a", "b", "c", "d"}) {
    many.see(k);
    hashes.push_back(sample_hash(k));
  }
  std::sort(hashes.begin(), hashes.end());
  EXPECT_EQ(many.threshold(), hashes[1]);
}

TEST(MissRatioCurve, NoReadsAndOnlyFirstReadsMissEverything) {
  MissRatioCurve none;
  none.access("a", 10, CacheAccess::write);
  EXPECT_EQ(none.by_objects({1, 100}).at(1).miss_ratio, 1.0);
  EXPECT_EQ(none.reads(), 0u);
  MissRatioCurve cold;
  for (int i = 0; i < 100; ++i) cold.access("k" + std::to_string(i), 10, CacheAccess::read);
  EXPECT_EQ(cold.by_objects({1'000'000}).at(0).miss_ratio, 1.0);
  // A deleted key read again is a miss at any size.
  MissRatioCurve deleted;
  deleted.access("a", 10, CacheAccess::write);
  deleted.access("a", 10, CacheAccess::remove);
  deleted.access("a", 10, CacheAccess::read);
  deleted.access("a", 10, CacheAccess::read);
  EXPECT_DOUBLE_EQ(deleted.by_objects({1}).at(0).miss_ratio, 0.5);
}

}  // namespace
