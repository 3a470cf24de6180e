// Cache traces: every field and operation of a line, what a bad line is told, a file read
// plain and zstd-compressed alike across buffer boundaries, and the generator's traces.
#include "workload/trace.hpp"

#include <gtest/gtest.h>
#include <zstd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "servers.hpp"

namespace {
using namespace kv::drive;

std::string parse_error(const std::string& line) {
  TraceRecord r;
  return parse_trace_line(line, r).value_or("");
}

TEST(Trace, ALineHasEveryFieldAndEveryOperationParses) {
  TraceRecord r;
  ASSERT_EQ(parse_trace_line("12,q:1:8WTfj,12,3004,7,delete,600", r), std::nullopt);
  EXPECT_EQ(r.ts_s, 12);
  EXPECT_EQ(r.key, "q:1:8WTfj");
  EXPECT_EQ(r.key_size, 12u);
  EXPECT_EQ(r.value_size, 3004u);
  EXPECT_EQ(r.client_id, 7u);
  EXPECT_EQ(r.op, TraceOp::del);
  EXPECT_EQ(r.ttl_s, 600);
  // A key holding commas: the fields are taken from both ends.
  ASSERT_EQ(parse_trace_line("0,a,b,c,5,10,1,get,0\r", r), std::nullopt);
  EXPECT_EQ(r.key, "a,b,c");
  for (const char* op : {"get", "gets", "set", "add", "replace", "cas", "append", "prepend",
                         "delete", "incr", "decr"}) {
    ASSERT_EQ(parse_trace_line(std::string("1,k,1,1,1,") + op + ",0", r), std::nullopt) << op;
    EXPECT_EQ(trace_op_name(r.op), op);
    EXPECT_EQ(trace_op_reads(r.op), std::string(op) == "get" || std::string(op) == "gets");
  }
}

TEST(Trace, ABadLineSaysWhatIsWrong) {
  EXPECT_NE(parse_error("1,k,1,1,get,0").find("7 comma-separated fields"), std::string::npos);
  EXPECT_NE(parse_error("x,k,1,1,1,get,0").find("timestamp 'x'"), std::string::npos);
  EXPECT_NE(parse_error("-1,k,1,1,1,get,0").find("timestamp '-1'"), std::string::npos);
  EXPECT_NE(parse_error("1,,1,1,1,get,0").find("key is empty"), std::string::npos);
  EXPECT_NE(parse_error("1,k,a,1,1,get,0").find("key size 'a'"), std::string::npos);
  EXPECT_NE(parse_error("1,k,1,-5,1,get,0").find("value size '-5'"), std::string::npos);
  EXPECT_NE(parse_error("1,k,1,1,,get,0").find("client id ''"), std::string::npos);
  EXPECT_NE(parse_error("1,k,1,1,1,GET,0").find("operation 'GET' is none of"), std::string::npos);
  EXPECT_NE(parse_error("1,k,1,1,1,get,-1").find("TTL '-1'"), std::string::npos);
}

std::string generated(const TraceSpec& spec) {
  std::ostringstream out;
  write_trace(spec, out);
  return out.str();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::vector<std::string> read_all(const std::string& path, bool* compressed = nullptr) {
  TraceReader reader(path);
  if (compressed != nullptr) *compressed = reader.compressed();
  std::vector<std::string> out;
  while (auto r = reader.next())
    out.push_back(std::to_string(r->ts_s) + "," + std::string(r->key) + "," +
                  std::to_string(r->key_size) + "," + std::to_string(r->value_size) + "," +
                  std::to_string(r->client_id) + "," + std::string(trace_op_name(r->op)) + "," +
                  std::to_string(r->ttl_s));
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// 200,000 lines (several MB): both readers cross many 64 KiB buffers and zstd blocks.
TEST(Trace, APlainAndAZstdFileReadTheSameRequests) {
  kv::test::TempDir dir;
  TraceSpec spec;
  spec.requests = 200'000;
  spec.delete_fraction = 0.05;
  spec.ttl_s = 300;
  const std::string text = generated(spec);
  write_file(dir.file("t.csv"), text);
  std::string packed(ZSTD_compressBound(text.size()), '\0');
  const size_t n = ZSTD_compress(packed.data(), packed.size(), text.data(), text.size(), 3);
  ASSERT_EQ(ZSTD_isError(n), 0u);
  packed.resize(n);
  write_file(dir.file("t.csv.zst"), packed);
  bool compressed = true;
  const auto plain = read_all(dir.file("t.csv"), &compressed);
  EXPECT_FALSE(compressed);
  const auto unpacked = read_all(dir.file("t.csv.zst"), &compressed);
  EXPECT_TRUE(compressed);
  EXPECT_EQ(plain, lines_of(text));
  EXPECT_EQ(unpacked, plain);
}

TEST(Trace, BlankLinesCrlfAndNoFinalNewlineAreRead) {
  kv::test::TempDir dir;
  write_file(dir.file("t.csv"), "0,a,1,10,1,set,0\r\n\n1,b,1,20,1,get,0");
  EXPECT_EQ(read_all(dir.file("t.csv")),
            (std::vector<std::string>{"0,a,1,10,1,set,0", "1,b,1,20,1,get,0"}));
  write_file(dir.file("empty.csv"), "");
  EXPECT_TRUE(read_all(dir.file("empty.csv")).empty());
}

TEST(Trace, AFileThatCannotBeReadIsNamedWithItsLine) {
  kv::test::TempDir dir;
  EXPECT_THROW(TraceReader(dir.file("missing.csv")), TraceError);
  write_file(dir.file("bad.csv"), "0,a,1,10,1,set,0\n1,b,1,20,1,fetch,0\n");
  TraceReader reader(dir.file("bad.csv"));
  ASSERT_TRUE(reader.next());
  try {
    reader.next();
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: operation 'fetch'"), std::string::npos)
        << e.what();
  }
  // zstd's magic number and then garbage.
  write_file(dir.file("bad.zst"), std::string("\x28\xb5\x2f\xfd", 4) + std::string(64, 'x'));
  TraceReader broken(dir.file("bad.zst"));
  EXPECT_THROW(broken.next(), TraceError);
}

TEST(Trace, TheGeneratorWritesTheMixSizesAndTimesAsked) {
  TraceSpec spec;
  spec.requests = 100'000;
  spec.keys = 5'000;
  spec.write_fraction = 0.2;
  spec.delete_fraction = 0.1;
  spec.value_min = 50;
  spec.value_max = 10'000;
  spec.rate = 1'000;
  const std::string text = generated(spec);
  EXPECT_EQ(text, generated(spec)) << "the same seed, the same trace";
  std::map<std::string, int> ops;
  std::map<std::string, uint32_t> size_of;
  uint64_t i = 0;
  for (const auto& line : lines_of(text)) {
    TraceRecord r;
    ASSERT_EQ(parse_trace_line(line, r), std::nullopt) << line;
    EXPECT_EQ(r.ts_s, static_cast<int64_t>(i++ / spec.rate));
    EXPECT_EQ(r.key_size, r.key.size());
    EXPECT_GE(r.value_size, 50u);
    EXPECT_LE(r.value_size, 10'000u);
    const auto [at, fresh] = size_of.emplace(std::string(r.key), r.value_size);
    if (!fresh) {
      EXPECT_EQ(at->second, r.value_size) << "a key's value size is its own";
    }
    ++ops[std::string(trace_op_name(r.op))];
  }
  EXPECT_EQ(i, spec.requests);
  EXPECT_NEAR(ops["set"] / 1e5, 0.2, 0.01);
  EXPECT_NEAR(ops["delete"] / 1e5, 0.1, 0.01);
  EXPECT_NEAR(ops["get"] / 1e5, 0.7, 0.01);
  EXPECT_LE(size_of.size(), 5'000u);
  TraceSpec empty = spec;
  empty.keys = 0;
  EXPECT_THROW(generated(empty), std::invalid_argument);
  TraceSpec backwards = spec;
  backwards.value_min = 20'000;
  EXPECT_THROW(generated(backwards), std::invalid_argument);
  EXPECT_NE(text, generated(TraceSpec{spec.requests, spec.keys, spec.zipf, spec.write_fraction,
                                      spec.delete_fraction, spec.value_min, spec.value_max,
                                      spec.rate, spec.ttl_s, 2}));
}

// --cache-aside: each get of a key that is not there (never set, or deleted since) is followed
// by a set of that key, and no other get is; the request count holds the sets.
TEST(Trace, TheGeneratorsLookAsideClientSetsWhatItMissed) {
  TraceSpec spec;
  spec.requests = 20'000;
  spec.keys = 2'000;
  spec.write_fraction = 0.05;
  spec.delete_fraction = 0.05;
  spec.cache_aside = true;
  std::istringstream lines(generated(spec));
  std::vector<TraceRecord> records;
  std::vector<std::string> keys;
  for (std::string line; std::getline(lines, line);) {
    TraceRecord r;
    ASSERT_EQ(parse_trace_line(line, r), std::nullopt) << line;
    keys.emplace_back(r.key);
    records.push_back(r);
  }
  ASSERT_EQ(records.size(), spec.requests);
  std::set<std::string> present;
  size_t backfills = 0;
  for (size_t i = 0; i + 1 < records.size(); ++i) {
    const bool missed = records[i].op == TraceOp::get && present.count(keys[i]) == 0;
    if (missed) {
      EXPECT_EQ(records[i + 1].op, TraceOp::set) << i;
      EXPECT_EQ(keys[i + 1], keys[i]) << i;
      ++backfills;
    }
    if (records[i].op == TraceOp::del)
      present.erase(keys[i]);
    else
      present.insert(keys[i]);
  }
  EXPECT_GT(backfills, 1'000u);
}

}  // namespace
