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

#include "servers.hpp"

namespace {

std::string unbase64(const std::string& in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    int v = value(c);
    if (v < 0) continue;  // '=' padding
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

uint64_t get_be(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | static_cast<uint8_t>(s.at(at + i));
  return v;
}

struct Decoded {
  int32_t digits = 0;
  int64_t lowest = 0, highest = 0;
  std::vector<uint64_t> counts;
};

// The V2 compressed encoding, as HdrHistogram documents it.
Decoded decode(const std::string& b64) {
  const std::string outer = unbase64(b64);
  EXPECT_EQ(get_be(outer, 0, 4), 0x1c849314u);
  const uint64_t len = get_be(outer, 4, 4);
  EXPECT_EQ(len + 8, outer.size());
  std::string inner(1 << 20, '\0');
  uLongf size = inner.size();
  EXPECT_EQ(uncompress(reinterpret_cast<Bytef*>(inner.data()), &size,
                       reinterpret_cast<const Bytef*>(outer.data() + 8), static_cast<uLong>(len)),
            Z_OK);
  inner.resize(size);
  Decoded d;
  EXPECT_EQ(get_be(inner, 0, 4), 0x1c849313u);
  const uint64_t payload = get_be(inner, 4, 4);
  EXPECT_EQ(payload + 40, inner.size());
  EXPECT_EQ(get_be(inner, 8, 4), 0u);  // normalizing offset
  d.digits = static_cast<int32_t>(get_be(inner, 12, 4));
  d.lowest = static_cast<int64_t>(get_be(inner, 16, 8));
  d.highest = static_cast<int64_t>(get_be(inner, 24, 8));
  const uint64_t ratio = get_be(inner, 32, 8);
  double r = 0;
  std::memcpy(&r, &ratio, sizeof r);
  EXPECT_EQ(r, 1.0);
  for (size_t at = 40; at < inner.size();) {
    uint64_t u = 0;
    int shift = 0;
    for (int i = 0; i < 9; ++i) {
      const auto b = static_cast<uint8_t>(inner.at(at++));
      if (i == 8) {
        u |= static_cast<uint64_t>(b) << 56;
        break;
      }
      u |= static_cast<uint64_t>(b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) == 0) break;
    }
    const int64_t v = static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
    if (v < 0)
      d.counts.insert(d.counts.end(), static_cast<size_t>(-v), 0);
    else
      d.counts.push_back(static_cast<uint64_t>(v));
  }
  return d;
}

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
