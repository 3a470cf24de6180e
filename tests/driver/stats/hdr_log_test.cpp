// HdrHistogram's V2 compressed encoding of a LatencyHistogram (stats/hdr_log.hpp), read back by a
// decoder of our own (base64, cookies, zlib inflate, ZigZag LEB128 counts with zero runs), and
// an interval log's lines.
#include "stats/hdr_log.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "hdr_decode.hpp"
#include "servers.hpp"

namespace {

using kv::test::decode;
using kv::test::Decoded;

TEST(HdrLog, EncodingDecodesToTheSameCounts) {
  kv::LatencyHistogram h;
  for (uint64_t ns : {1ull, 7ull, 255ull, 256ull, 1'000ull, 1'000ull, 123'456ull, 9'999'999ull,
                      68'000'000'000ull})
    h.record(ns);
  for (int i = 0; i < 1000; ++i) h.record(50'000);
  Decoded d = decode(kv::drive::hdr_compressed_base64(h));
  EXPECT_EQ(d.digits, 2);
  EXPECT_EQ(d.lowest, 1);
  EXPECT_EQ(d.highest, (int64_t{1} << 36) - 1);
  ASSERT_LE(d.counts.size(), static_cast<size_t>(kv::LatencyHistogram::kBuckets));
  for (int i = 0; i < kv::LatencyHistogram::kBuckets; ++i)
    EXPECT_EQ(static_cast<size_t>(i) < d.counts.size() ? d.counts[static_cast<size_t>(i)] : 0,
              h.bucket_count(i))
        << i;
  kv::LatencyHistogram empty;
  EXPECT_TRUE(decode(kv::drive::hdr_compressed_base64(empty)).counts.empty());
}

TEST(HdrLog, TheLogHasTheHeaderAndOneTaggedLinePerInterval) {
  kv::test::TempDir dir;
  kv::LatencyHistogram h;
  h.record(2'500'000);  // 2.5 ms
  {
    kv::drive::HdrLogWriter w(dir.file("l.hlog"), 1'700'000'000'000'000);
    w.interval("get", 1'700'000'001'000'000, 500'000, h);
  }
  std::ifstream in(dir.file("l.hlog"));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[1], "#[Histogram log format version 1.3]");
  EXPECT_EQ(lines[2].rfind("#[StartTime: 1700000000.000 (seconds since epoch), ", 0), 0u);
  EXPECT_EQ(lines[3], "#[BaseTime: 1700000000.000 (seconds since epoch)]");
  EXPECT_EQ(lines[4],
            "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\","
            "\"Interval_Compressed_Histogram\"");
  const std::string head = "Tag=get,1.000,0.500,2.500,";
  ASSERT_EQ(lines[5].rfind(head, 0), 0u) << lines[5];
  EXPECT_EQ(lines[5].substr(head.size(), 6), "HISTFA");  // the V2 compressed cookie, base64
  Decoded d = decode(lines[5].substr(head.size()));
  uint64_t total = 0;
  for (uint64_t c : d.counts) total += c;
  EXPECT_EQ(total, 1u);
  EXPECT_EQ(d.counts.size(), static_cast<size_t>(kv::LatencyHistogram::index_of(2'500'000) + 1));
}

}  // namespace

TEST(HdrLog, AnExistingFileIsNeverReplaced) {
  // The command line refuses an existing PREFIX.<N>.hlog, but a later target's log is created
  // when that target starts: a file made meanwhile must survive, and the writer say why not.
  kv::test::TempDir dir;
  const std::string path = dir.file("taken.hlog");
  { std::ofstream(path) << "someone else's data\n"; }
  EXPECT_THROW(kv::drive::HdrLogWriter(path, 1'700'000'000'000'000), std::runtime_error);
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "someone else's data");
}
