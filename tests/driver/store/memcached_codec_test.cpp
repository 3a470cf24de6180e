// The memcached codecs (driver/store/memcached_codec.hpp), text and binary: every reply kind and
// status, any split of the bytes, pipelined batches read whole and in order, garbage, and the
// exact bytes of the writers.
#include "store/memcached_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "codec_test_util.hpp"

namespace {

using kv::drive::store::Op;
using kv::drive::store::ReadStatus;
using kv::drive::store::Verdict;
using kv::test::be;
using kv::test::bytes_of;
using kv::test::response;
namespace mc = kv::drive::store::mc;

// ---- text ----

std::string describe(const mc::TextReply& r) {
  std::string s = std::string(mc::text_kind_name(r.kind)) + "(" + std::string(r.text) + "|" +
                  std::string(r.key) + "|" + std::string(r.value) + "|" + std::to_string(r.flags);
  if (r.has_cas) s += "|cas=" + std::to_string(r.cas);
  return s + ")";
}

// Decodes the replies to `ops` (in order) from bytes cut at `cuts`; "protocol_error" ends it,
// "need_more" marks replies that never completed.
std::vector<std::string> decode_text(std::string_view bytes, const std::vector<mc::TextOp>& ops,
                                     const std::vector<size_t>& cuts = {}) {
  mc::TextDecoder d;
  std::vector<std::string> out;
  size_t i = 0;
  bool failed = false;
  kv::test::feed_split(
      bytes, cuts, [&](std::string_view piece) { d.feed(piece); },
      [&] {
        mc::TextReply r;
        while (!failed && i < ops.size()) {
          ReadStatus s = d.next(ops[i], &r);
          if (s == ReadStatus::need_more) break;
          if (s == ReadStatus::protocol_error) {
            out.push_back(std::string("protocol_error: ") + std::string(d.error()));
            failed = true;
            break;
          }
          out.push_back(describe(r));
          ++i;
        }
      });
  if (!failed && i < ops.size()) out.push_back("need_more");
  return out;
}

using T = mc::TextOp;

const std::string kTextBatch = bytes_of(
    "STORED\r\n"
    "NOT_STORED\r\n"
    "EXISTS\r\n"
    "NOT_FOUND\r\n"
    "SERVER_ERROR object too large for cache\r\n"
    "SERVER_ERROR out of memory storing object\r\n"
    "CLIENT_ERROR bad data chunk\r\n"
    "ERROR\r\n"
    "VALUE key:1 42 13\r\nab\r\nEND\r\n\0xyz\r\nEND\r\n"  // the value holds CRLF, END, NUL
    "END\r\n"
    "VALUE k 0 0 77\r\n\r\nEND\r\n"
    "SERVER_ERROR busy\r\n"
    "VERSION 1.6.18\r\n");
const std::vector<mc::TextOp> kTextOps = {
    T::storage, T::storage, T::storage, T::storage, T::storage, T::storage, T::storage,
    T::storage, T::get,     T::get,     T::gets,    T::get,     T::version};

TEST(MemcachedText, EveryReplyKind) {
  std::vector<std::string> want = {"stored(|||0)",
                                   "not_stored(|||0)",
                                   "exists(|||0)",
                                   "not_found(|||0)",
                                   "server_error(object too large for cache|||0)",
                                   "server_error(out of memory storing object|||0)",
                                   "client_error(bad data chunk|||0)",
                                   "error(|||0)",
                                   bytes_of("value(|key:1|ab\r\nEND\r\n\0xyz|42)"),
                                   "end(|||0)",
                                   "value(|k||0|cas=77)",
                                   "server_error(busy|||0)",
                                   "version(1.6.18|||0)"};
  EXPECT_EQ(decode_text(kTextBatch, kTextOps), want);
  std::vector<Verdict> verdicts;
  mc::TextDecoder d;
  d.feed(kTextBatch);
  mc::TextReply r;
  for (T op : kTextOps) {
    ASSERT_EQ(d.next(op, &r), ReadStatus::reply);
    verdicts.push_back(mc::text_verdict(op, r));
  }
  EXPECT_EQ(verdicts,
            (std::vector<Verdict>{Verdict::ok, Verdict::not_stored, Verdict::not_stored,
                                  Verdict::not_stored, Verdict::error, Verdict::error,
                                  Verdict::error, Verdict::error, Verdict::hit, Verdict::miss,
                                  Verdict::hit, Verdict::error, Verdict::ok}));
  EXPECT_EQ(d.buffered(), 0u);
}

// delete, incr/decr and touch: their own replies, found or not, at any split.
const std::string kKeyOpBatch = bytes_of(
    "DELETED\r\nNOT_FOUND\r\n18446744073709551615\r\n0\r\nNOT_FOUND\r\n"
    "CLIENT_ERROR cannot increment or decrement non-numeric value\r\nTOUCHED\r\nNOT_FOUND\r\n");
const std::vector<mc::TextOp> kKeyOps = {T::del,   T::del,   T::arith, T::arith,
                                         T::arith, T::arith, T::touch, T::touch};

TEST(MemcachedText, DeleteArithAndTouchReplies) {
  const std::vector<std::string> want = {"deleted(|||0)",
                                         "not_found(|||0)",
                                         "number(18446744073709551615|||0)",
                                         "number(0|||0)",
                                         "not_found(|||0)",
                                         "client_error(cannot increment or decrement "
                                         "non-numeric value|||0)",
                                         "touched(|||0)",
                                         "not_found(|||0)"};
  EXPECT_EQ(decode_text(kKeyOpBatch, kKeyOps), want);
  for (size_t cut = 0; cut <= kKeyOpBatch.size(); ++cut)
    EXPECT_EQ(decode_text(kKeyOpBatch, kKeyOps, {cut}), want) << "cut at " << cut;
  mc::TextDecoder d;
  d.feed(kKeyOpBatch);
  mc::TextReply r;
  std::vector<Verdict> verdicts;
  for (T op : kKeyOps) {
    ASSERT_EQ(d.next(op, &r), ReadStatus::reply);
    verdicts.push_back(mc::text_verdict(op, r));
  }
  EXPECT_EQ(verdicts,
            (std::vector<Verdict>{Verdict::hit, Verdict::miss, Verdict::hit, Verdict::hit,
                                  Verdict::miss, Verdict::error, Verdict::hit, Verdict::miss}));
  // A reply of another command's kind is out of step: a protocol error, not a verdict.
  for (const auto& [op, line] : std::vector<std::pair<T, std::string>>{
           {T::del, "STORED\r\n"}, {T::arith, "-1\r\n"}, {T::touch, "DELETED\r\n"}}) {
    mc::TextDecoder bad;
    bad.feed(line);
    EXPECT_EQ(bad.next(op, &r), ReadStatus::protocol_error) << line;
  }
}

TEST(MemcachedText, SplitAtEveryByteDecodesIdentically) {
  auto whole = decode_text(kTextBatch, kTextOps);
  ASSERT_EQ(whole.size(), kTextOps.size());
  for (size_t cut = 0; cut <= kTextBatch.size(); ++cut)
    EXPECT_EQ(decode_text(kTextBatch, kTextOps, {cut}), whole) << "cut at " << cut;
  std::vector<size_t> every;
  for (size_t i = 1; i < kTextBatch.size(); ++i) every.push_back(i);
  EXPECT_EQ(decode_text(kTextBatch, kTextOps, every), whole) << "one byte at a time";
}

TEST(MemcachedText, IncompleteReplyConsumesNothing) {
  mc::TextDecoder d;
  mc::TextReply r;
  d.feed("VALUE k 0 5\r\nhel");
  EXPECT_EQ(d.next(T::get, &r), ReadStatus::need_more);
  d.feed("lo\r\nEN");
  EXPECT_EQ(d.next(T::get, &r), ReadStatus::need_more);
  d.feed("D\r\nSTO");
  ASSERT_EQ(d.next(T::get, &r), ReadStatus::reply);
  EXPECT_EQ(r.value, "hello");
  EXPECT_EQ(d.next(T::storage, &r), ReadStatus::need_more);
  EXPECT_EQ(d.buffered(), 3u);
}

TEST(MemcachedText, GarbageIsAStickyProtocolError) {
  struct Case {
    std::string bytes;
    mc::TextOp op;
  };
  std::vector<Case> cases = {
      {std::string(3000, 'x'), T::storage},           // no line end within the limit
      {"END\r\n", T::storage},                        // a get's reply to a set
      {"STORED\r\n", T::get},                         // a set's reply to a get
      {"VALUE k x 3\r\nabc\r\nEND\r\n", T::get},      // flags not a number
      {"VALUE k 0 -3\r\nabc\r\nEND\r\n", T::get},     // negative length
      {"VALUE k 0 3 1 2\r\nabc\r\nEND\r\n", T::get},  // extra token
      {"VALUE  0 3\r\nabc\r\nEND\r\n", T::get},       // empty key
      {"VALUE k 0 3\r\nabcd\r\nEND\r\n", T::get},     // value longer than declared
      {"VALUE k 0 3\r\nabc\r\nVALUE k 0 3\r\nabc\r\nEND\r\n", T::get},  // two values, one key
      {"VALUE k 0 99999999999999999999\r\n", T::get},                   // length overflows
      {"VALUE k 0 2000000000\r\n", T::get},                             // over the limit
      {"STOREDX\r\n", T::storage},
      {"VERSION\r\n", T::storage},
      {"SERVER_ERRORX\r\n", T::storage},
  };
  for (const auto& c : cases) {
    mc::TextDecoder d;
    mc::TextReply r;
    d.feed("STORED\r\n" + c.bytes);
    ASSERT_EQ(d.next(T::storage, &r), ReadStatus::reply);
    EXPECT_EQ(d.next(c.op, &r), ReadStatus::protocol_error) << c.bytes;
    EXPECT_FALSE(d.error().empty());
    d.feed("STORED\r\n");
    EXPECT_EQ(d.next(T::storage, &r), ReadStatus::protocol_error) << "sticky: " << c.bytes;
  }
}

TEST(MemcachedText, RandomBytesNeverCrashOrLoop) {
  std::mt19937 rng(11);
  const std::vector<std::string> words = {"VALUE ", "END", "\r\n",  "STORED",        " ",  "0",
                                          "5",      "k",   "ERROR", "SERVER_ERROR ", "\n", "x"};
  for (int round = 0; round < 3000; ++round) {
    std::string bytes;
    for (int w = static_cast<int>(rng() % 12); w > 0; --w) bytes += words[rng() % words.size()];
    mc::TextDecoder d;
    d.feed(bytes);
    mc::TextReply r;
    int steps = 0;
    while (d.next(static_cast<T>(rng() % 4), &r) == ReadStatus::reply) ASSERT_LT(++steps, 64);
  }
}

TEST(MemcachedTextWriters, ExactBytesAndKeysRefused) {
  std::string out;
  EXPECT_TRUE(mc::append_text_set(out, "key:1", bytes_of("a\r\n\0"), 7, 60));
  EXPECT_EQ(out, bytes_of("set key:1 7 60 4\r\na\r\n\0\r\n"));
  out.clear();
  EXPECT_TRUE(mc::append_text_get(out, "k"));
  EXPECT_TRUE(mc::append_text_gets(out, "k2"));
  mc::append_text_version(out);
  EXPECT_EQ(out, "get k\r\ngets k2\r\nversion\r\n");
  for (std::string bad : {std::string(), std::string("a b"), std::string("a\rb"),
                          std::string(251, 'k'), std::string("a\x7f")}) {
    out = "keep";
    EXPECT_FALSE(mc::append_text_set(out, bad, "v")) << bad;
    EXPECT_FALSE(mc::append_text_get(out, bad)) << bad;
    EXPECT_EQ(out, "keep");
  }
  EXPECT_TRUE(mc::append_text_get(out, std::string(250, 'k')));
  out.clear();
  EXPECT_TRUE(mc::append_text_store(out, "add", "k", "ab", 1, 60));
  EXPECT_TRUE(mc::append_text_store(out, "prepend", "k", "c"));
  EXPECT_TRUE(mc::append_text_delete(out, "k"));
  EXPECT_TRUE(mc::append_text_arith(out, true, "n", 1));
  EXPECT_TRUE(mc::append_text_arith(out, false, "n", 18446744073709551615ULL));
  EXPECT_TRUE(mc::append_text_touch(out, "k", 300));
  EXPECT_TRUE(mc::append_text_cas(out, "k", "xyz", 18446744073709551615ULL, 0, 5));
  EXPECT_EQ(out,
            "add k 1 60 2\r\nab\r\nprepend k 0 0 1\r\nc\r\ndelete k\r\nincr n 1\r\n"
            "decr n 18446744073709551615\r\ntouch k 300\r\n"
            "cas k 0 5 3 18446744073709551615\r\nxyz\r\n");
  out = "keep";
  EXPECT_FALSE(mc::append_text_delete(out, "a b"));
  EXPECT_FALSE(mc::append_text_arith(out, true, "", 1));
  EXPECT_FALSE(mc::append_text_touch(out, std::string(251, 'k'), 1));
  EXPECT_FALSE(mc::append_text_store(out, "add", "a\rb", "v"));
  EXPECT_FALSE(mc::append_text_cas(out, "a b", "v", 1));
  EXPECT_EQ(out, "keep");
}

// ---- binary ----

std::string describe(const mc::BinaryReply& r) {
  return std::to_string(r.opcode) + "/" + std::to_string(r.status) + "/" +
         std::to_string(r.opaque) + "/" + std::to_string(r.cas) + "/" + std::to_string(r.flags) +
         "/" + std::string(r.key) + "/" + std::string(r.value);
}

std::vector<std::string> decode_binary(std::string_view bytes,
                                       const std::vector<size_t>& cuts = {}) {
  mc::BinaryDecoder d;
  std::vector<std::string> out;
  bool failed = false;
  kv::test::feed_split(
      bytes, cuts, [&](std::string_view piece) { d.feed(piece); },
      [&] {
        mc::BinaryReply r;
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

namespace st = mc::status;

// A pipelined batch: sets stored / too large / out of memory / not stored, gets hit (with
// flags) / miss, a getk hit, an unknown command, noop and version.
std::string binary_batch() {
  return response(0x01, st::kOk, 1, "", "", "", 5) +
         response(0x01, st::kValueTooLarge, 2, "", "", "Too large.") +
         response(0x01, st::kOutOfMemory, 3, "", "", "Out of memory") +
         response(0x01, st::kNotStored, 4, "", "", "Not stored.") +
         response(0x00, st::kOk, 5, be(42, 4), "", bytes_of("v\r\n\0\x81"), 9) +
         response(0x00, st::kKeyNotFound, 6, "", "", "Not found") +
         response(0x0c, st::kOk, 7, be(0, 4), "key:7", "seven") +
         response(0x01, st::kUnknownCommand, 8, "", "", "Unknown command") +
         response(0x0a, st::kOk, 9, "", "", "") + response(0x0b, st::kOk, 10, "", "", "1.6.18");
}

TEST(MemcachedBinary, EveryStatusAndOpcode) {
  std::vector<std::string> want = {"1/0/1/5/0//",
                                   "1/3/2/0/0//Too large.",
                                   "1/130/3/0/0//Out of memory",
                                   "1/5/4/0/0//Not stored.",
                                   bytes_of("0/0/5/9/42//v\r\n\0\x81"),
                                   "0/1/6/0/0//Not found",
                                   "12/0/7/0/0/key:7/seven",
                                   "1/129/8/0/0//Unknown command",
                                   "10/0/9/0/0//",
                                   "11/0/10/0/0//1.6.18"};
  std::string batch = binary_batch();
  EXPECT_EQ(decode_binary(batch), want);
  std::vector<Op> ops = {Op::set, Op::set, Op::set, Op::set,   Op::get,
                         Op::get, Op::get, Op::set, Op::other, Op::other};
  mc::BinaryDecoder d;
  d.feed(batch);
  mc::BinaryReply r;
  std::vector<Verdict> verdicts;
  for (Op op : ops) {
    ASSERT_EQ(d.next(&r), ReadStatus::reply);
    verdicts.push_back(mc::binary_verdict(op, r));
  }
  EXPECT_EQ(verdicts,
            (std::vector<Verdict>{Verdict::ok, Verdict::error, Verdict::error, Verdict::not_stored,
                                  Verdict::hit, Verdict::miss, Verdict::hit, Verdict::error,
                                  Verdict::ok, Verdict::ok}));
  EXPECT_EQ(d.next(&r), ReadStatus::need_more);
  // A reply of the wrong opcode for its request is a mismatch, whatever its status.
  EXPECT_EQ(mc::binary_verdict(Op::get, mc::BinaryReply{0x01, 0, 0, 0, 0, {}, {}, {}}),
            Verdict::mismatch);
  EXPECT_EQ(mc::binary_verdict(Op::set, mc::BinaryReply{0x00, 0, 0, 0, 0, {}, {}, {}}),
            Verdict::mismatch);
}

TEST(MemcachedBinary, SplitAtEveryByteDecodesIdentically) {
  std::string batch = binary_batch();
  auto whole = decode_binary(batch);
  ASSERT_EQ(whole.size(), 10u);
  for (size_t cut = 0; cut <= batch.size(); ++cut)
    EXPECT_EQ(decode_binary(batch, {cut}), whole) << "cut at " << cut;
  std::vector<size_t> every;
  for (size_t i = 1; i < batch.size(); ++i) every.push_back(i);
  EXPECT_EQ(decode_binary(batch, every), whole);
}

TEST(MemcachedBinary, GarbageIsAStickyProtocolError) {
  std::string bad_magic = response(0x00, 0, 1, "", "", "x");
  bad_magic[0] = static_cast<char>(0x80);  // a request, not a response
  std::string key_past_body = response(0x00, 0, 1, "", "", "");
  key_past_body[3] = 5;  // key length 5, body 0
  std::string huge = response(0x00, 0, 1, "", "", "");
  huge.replace(8, 4, be(0xffffffffu, 4));
  for (const std::string& bad : {bad_magic, key_past_body, huge, std::string("garbage")}) {
    mc::BinaryDecoder d(1 << 20);
    d.feed(response(0x0a, 0, 0, "", "", "") + bad);
    mc::BinaryReply r;
    ASSERT_EQ(d.next(&r), ReadStatus::reply);
    EXPECT_EQ(d.next(&r), ReadStatus::protocol_error);
    EXPECT_FALSE(d.error().empty());
    d.feed(response(0x0a, 0, 0, "", "", ""));
    EXPECT_EQ(d.next(&r), ReadStatus::protocol_error);
  }
}

TEST(MemcachedBinary, RandomBytesNeverCrashOrLoop) {
  std::mt19937 rng(13);
  for (int round = 0; round < 3000; ++round) {
    std::string bytes = response(static_cast<uint8_t>(rng()), static_cast<uint16_t>(rng() % 4),
                                 static_cast<uint32_t>(rng()), "", "", std::string(rng() % 8, 'v'));
    for (int flips = static_cast<int>(rng() % 4); flips > 0; --flips)
      bytes[rng() % bytes.size()] = static_cast<char>(rng());
    mc::BinaryDecoder d(4096);
    d.feed(bytes);
    mc::BinaryReply r;
    int steps = 0;
    while (d.next(&r) == ReadStatus::reply) ASSERT_LT(++steps, 4);
  }
}

TEST(MemcachedBinaryWriters, ExactBytes) {
  std::string out;
  EXPECT_TRUE(mc::append_binary_get(out, "abc", 0x01020304));
  EXPECT_EQ(out, bytes_of("\x80\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\x03\x01\x02\x03\x04"
                          "\0\0\0\0\0\0\0\0abc"));
  out.clear();
  EXPECT_TRUE(mc::append_binary_set(out, "k", "val", 7, 0xdeadbeef, 60, 5));
  EXPECT_EQ(out, bytes_of("\x80\x01\x00\x01\x08\x00\x00\x00\x00\x00\x00\x0c\x00\x00\x00\x07"
                          "\0\0\0\0\0\0\0\x05\xde\xad\xbe\xef\0\0\0\x3c"
                          "kval"));
  out.clear();
  EXPECT_TRUE(mc::append_binary_getk(out, "k", 1));
  mc::append_binary_noop(out, 2);
  mc::append_binary_version(out, 3);
  ASSERT_EQ(out.size(), 25u + 24 + 24);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0x0c);
  EXPECT_EQ(static_cast<uint8_t>(out[25 + 1]), 0x0a);
  EXPECT_EQ(static_cast<uint8_t>(out[49 + 1]), 0x0b);
  out = "keep";
  EXPECT_FALSE(mc::append_binary_get(out, "", 1));
  EXPECT_FALSE(mc::append_binary_set(out, std::string(251, 'k'), "v", 1));
  EXPECT_EQ(out, "keep");
  // delete: no extras; increment: delta, initial, expiration all ones (never create); touch:
  // the expiry; add as a set; append with no extras.
  out.clear();
  EXPECT_TRUE(mc::append_binary_delete(out, "k", 9));
  EXPECT_EQ(out, bytes_of("\x80\x04\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x09"
                          "\0\0\0\0\0\0\0\0k"));
  out.clear();
  EXPECT_TRUE(mc::append_binary_arith(out, false, "n", 2, 1));
  EXPECT_EQ(out, bytes_of("\x80\x06\x00\x01\x14\x00\x00\x00\x00\x00\x00\x15\x00\x00\x00\x01"
                          "\0\0\0\0\0\0\0\0"
                          "\0\0\0\0\0\0\0\x02\0\0\0\0\0\0\0\0\xff\xff\xff\xff"
                          "n"));
  out.clear();
  EXPECT_TRUE(mc::append_binary_touch(out, "k", 60, 1));
  EXPECT_EQ(out, bytes_of("\x80\x1c\x00\x01\x04\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x01"
                          "\0\0\0\0\0\0\0\0\0\0\0\x3ck"));
  out.clear();
  EXPECT_TRUE(mc::append_binary_store(out, mc::BinaryOpcode::add, "k", "v", 1, 0, 60));
  EXPECT_EQ(out.size(), 24u + 8 + 1 + 1);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0x02);
  EXPECT_EQ(static_cast<uint8_t>(out[4]), 8);
  out.clear();
  EXPECT_TRUE(mc::append_binary_store(out, mc::BinaryOpcode::append, "k", "v", 1));
  EXPECT_EQ(out.size(), 24u + 1 + 1);
  EXPECT_EQ(static_cast<uint8_t>(out[1]), 0x0e);
  EXPECT_EQ(static_cast<uint8_t>(out[4]), 0);
}

// The verdict of a binary reply for each kind of request: its own opcode's statuses, and any
// other opcode a mismatch.
TEST(MemcachedBinary, VerdictsOfTheKeyOps) {
  auto reply = [](mc::BinaryOpcode opcode, uint16_t status) {
    mc::BinaryReply r;
    r.opcode = static_cast<uint8_t>(opcode);
    r.status = status;
    return r;
  };
  using B = mc::BinaryOpcode;
  namespace st = mc::status;
  EXPECT_EQ(mc::binary_verdict(Op::del, reply(B::del, st::kOk)), Verdict::hit);
  EXPECT_EQ(mc::binary_verdict(Op::del, reply(B::del, st::kKeyNotFound)), Verdict::miss);
  EXPECT_EQ(mc::binary_verdict(Op::arith, reply(B::decrement, st::kOk)), Verdict::hit);
  EXPECT_EQ(mc::binary_verdict(Op::arith, reply(B::increment, st::kNonNumeric)), Verdict::error);
  EXPECT_EQ(mc::binary_verdict(Op::touch, reply(B::touch, st::kKeyNotFound)), Verdict::miss);
  EXPECT_EQ(mc::binary_verdict(Op::set, reply(B::add, st::kKeyExists)), Verdict::not_stored);
  EXPECT_EQ(mc::binary_verdict(Op::set, reply(B::replace, st::kKeyNotFound)), Verdict::not_stored);
  EXPECT_EQ(mc::binary_verdict(Op::append, reply(B::prepend, st::kNotStored)), Verdict::not_stored);
  EXPECT_EQ(mc::binary_verdict(Op::append, reply(B::append, st::kOk)), Verdict::ok);
  EXPECT_EQ(mc::binary_verdict(Op::del, reply(B::get, st::kOk)), Verdict::mismatch);
  EXPECT_EQ(mc::binary_verdict(Op::append, reply(B::set, st::kOk)), Verdict::mismatch);
  EXPECT_EQ(mc::binary_verdict(Op::arith, reply(B::touch, st::kOk)), Verdict::mismatch);
}

}  // namespace
