// libmemcached's error text as kvdrive prints and stores it: without the object's address and
// the library's source location, which say nothing to a user.
#include <gtest/gtest.h>

#include "store/memcached_client.hpp"

namespace {
using kv::drive::clean_memcached_error;

TEST(CleanMemcachedError, DropsPointerAndSourcePath) {
  EXPECT_EQ(clean_memcached_error("(0x5568eee42260) A TIMEOUT OCCURRED, time out,  host: "
                                  "127.0.0.1:17393 -> ./src/libmemcached/io.cc:220"),
            "A TIMEOUT OCCURRED, time out, host: 127.0.0.1:17393");
  EXPECT_EQ(clean_memcached_error("CONNECTION FAILURE(Connection refused), host: h:1 -> "
                                  "libmemcached/connect.cc:723 (0x55eb12ab) "
                                  "./src/libmemcached/version.cc:40"),
            "CONNECTION FAILURE(Connection refused), host: h:1");
}

TEST(CleanMemcachedError, LeavesPlainTextAlone) {
  EXPECT_EQ(clean_memcached_error("SUCCESS"), "SUCCESS");
  EXPECT_EQ(clean_memcached_error("SERVER ERROR"), "SERVER ERROR");
  EXPECT_EQ(clean_memcached_error("host: cache.example:11211"), "host: cache.example:11211");
  EXPECT_EQ(clean_memcached_error(""), "");
}

}  // namespace
