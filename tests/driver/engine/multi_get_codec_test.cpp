// An mget (--multi-key-get) on each wire: the exact bytes a link writes for it, and how its
// reply is read, whole and split at every byte: the keys found, their bytes and the verdict.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../store/codec_test_util.hpp"
#include "engine/loop/codec.hpp"
#include "kvbench/op_type.hpp"

namespace {
using namespace kv::drive;
using kv::OpType;
using kv::test::be;
using kv::test::response;
namespace st = kv::drive::store;

struct Read {
  st::Verdict verdict;
  uint32_t found;
  uint64_t bytes;
  bool operator==(const Read& o) const {
    return verdict == o.verdict && found == o.found && bytes == o.bytes;
  }
};

// The replies to `n` mgets in `bytes`, fed whole or in two pieces cut at `cut`; a protocol
// error or a reply still incomplete at the end ends the list.
std::vector<Read> read_mgets(loop::Wire wire, const std::string& bytes, size_t n,
                             size_t cut = std::string::npos) {
  loop::Codec codec(wire);
  std::vector<Read> out;
  bool failed = false;
  kv::test::feed_split(
      bytes, cut < bytes.size() ? std::vector<size_t>{cut} : std::vector<size_t>{},
      [&](std::string_view piece) { failed = failed || !codec.feed(piece); },
      [&] {
        while (!failed && out.size() < n) {
          st::Verdict v{};
          std::string_view value;
          const st::ReadStatus s = codec.next(st::Op::mget, &v, &value);
          failed = s == st::ReadStatus::protocol_error;
          if (s != st::ReadStatus::reply) return;
          out.push_back({v, codec.last_multi().found, codec.last_multi().bytes});
        }
      });
  return out;
}

void expect_any_split(loop::Wire wire, const std::string& bytes, const std::vector<Read>& want) {
  EXPECT_EQ(read_mgets(wire, bytes, want.size()), want);
  for (size_t cut = 1; cut < bytes.size(); ++cut)
    EXPECT_EQ(read_mgets(wire, bytes, want.size(), cut), want) << "cut at " << cut;
}

TEST(MultiGetCodec, RespWritesMgetAndCountsTheArraysValues) {
  loop::Codec resp(loop::Wire::resp);
  std::string out;
  ASSERT_TRUE(resp.append(out, OpType::mget, "kv:1 kv:22 kv:~miss:3", "", 0));
  EXPECT_EQ(out, "*4\r\n$4\r\nMGET\r\n$4\r\nkv:1\r\n$5\r\nkv:22\r\n$10\r\nkv:~miss:3\r\n");
  EXPECT_EQ(loop::Codec::reply_kind(OpType::mget), st::Op::mget);
  // Two found of three (one empty value), none of two, then one inside a nested array is not
  // counted (an MGET never nests: a mismatch would be its verdict anyway, not a hit).
  expect_any_split(
      loop::Wire::resp,
      "*3\r\n$2\r\nab\r\n$-1\r\n$0\r\n\r\n"
      "*2\r\n$-1\r\n$-1\r\n"
      "*2\r\n*1\r\n$1\r\nx\r\n$-1\r\n",
      {{st::Verdict::hit, 2, 2}, {st::Verdict::miss, 0, 0}, {st::Verdict::miss, 0, 0}});
  EXPECT_EQ(read_mgets(loop::Wire::resp, "$3\r\nabc\r\n", 1).at(0).verdict, st::Verdict::mismatch);
  EXPECT_EQ(read_mgets(loop::Wire::resp, "-ERR wrong\r\n", 1).at(0).verdict, st::Verdict::error);
  // An mset: each key beside its value; the keys and values must pair up.
  out.clear();
  ASSERT_TRUE(resp.append_mset(out, "a bb", {"1", ""}));
  EXPECT_EQ(out, "*5\r\n$4\r\nMSET\r\n$1\r\na\r\n$1\r\n1\r\n$2\r\nbb\r\n$0\r\n\r\n");
  EXPECT_FALSE(resp.append_mset(out, "a bb", {"1"}));
  EXPECT_FALSE(loop::Codec(loop::Wire::text).append_mset(out, "a", {"1"}));
  EXPECT_EQ(loop::Codec::reply_kind(OpType::mset), st::Op::set);
}

TEST(MultiGetCodec, TextWritesOneGetLineAndCountsEveryValueBlock) {
  loop::Codec text(loop::Wire::text);
  std::string out;
  ASSERT_TRUE(text.append(out, OpType::mget, "kv:1 kv:22", "", 0));
  EXPECT_EQ(out, "get kv:1 kv:22\r\n");
  EXPECT_FALSE(text.append(out, OpType::mget, "kv:1  kv:2", "", 0));  // an empty key
  EXPECT_FALSE(text.append(out, OpType::mget, std::string(251, 'k') + " kv:2", "", 0));
  EXPECT_EQ(out, "get kv:1 kv:22\r\n");
  // Three found (the last value holds "END\r\n"), then none, then an error line.
  expect_any_split(
      loop::Wire::text,
      "VALUE a 0 2\r\nxy\r\nVALUE b 1 0\r\n\r\nVALUE c 0 5 7\r\nEND\r\n\r\nEND\r\n"
      "END\r\n"
      "SERVER_ERROR out of memory\r\n",
      {{st::Verdict::hit, 3, 7}, {st::Verdict::miss, 0, 0}, {st::Verdict::error, 0, 0}});
  // Anything but VALUE or END after the first block is out of step.
  EXPECT_TRUE(read_mgets(loop::Wire::text, "VALUE a 0 1\r\nx\r\nSTORED\r\n", 1).empty());
}

TEST(MultiGetCodec, BinaryWritesQuietGetsThenANoopAndCountsTheHitsBeforeIt) {
  loop::Codec binary(loop::Wire::binary);
  std::string out;
  ASSERT_TRUE(binary.append(out, OpType::mget, "a bb", "", 0));
  // getkq a (opaque 0), getkq bb (1), noop (2): 24-byte headers, each key its body.
  ASSERT_EQ(out.size(), 24u + 1 + 24 + 2 + 24);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0x0d);
  EXPECT_EQ(out.substr(24, 1), "a");
  EXPECT_EQ(static_cast<uint8_t>(out[25 + 1]), 0x0d);
  EXPECT_EQ(out.substr(25 + 24, 2), "bb");
  EXPECT_EQ(static_cast<uint8_t>(out[51 + 1]), 0x0a);
  EXPECT_EQ(out.substr(51 + 12, 4), be(2, 4));
  // A key the protocol cannot carry: nothing appended.
  EXPECT_FALSE(binary.append(out, OpType::mget, "a " + std::string(251, 'k'), "", 0));
  EXPECT_EQ(out.size(), 24u + 1 + 24 + 2 + 24);

  // Two hits then the noop; the noop alone (all missed); a quiet get's error then the noop.
  expect_any_split(
      loop::Wire::binary,
      response(0x0d, 0, 0, be(0, 4), "a", "xyz") + response(0x0d, 0, 1, be(0, 4), "bb", "") +
          response(0x0a, 0, 2, "", "", "") + response(0x0a, 0, 5, "", "", "") +
          response(0x0d, 0x82, 6, "", "", "Out of memory") + response(0x0a, 0, 8, "", "", ""),
      {{st::Verdict::hit, 2, 3}, {st::Verdict::miss, 0, 0}, {st::Verdict::error, 0, 0}});
  // A reply of another kind where the noop should be: out of step.
  EXPECT_EQ(read_mgets(loop::Wire::binary, response(0x01, 0, 0, "", "", ""), 1).at(0).verdict,
            st::Verdict::mismatch);
}

}  // namespace
