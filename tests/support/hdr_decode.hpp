// A decoder of HdrHistogram's V2 compressed histogram encoding, our own (base64, cookies,
// zlib inflate, ZigZag LEB128 counts with zero runs), for tests of what stats/hdr_log.cpp wrote.
// Link ZLIB::ZLIB.
#pragma once

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace kv::test {

inline std::string unbase64(const std::string& in) {
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

inline uint64_t get_be(const std::string& s, size_t at, int bytes) {
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
inline Decoded decode(const std::string& b64) {
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

}  // namespace kv::test
