// The wire protocol's encoder, parser and framer, without sockets.
#include "kvbench/protocol.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kv::proto {
namespace {

TEST(Protocol, EncodeParseRoundTripKeepsEveryByte) {
  std::string nasty = "a b=c%d\n\r\t\x01\x7f\xff end";
  Message m("proc");
  m.add("pid", int64_t{42}).add("load1", 0.25).add("name", nasty).add("empty", "");
  m.add("missing", std::optional<int64_t>());
  std::string line = encode(m);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "a newline escaped the value";
  auto parsed = parse_message(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const Message& p = parsed.value();
  EXPECT_EQ(p.verb, "proc");
  EXPECT_EQ(p.get_int("pid"), 42);
  EXPECT_EQ(p.get_real("load1"), 0.25);
  EXPECT_EQ(p.get_text("name"), nasty);
  EXPECT_TRUE(p.has("empty"));
  EXPECT_FALSE(p.has("missing"));
  EXPECT_EQ(p.get_int("name"), std::nullopt);
}

TEST(Protocol, LargeIntegersAndNegativeRoundTrip) {
  Message m("time");
  m.add("a", int64_t{INT64_MAX}).add("b", int64_t{-5});
  auto p = parse_message(encode(m).substr(0, encode(m).size() - 1));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().get_int("a"), INT64_MAX);
  EXPECT_EQ(p.value().get_int("b"), -5);
}

TEST(Protocol, ToleratesCrLf) {
  auto p = parse_message("time id=3\r");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().get_int("id"), 3);
}

TEST(Protocol, RejectsMalformedLines) {
  const char* bad[] = {
      "",                  // empty
      " time",             // leading space
      "time ",             // trailing space
      "time  id=1",        // empty field
      "Time",              // upper-case verb
      "9time",             // verb must start with a letter
      "time id",           // no '='
      "time =1",           // empty key
      "time ID=1",         // upper-case key
      "time id=1 id=2",    // duplicate
      "time id=%4",        // short escape
      "time id=%G0",       // bad hex
      "time id=a\tb",      // raw control byte
      "time id=\xc3\xa9",  // raw non-ASCII
      "time a_very_long_key_name_that_goes_past_32=1",
  };
  for (const char* line : bad) {
    EXPECT_FALSE(parse_message(line).ok()) << "accepted: '" << line << "'";
  }
}

TEST(Protocol, RejectsTooManyFields) {
  std::string line = "x";
  for (size_t i = 0; i <= kMaxFields; ++i) line += " f" + std::to_string(i) + "=1";
  EXPECT_FALSE(parse_message(line).ok());
}

TEST(LineFramer, SplitsLinesAcrossFeeds) {
  LineFramer f(100);
  std::string line;
  f.feed("hel");
  EXPECT_EQ(f.next(&line), LineFramer::Status::need_more);
  f.feed("lo v=1\ntime\nti");
  ASSERT_EQ(f.next(&line), LineFramer::Status::line);
  EXPECT_EQ(line, "hello v=1");
  ASSERT_EQ(f.next(&line), LineFramer::Status::line);
  EXPECT_EQ(line, "time");
  EXPECT_EQ(f.next(&line), LineFramer::Status::need_more);
  f.feed("me\n");
  ASSERT_EQ(f.next(&line), LineFramer::Status::line);
  EXPECT_EQ(line, "time");
}

TEST(LineFramer, OversizedLineIsStickyTooLong) {
  LineFramer f(8);
  std::string line;
  f.feed("123456789");  // no newline yet, already over the limit
  EXPECT_EQ(f.next(&line), LineFramer::Status::too_long);
  f.feed("\nok\n");
  EXPECT_EQ(f.next(&line), LineFramer::Status::too_long);

  LineFramer g(8);
  g.feed("12345678\n123456789\n");  // exactly at the limit, then one over
  EXPECT_EQ(g.next(&line), LineFramer::Status::line);
  EXPECT_EQ(line, "12345678");
  EXPECT_EQ(g.next(&line), LineFramer::Status::too_long);
}

TEST(LineFramer, BufferStaysBoundedWhileFedInPieces) {
  LineFramer f(16);
  std::string line;
  for (int i = 0; i < 10'000; ++i) {
    f.feed("abc\n");
    ASSERT_EQ(f.next(&line), LineFramer::Status::line);
    ASSERT_EQ(f.next(&line), LineFramer::Status::need_more);
  }
  EXPECT_EQ(f.buffered(), 0u);
}

TEST(Protocol, ConstantTimeEqual) {
  EXPECT_TRUE(constant_time_equal("secret", "secret"));
  EXPECT_FALSE(constant_time_equal("secret", "secreT"));
  EXPECT_FALSE(constant_time_equal("secret", "secret2"));
  EXPECT_FALSE(constant_time_equal("", "x"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(Protocol, SplitHostPort) {
  auto a = split_host_port("127.0.0.1:7070");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a.value().host, "127.0.0.1");
  EXPECT_EQ(a.value().port, 7070);
  auto b = split_host_port("[::1]:9");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.value().host, "::1");
  EXPECT_EQ(b.value().port, 9);
  for (const char* bad :
       {"host", "host:", ":80", "host:0", "host:65536", "host:8x", "::1:80", "[::1]80", "[::1]"}) {
    EXPECT_FALSE(split_host_port(bad).ok()) << bad;
  }
}

// One rule set for every address of both programs (kvdrive's URIs and --monitor, kvmon's
// --listen and --metrics): the messages say which rule was broken.
TEST(Protocol, SplitHostPortRulesAndDefaultPort) {
  auto message = [](std::string_view text, int default_port = 0) {
    auto r = split_host_port(text, default_port);
    return r.ok() ? std::string("ok") : r.error().message;
  };
  EXPECT_EQ(message(""), "missing host:port");
  EXPECT_EQ(message("host"), "missing port in 'host'");
  EXPECT_EQ(message(":80"), "missing host");
  EXPECT_EQ(message("::1:80"), "IPv6 addresses need [brackets]");
  EXPECT_EQ(message("[::1]80"), "expected [IPv6]:port");
  EXPECT_EQ(message("bad host:1"), "space or control character in host 'bad host'");
  EXPECT_EQ(message("h:0"), "port '0' is not a number from 1 to 65535");
  EXPECT_EQ(message("h:"), "port '' is not a number from 1 to 65535");
  auto d = split_host_port("cache1", 11211);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().host, "cache1");
  EXPECT_EQ(d.value().port, 11211);
  auto v6 = split_host_port("[::1]", 6379);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6.value().host, "::1");
  EXPECT_EQ(v6.value().port, 6379);
  EXPECT_EQ(split_host_port("h:7", 6379).value().port, 7);  // a given port wins
  EXPECT_EQ(message("::1", 6379), "IPv6 addresses need [brackets]");
}

TEST(Protocol, ErrorMessageShape) {
  std::string line = encode(error_message(kErrBadRequest, "bad verb"));
  EXPECT_EQ(line, "error code=bad_request msg=bad%20verb\n");
}

}  // namespace
}  // namespace kv::proto
