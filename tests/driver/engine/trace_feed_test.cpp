// A replay's feed (engine/trace_feed): every record goes to exactly one stream of one worker,
// a key's records to one stream in file order; at recorded timing a second's records are spread
// evenly over it and scaled by --speed, read no sooner than a second before they are due; the
// limit, the key scale, counter keys and a bad line mid-file.
#include "engine/trace_feed.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "servers.hpp"

namespace {
using namespace kv::drive;
using kv::kOpTypes;
using kv::OpType;
using kv::test::TempDir;

std::string write_file(const TempDir& dir, const std::string& text) {
  const std::string path = dir.file("t.csv");
  std::ofstream(path) << text;
  return path;
}

// Everything stream s of a feed hands out, read as fast as it allows.
std::vector<TraceItem> drain(TraceFeed& f, size_t s, int64_t elapsed_ns = INT64_MAX / 2) {
  std::vector<TraceItem> out;
  const TraceItem* item = nullptr;
  while (f.peek(s, elapsed_ns, &item) == TraceFeed::Next::item) {
    out.push_back(*item);
    f.pop(s);
  }
  return out;
}

TEST(TraceFeed, EveryRecordGoesToOneStreamAndAKeysRecordsKeepTheirOrder) {
  TempDir dir;
  TraceSpec spec;
  spec.requests = 5'000;
  spec.keys = 300;
  spec.write_fraction = 0.3;
  spec.delete_fraction = 0.1;
  std::ostringstream text;
  write_trace(spec, text);
  TraceReplay r;
  r.path = write_file(dir, text.str());
  r.fast = true;
  // Two workers of 3 streams each (streams 0-2 and 3-5 of 6).
  TraceFeed a(r, 0, 3, 6, 0, false), b(r, 3, 3, 6, 0, false);
  std::map<uint64_t, std::vector<OpType>> by_key;  // each key's ops, as the streams sent them
  std::map<uint64_t, size_t> stream_of;
  size_t total = 0;
  for (size_t s = 0; s < 3; ++s)
    for (TraceFeed* f : {&a, &b})
      for (const TraceItem& t : drain(*f, s)) {
        ++total;
        by_key[t.key].push_back(t.op);
        const size_t stream = (f == &a ? 0 : 3) + s;
        EXPECT_EQ(stream_of.emplace(t.key, stream).first->second, stream) << "a key on one stream";
        EXPECT_EQ(t.key % 6, stream);
      }
  EXPECT_EQ(total, spec.requests);
  // The file's order of each key's ops.
  std::map<uint64_t, std::vector<OpType>> want;
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    TraceRecord rec;
    ASSERT_EQ(parse_trace_line(line, rec), std::nullopt);
    want[trace_key_id(rec.key)].push_back(replay_op(rec.op, false));
  }
  EXPECT_EQ(by_key, want);
}

