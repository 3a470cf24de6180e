// A libmemcached client for tests: the reference kvdrive's memcached pools are checked against
// (#16: key placement must be exactly libmemcached's ketama). Configured as a user's libmemcached
// pool would be: servers added in the given order, consistent ketama distribution when there are
// several. Blocking, text protocol, one request at a time. Throws std::runtime_error on a
// connection failure or a refused request, naming libmemcached's error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kv::test {

class LibmemcachedClient {
 public:
  explicit LibmemcachedClient(const std::vector<std::pair<std::string, int>>& servers);
  ~LibmemcachedClient();
  LibmemcachedClient(const LibmemcachedClient&) = delete;
  LibmemcachedClient& operator=(const LibmemcachedClient&) = delete;

  // libmemcached's auto-eject: a server whose connect fails once leaves the ring for a minute
  // (MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, SERVER_FAILURE_LIMIT 1, RETRY_TIMEOUT 60).
  void auto_eject();
  void set(const std::string& key, const std::string& value);
  // A set that may fail (a dead server): whether it was stored.
  bool try_set(const std::string& key, const std::string& value);
  // The value, or nullopt on a miss.
  std::optional<std::string> get(const std::string& key);
  // Which server (index into the constructor's list) libmemcached sends `key` to.
  size_t server_for(const std::string& key);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kv::test
