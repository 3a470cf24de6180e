// --command templates: how one is split and named, what a RESP link writes for it, and how its
// reply is judged.
#include "workload/command_template.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/loop/codec.hpp"
#include "kvbench/op_type.hpp"
#include "kvbench/usage_error.hpp"

namespace {
using namespace kv::drive;
using Kind = CommandTemplate::Part::Kind;

TEST(CommandTemplate, SplitsAtSpacesKeepsQuotedOnesAndFindsThePlaceholders) {
  CommandTemplate c = parse_command_template("HSET  __key__ f __data__");
  EXPECT_EQ(c.name, "hset");
  ASSERT_EQ(c.args.size(), 4u);
  EXPECT_TRUE(c.uses_key);
  EXPECT_TRUE(c.uses_data);
  EXPECT_EQ(c.args[1].size(), 1u);
  EXPECT_EQ(c.args[1][0].kind, Kind::key);
  EXPECT_EQ(c.args[3][0].kind, Kind::data);

  c = parse_command_template("set \"a b\" 'user:__key__:x' \"\"");
  EXPECT_EQ(c.name, "set");
  ASSERT_EQ(c.args.size(), 4u);
  ASSERT_EQ(c.args[1].size(), 1u);
  EXPECT_EQ(c.args[1][0].text, "a b");
  ASSERT_EQ(c.args[2].size(), 3u);
  EXPECT_EQ(c.args[2][0].text, "user:");
  EXPECT_EQ(c.args[2][1].kind, Kind::key);
  EXPECT_EQ(c.args[2][2].text, ":x");
  EXPECT_FALSE(c.uses_data);
  EXPECT_EQ(c.args[3].size(), 1u);  // "" is an empty argument, kept
  EXPECT_EQ(c.args[3][0].text, "");
}

TEST(CommandTemplate, BadTemplatesAreRefusedNamingTheProblem) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"", "empty"},
      {"   ", "empty"},
      {"SET \"a b", "is not closed"},
      {"__key__ x", "must be the command's name"},
      {"GET/x __key__", "is not a command name"},
  };
  for (const auto& [text, why] : bad) {
    try {
      parse_command_template(text);
      ADD_FAILURE() << text << ": accepted";
    } catch (const kv::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << text << ": " << e.what();
    }
  }
}

TEST(CommandTemplate, NamesAreUniqueBesideTheMixsOps) {
  std::vector<CommandTemplate> cs = {parse_command_template("GET __key__"),
                                     parse_command_template("HSET __key__ f x"),
                                     parse_command_template("hset __key__ g x")};
  name_commands(cs, {{kv::OpType::get, 1}, {kv::OpType::set, 1}});
  EXPECT_EQ(cs[0].name, "get-2");
  EXPECT_EQ(cs[1].name, "hset");
  EXPECT_EQ(cs[2].name, "hset-2");
  kv::set_command_names({"hset", "hset-2"});
  EXPECT_STREQ(kv::op_name(kv::command_op(0)), "hset");
  EXPECT_STREQ(kv::op_name(kv::command_op(1)), "hset-2");
  EXPECT_STREQ(kv::op_name(kv::command_op(2)), "command3");
  EXPECT_FALSE(kv::parse_op_name("hset"));  // --mix takes the built-in ops only
  kv::set_command_names({});
}

TEST(CommandTemplate, OnAClusterEveryKeyArgumentIsTheKeyOrItsHashTag) {
  for (const char* ok :
       {"GET __key__", "LPUSH list:{__key__} __data__", "SMOVE {__key__}:a {__key__}:b x",
        "HSET __key__ f{x} __data__", "GET x{__key__}y}"})
    EXPECT_TRUE(routes_by_key(parse_command_template(ok))) << ok;
  for (const char* bad : {"PING", "GET list:__key__", "GET {a}{__key__}", "GET {__key__",
                          "GET {__data____key__}", "GET {}{__key__}"})
    EXPECT_FALSE(routes_by_key(parse_command_template(bad))) << bad;
}

TEST(CommandTemplate, MemtiersKeyPatternLettersAndKvdrivesNames) {
  EXPECT_EQ(parse_command_key_pattern("R").kind, KeyPattern::Kind::uniform);
  EXPECT_EQ(parse_command_key_pattern("G").kind, KeyPattern::Kind::gaussian);
  EXPECT_EQ(parse_command_key_pattern("S").kind, KeyPattern::Kind::sequential);
  EXPECT_EQ(parse_command_key_pattern("P").kind, KeyPattern::Kind::sequential);
  EXPECT_EQ(parse_command_key_pattern("zipf:1.2").zipf_exponent, 1.2);
  EXPECT_THROW(parse_command_key_pattern("Q"), kv::UsageError);
}

TEST(CommandTemplate, ARespLinkWritesEachArgumentAsABulkStringWithThePlaceholdersFilled) {
  const std::vector<CommandTemplate> cs = {parse_command_template("HSET __key__ f __data__"),
                                           parse_command_template("SET 'user:__key__:x' __key__")};
  loop::Codec resp(loop::Wire::resp, &cs);
  std::string out;
  ASSERT_TRUE(resp.append(out, kv::command_op(0), "k1", "vv", 0));
  EXPECT_EQ(out, "*4\r\n$4\r\nHSET\r\n$2\r\nk1\r\n$1\r\nf\r\n$2\r\nvv\r\n");
  out.clear();
  ASSERT_TRUE(resp.append(out, kv::command_op(1), "k22", "", 0));
  EXPECT_EQ(out, "*3\r\n$3\r\nSET\r\n$10\r\nuser:k22:x\r\n$3\r\nk22\r\n");
  // A command the run does not have, and memcached links: refused, nothing written.
  out.clear();
  EXPECT_FALSE(resp.append(out, kv::command_op(2), "k", "v", 0));
  loop::Codec text(loop::Wire::text, &cs);
  EXPECT_FALSE(text.append(out, kv::command_op(0), "k", "v", 0));
  EXPECT_TRUE(out.empty());
}

TEST(CommandTemplate, AValueIsAHitNilAMissAStatusOkAnErrorAnError) {
  EXPECT_EQ(loop::Codec::reply_kind(kv::command_op(0)), kv::drive::store::Op::command);
  const std::vector<std::pair<std::string, store::Verdict>> replies = {
      {"$2\r\nab\r\n", store::Verdict::hit},       {":3\r\n", store::Verdict::hit},
      {"*1\r\n$1\r\na\r\n", store::Verdict::hit},  {"$-1\r\n", store::Verdict::miss},
      {"*-1\r\n", store::Verdict::miss},           {"+OK\r\n", store::Verdict::ok},
      {"-WRONGTYPE x\r\n", store::Verdict::error},
  };
  loop::Codec resp(loop::Wire::resp);
  for (const auto& [bytes, want] : replies) {
    ASSERT_TRUE(resp.feed(bytes));
    store::Verdict v{};
    std::string_view value;
    ASSERT_EQ(resp.next(store::Op::command, &v, &value), store::ReadStatus::reply) << bytes;
    EXPECT_EQ(v, want) << bytes;
  }
}

}  // namespace
