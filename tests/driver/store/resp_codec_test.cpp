// The RESP codec (driver/store/resp_codec.hpp): every reply kind, any split of the bytes,
// pipelined batches matched to their requests, garbage, and the exact bytes of the writers.
#include "store/resp_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "codec_test_util.hpp"

namespace {

using kv::drive::store::ExpectFifo;
using kv::drive::store::Op;
using kv::drive::store::ReadStatus;
using kv::drive::store::RespDecoder;
using kv::drive::store::RespKind;
using kv::drive::store::RespReply;
using kv::drive::store::Verdict;
namespace resp = kv::drive::store::resp;
using kv::test::bytes_of;

std::string describe(const RespReply& r) {
  return std::string(kv::drive::store::resp_kind_name(r.kind)) + "(" + std::string(r.text) + "," +
         std::to_string(r.integer) + ")";
}

// Every reply of `bytes` fed in pieces cut at `cuts`; "protocol_error" ends the list.
std::vector<std::string> decode(std::string_view bytes, const std::vector<size_t>& cuts = {}) {
  RespDecoder d;
  std::vector<std::string> out;
  bool failed = false;
  kv::test::feed_split(
      bytes, cuts, [&](std::string_view piece) { d.feed(piece); },
      [&] {
        RespReply r;
        while (!failed) {
          ReadStatus s = d.next(&r);
          if (s == ReadStatus::need_more) break;
          if (s == ReadStatus::protocol_error) {
            out.push_back("protocol_error");
            failed = true;
            break;
          }
          out.push_back(describe(r));
        }
      });
  return out;
}

const char kEveryKindBytes[] =
    "+OK\r\n"
    "$5\r\nhello\r\n"
    "$-1\r\n"
    "-ERR wrong number of arguments\r\n"
    ":42\r\n"
    ":-7\r\n"
    "*2\r\n$1\r\na\r\n:1\r\n"
    "*-1\r\n"
    "*0\r\n"
    "$0\r\n\r\n"
    "$6\r\na\r\n\0b\n\r\n"  // binary-safe: CR LF and NUL inside a bulk
    "*2\r\n*1\r\n+x\r\n$-1\r\n"
    "+PONG\r\n";
const std::string kEveryKind = bytes_of(kEveryKindBytes);

TEST(RespDecoder, EveryReplyKind) {
  auto replies = decode(kEveryKind);
  std::vector<std::string> want = {"status(OK,0)",
                                   "bulk(hello,0)",
                                   "nil(,0)",
                                   "error(ERR wrong number of arguments,0)",
                                   "integer(,42)",
                                   "integer(,-7)",
                                   "array(,2)",
                                   "nil(,0)",
                                   "array(,0)",
                                   "bulk(,0)",
                                   bytes_of("bulk(a\r\n\0b\n,0)"),
                                   "array(,2)",
                                   "status(PONG,0)"};
  EXPECT_EQ(replies, want);
}

TEST(RespDecoder, SplitAtEveryByteDecodesIdentically) {
  auto whole = decode(kEveryKind);
  ASSERT_EQ(whole.size(), 13u);
  for (size_t cut = 0; cut <= kEveryKind.size(); ++cut)
    EXPECT_EQ(decode(kEveryKind, {cut}), whole) << "cut at " << cut;
  std::vector<size_t> every;
  for (size_t i = 1; i < kEveryKind.size(); ++i) every.push_back(i);
  EXPECT_EQ(decode(kEveryKind, every), whole) << "one byte at a time";
}

TEST(RespDecoder, LargeValueInPiecesAndViewValidUntilNextCall) {
  std::string value(100'000, 'v');
  for (size_t i = 0; i < value.size(); ++i) value[i] = static_cast<char>('a' + i % 26);
  std::string bytes;
  resp::append_bulk(bytes, value);
  bytes += "$3\r\nabc\r\n";
  RespDecoder d;
  RespReply r;
  for (size_t at = 0; at < bytes.size(); at += 4096) {
    ASSERT_EQ(d.next(&r), ReadStatus::need_more);
    d.feed(std::string_view(bytes).substr(at, 4096));
  }
  ASSERT_EQ(d.next(&r), ReadStatus::reply);
  EXPECT_EQ(r.kind, RespKind::bulk);
  EXPECT_EQ(r.text, value);
  ASSERT_EQ(d.next(&r), ReadStatus::reply);
  EXPECT_EQ(r.text, "abc");
  EXPECT_EQ(d.next(&r), ReadStatus::need_more);
}

TEST(RespDecoder, PipelinedBatchMatchedInOrder) {
  // 3 sets (one refused by maxmemory), 4 gets (hit, miss, hit, wrong type), a PING.
  ExpectFifo<Op> fifo(16);
  for (Op op : {Op::set, Op::set, Op::set, Op::get, Op::get, Op::get, Op::get, Op::other})
    ASSERT_TRUE(fifo.push(op));
  std::string bytes =
      "+OK\r\n-OOM command not allowed when used memory > 'maxmemory'.\r\n+OK\r\n"
      "$3\r\none\r\n$-1\r\n$5\r\nthree\r\n"
      "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n+PONG\r\n";
  std::vector<Verdict> want = {Verdict::ok,   Verdict::error, Verdict::ok,    Verdict::hit,
                               Verdict::miss, Verdict::hit,   Verdict::error, Verdict::ok};
  for (size_t cut = 0; cut <= bytes.size(); cut += 7) {
    RespDecoder d;
    ExpectFifo<Op> q = fifo;
    std::vector<Verdict> got;
    std::vector<std::string> values;
    for (std::string_view piece :
         {std::string_view(bytes).substr(0, cut), std::string_view(bytes).substr(cut)}) {
      d.feed(piece);
      RespReply r;
      while (d.next(&r) == ReadStatus::reply) {
        ASSERT_FALSE(q.empty());
        got.push_back(kv::drive::store::resp_verdict(q.front(), r));
        if (got.back() == Verdict::hit) values.emplace_back(r.text);
        q.pop();
      }
    }
    EXPECT_EQ(got, want) << "cut at " << cut;
    EXPECT_EQ(values, (std::vector<std::string>{"one", "three"}));
    EXPECT_TRUE(q.empty());
  }
}

TEST(RespDecoder, VerdictsOfMismatchedReplies) {
  using kv::drive::store::resp_verdict;
  RespReply integer{RespKind::integer, {}, 3};
  EXPECT_EQ(resp_verdict(Op::get, integer), Verdict::mismatch);
  EXPECT_EQ(resp_verdict(Op::set, integer), Verdict::mismatch);
  EXPECT_EQ(resp_verdict(Op::other, integer), Verdict::ok);
  EXPECT_EQ(resp_verdict(Op::set, RespReply{RespKind::nil, {}, 0}), Verdict::not_stored);
  EXPECT_EQ(resp_verdict(Op::get, RespReply{RespKind::status, "OK", 0}), Verdict::mismatch);
  // DEL / EXPIRE: 1 found, 0 not; INCR: its new value (any integer, negative too); APPEND: the
  // new length; anything else out of step.
  EXPECT_EQ(resp_verdict(Op::del, RespReply{RespKind::integer, {}, 1}), Verdict::hit);
  EXPECT_EQ(resp_verdict(Op::del, RespReply{RespKind::integer, {}, 0}), Verdict::miss);
  EXPECT_EQ(resp_verdict(Op::touch, RespReply{RespKind::integer, {}, 0}), Verdict::miss);
  EXPECT_EQ(resp_verdict(Op::arith, RespReply{RespKind::integer, {}, -4}), Verdict::hit);
  EXPECT_EQ(resp_verdict(Op::append, integer), Verdict::ok);
  EXPECT_EQ(resp_verdict(Op::del, RespReply{RespKind::status, "OK", 0}), Verdict::mismatch);
  EXPECT_EQ(resp_verdict(Op::arith, RespReply{RespKind::nil, {}, 0}), Verdict::mismatch);
  EXPECT_EQ(resp_verdict(Op::arith, RespReply{RespKind::error, "ERR not an integer", 0}),
            Verdict::error);
}

TEST(RespDecoder, GarbageIsAStickyProtocolError) {
  for (std::string bad : {"?what\r\n", "$abc\r\n", ":12x\r\n", "*1\r\n!\r\n",
                          "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"}) {
    RespDecoder d;
    d.feed("+OK\r\n" + bad);
    RespReply r;
    ASSERT_EQ(d.next(&r), ReadStatus::reply) << bad;
    EXPECT_EQ(d.next(&r), ReadStatus::protocol_error) << bad;
    EXPECT_FALSE(d.error().empty());
    EXPECT_EQ(d.next(&r), ReadStatus::protocol_error) << "sticky: " << bad;
    EXPECT_FALSE(d.feed("+OK\r\n"));
  }
}

TEST(RespDecoder, RandomBytesNeverCrashOrLoop) {
  std::mt19937 rng(7);
  const std::string alphabet = "+-:$*\r\n0123456789-abc";
  for (int round = 0; round < 2000; ++round) {
    std::string bytes(rng() % 64, ' ');
    for (char& c : bytes) c = alphabet[rng() % alphabet.size()];
    RespDecoder d;
    d.feed(bytes);
    RespReply r;
    int steps = 0;
    while (d.next(&r) == ReadStatus::reply) ASSERT_LT(++steps, 64) << "more replies than bytes";
  }
}

TEST(RespWriters, ExactBytes) {
  std::string out;
  resp::append_set(out, "k1", "value");
  EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$2\r\nk1\r\n$5\r\nvalue\r\n");
  out.clear();
  resp::append_set(out, "k", std::string_view("a\0b", 3), 1500);
  EXPECT_EQ(out,
            bytes_of("*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na\0b\r\n$2\r\nPX\r\n$4\r\n1500\r\n"));
  out.clear();
  resp::append_get(out, "key:000123");
  EXPECT_EQ(out, "*2\r\n$3\r\nGET\r\n$10\r\nkey:000123\r\n");
  out.clear();
  resp::append_set_if(out, "k", "v", false);
  resp::append_set_if(out, "k", "v", true, 60000);
  EXPECT_EQ(out,
            "*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nNX\r\n"
            "*6\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n$2\r\nXX\r\n$2\r\nPX\r\n$5\r\n60000\r\n");
  out.clear();
  resp::append_key_command(out, "DEL", "k");
  resp::append_key_value_command(out, "EXPIRE", "k", "300");
  EXPECT_EQ(out, "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*3\r\n$6\r\nEXPIRE\r\n$1\r\nk\r\n$3\r\n300\r\n");
  out.clear();
  resp::append_auth(out, "", "secret");
  resp::append_auth(out, "alice", "pw");
  EXPECT_EQ(out,
            "*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n*3\r\n$4\r\nAUTH\r\n$5\r\nalice\r\n$2\r\npw\r\n");
  out.clear();
  resp::append_select(out, 4294967295u);
  resp::append_ping(out);
  resp::append_info(out);
  resp::append_info(out, "commandstats");
  EXPECT_EQ(out,
            "*2\r\n$6\r\nSELECT\r\n$10\r\n4294967295\r\n*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nINFO\r\n"
            "*2\r\n$4\r\nINFO\r\n$12\r\ncommandstats\r\n");
}

TEST(RespWriters, NoAllocationOnceTheBufferHasGrown) {
  std::string out;
  std::string value(10'000, 'x');
  for (int i = 0; i < 16; ++i) resp::append_set(out, "key:0000000001", value, 60'000);
  size_t capacity = out.capacity();
  const char* data = out.data();
  for (int round = 0; round < 100; ++round) {
    out.clear();
    for (int i = 0; i < 16; ++i) resp::append_set(out, "key:0000000001", value, 60'000);
  }
  EXPECT_EQ(out.capacity(), capacity);
  EXPECT_EQ(out.data(), data);
}

TEST(ExpectFifo, RingWrapsAndRefusesWhenFull) {
  ExpectFifo<int> q(3);
  for (int round = 0; round < 5; ++round) {
    EXPECT_TRUE(q.push(round));
    EXPECT_TRUE(q.push(round + 10));
    EXPECT_TRUE(q.push(round + 20));
    EXPECT_FALSE(q.push(99));
    EXPECT_EQ(q.front(), round);
    q.pop();
    EXPECT_EQ(q.front(), round + 10);
    q.pop();
    EXPECT_EQ(q.front(), round + 20);
    q.pop();
    EXPECT_TRUE(q.empty());
  }
}

}  // namespace