TEST(TraceFeed, RecordedTimingSpreadsEachSecondEvenlyAndScalesBySpeed) {
  TempDir dir;
  // Second 10: four records; second 11: none; second 12: two; a late line of second 11 counts
  // in second 12 (the current one).
  TraceReplay r;
  r.path = write_file(dir,
                      "10,a,1,5,1,get,0\n10,b,1,5,1,set,0\n10,c,1,5,1,get,0\n10,d,1,5,1,get,0\n"
                      "12,e,1,5,1,get,0\n11,f,1,5,1,delete,0\n");
  r.speed = 2;
  TraceFeed f(r, 0, 1, 1, 0, false);
  std::vector<int64_t> due;
  for (const TraceItem& t : drain(f, 0)) due.push_back(t.due_ns);
  EXPECT_EQ(due, (std::vector<int64_t>{0, 125'000'000, 250'000'000, 375'000'000, 1'000'000'000,
                                       1'250'000'000}));
}

TEST(TraceFeed, ASecondIsReadNoSoonerThanASecondBeforeItIsDue) {
  TempDir dir;
  TraceReplay r;
  r.path = write_file(dir, "0,a,1,5,1,get,0\n5,b,1,5,1,get,0\n");
  TraceFeed f(r, 0, 1, 1, 0, false);
  const TraceItem* item = nullptr;
  ASSERT_EQ(f.peek(0, 0, &item), TraceFeed::Next::item);
  f.pop(0);
  // Second 5 begins 5 s in: it is read from 4 s on.
  EXPECT_EQ(f.read_next_at(), 4'000'000'000);
  EXPECT_EQ(f.peek(0, 3'999'999'999, &item), TraceFeed::Next::later);
  ASSERT_EQ(f.peek(0, 4'000'000'000, &item), TraceFeed::Next::item);
  EXPECT_EQ(item->due_ns, 5'000'000'000);
  f.pop(0);
  EXPECT_EQ(f.peek(0, 4'000'000'000, &item), TraceFeed::Next::end);
}

TEST(TraceFeed, DropDueCountsWhatWasDueAndNeverLeft) {
  TempDir dir;
  TraceReplay r;
  r.path = write_file(dir, "0,a,1,5,1,get,0\n0,b,1,5,1,set,0\n1,c,1,5,1,get,0\n3,d,1,5,1,get,0\n");
  TraceFeed f(r, 0, 1, 1, 0, false);
  std::array<uint64_t, kOpTypes> dropped{};
  f.drop_due(0, 2'000'000'000, dropped);  // due at 0, 0.5 and 1 s
  EXPECT_EQ(dropped[static_cast<size_t>(OpType::get)], 2u);
  EXPECT_EQ(dropped[static_cast<size_t>(OpType::set)], 1u);
  const auto rest = drain(f, 0);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].due_ns, 3'000'000'000);
}

TEST(TraceFeed, TheLimitKeyScaleAndCountersShapeWhatIsSent) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 1000; ++i)
    text += "0,k" + std::to_string(i % 100) + ",4,30,1," + (i % 10 == 0 ? "incr" : "get") + ",0\n";
  TraceReplay r;
  r.path = write_file(dir, text);
  r.fast = true;
  {
    TraceFeed f(r, 0, 1, 1, 250, false);
    EXPECT_EQ(drain(f, 0).size(), 250u);
  }
  {
    r.keys_scale = 0.5;  // about half the keys, every request of each
    TraceFeed f(r, 0, 1, 1, 0, false);
    std::map<uint64_t, int> per_key;
    for (const TraceItem& t : drain(f, 0)) ++per_key[t.key];
    EXPECT_GT(per_key.size(), 30u);
    EXPECT_LT(per_key.size(), 70u);
    for (const auto& [key, n] : per_key) EXPECT_EQ(n, 10) << key;
  }
  {
    r.keys_scale = 3;  // each key three keys, each request to one of them; every request sent
    TraceFeed f(r, 0, 1, 1, 0, false);
    std::unordered_set<uint64_t> keys;
    const auto items = drain(f, 0);
    for (const TraceItem& t : items) keys.insert(t.key);
    EXPECT_EQ(items.size(), 1000u);
    // A key's 10 requests miss one of its copies with odds 3 x (2/3)^10 = 5 %.
    EXPECT_LE(keys.size(), 300u);
    EXPECT_GT(keys.size(), 270u);
  }
  {
    r.keys_scale = 1;  // keys k0, k10, ... are incr'd: all their requests go to counter keys
    const TraceScan scan = scan_trace(r.path, 1);
    EXPECT_EQ(scan.counters.size(), 10u);
    r.counters = std::make_shared<const std::unordered_set<uint64_t>>(scan.counters);
    TraceFeed f(r, 0, 1, 1, 0, false);
    size_t on_counters = 0;
    for (const TraceItem& t : drain(f, 0)) on_counters += (t.key & kCounterKey) != 0;
    EXPECT_EQ(on_counters, 100u);
  }
}

TEST(TraceFeed, ABadLineEndsTheFeedWithItsPlace) {
  TempDir dir;
  TraceReplay r;
  r.path = write_file(dir, "0,a,1,5,1,get,0\n0,b,1,5,1,GET,0\n");
  r.fast = true;
  TraceFeed f(r, 0, 1, 1, 0, false);
  EXPECT_EQ(drain(f, 0).size(), 1u);
  EXPECT_NE(f.error().find("t.csv:2:"), std::string::npos) << f.error();
}

TEST(TraceFeed, ARedisTargetGetsPrependAsAppendAndEveryOpMapsToOneOfOurs) {
  EXPECT_EQ(replay_op(TraceOp::prepend, true), OpType::append);
  EXPECT_EQ(replay_op(TraceOp::prepend, false), OpType::prepend);
  EXPECT_EQ(replay_op(TraceOp::gets, false), OpType::get);
  EXPECT_EQ(replay_op(TraceOp::cas, true), OpType::set);
  EXPECT_EQ(replay_op(TraceOp::del, true), OpType::del);
  EXPECT_LT(trace_key_id("any key"), kCounterKey);
}

}  // namespace
