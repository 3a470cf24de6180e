// What kvdrive shows of a store's error reply: the whole message, never the password it sent.
#include "store/error_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kv::drive::store {
namespace {

TEST(ShownError, TheStoresWholeMessageWithoutItsLineEnd) {
  // Redis 7's reply to AUTH on a server with no password: its first word alone says nothing.
  const std::string redis =
      "ERR AUTH <password> called without any password configured for the default user. Are "
      "you sure your configuration is correct?\r\n";
  EXPECT_EQ(shown_error(redis, "s3cret-pass"), redis.substr(0, redis.size() - 2));
}

TEST(ShownError, ASecretEchoedByTheStoreIsMasked) {
  EXPECT_EQ(shown_error("WRONGPASS hunter2 is wrong; hunter2!", "hunter2"),
            "WRONGPASS *** is wrong; ***!");
  EXPECT_EQ(shown_error("ERR hunter2", ""), "ERR hunter2");  // no secret sent: nothing to mask
}

TEST(ShownError, ControlBytesAndLengthAreBounded) {
  EXPECT_EQ(shown_error(std::string("ERR a\x1b[31mb\0c", 13), "x"), "ERR a?[31mb?c");
  const std::string shown = shown_error(std::string(1000, 'E'), "x");
  EXPECT_EQ(shown.size(), 303u);
  EXPECT_EQ(shown.substr(300), "...");
}

}  // namespace
}  // namespace kv::drive::store
