#include "libmemcached_client.hpp"

#include <libmemcached/memcached.h>
#include <netinet/in.h>

#include <cstdlib>
#include <stdexcept>

namespace kv::test {

struct LibmemcachedClient::Impl {
  memcached_st* mc = nullptr;
  size_t servers = 0;
  ~Impl() {
    if (mc) memcached_free(mc);
  }
};

LibmemcachedClient::LibmemcachedClient(const std::vector<std::pair<std::string, int>>& servers)
    : impl_(std::make_unique<Impl>()) {
  impl_->mc = memcached_create(nullptr);
  if (!impl_->mc) throw std::runtime_error("memcached_create failed");
  impl_->servers = servers.size();
  if (servers.size() > 1)
    memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                           MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  for (const auto& [host, port] : servers)
    if (memcached_server_add(impl_->mc, host.c_str(), static_cast<in_port_t>(port)) !=
        MEMCACHED_SUCCESS)
      throw std::runtime_error("libmemcached: cannot add " + host + ":" + std::to_string(port));
}

LibmemcachedClient::~LibmemcachedClient() = default;

void LibmemcachedClient::auto_eject() {
  memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, 1);
  memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_SERVER_FAILURE_LIMIT, 1);
  memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, 60);
}

bool LibmemcachedClient::try_set(const std::string& key, const std::string& value) {
  return memcached_set(impl_->mc, key.data(), key.size(), value.data(), value.size(), 0, 0) ==
         MEMCACHED_SUCCESS;
}

void LibmemcachedClient::set(const std::string& key, const std::string& value) {
  memcached_return_t rc =
      memcached_set(impl_->mc, key.data(), key.size(), value.data(), value.size(), 0, 0);
  if (rc != MEMCACHED_SUCCESS)
    throw std::runtime_error("libmemcached set " + key + ": " +
                             memcached_last_error_message(impl_->mc));
}

std::optional<std::string> LibmemcachedClient::get(const std::string& key) {
  size_t len = 0;
  uint32_t flags = 0;
  memcached_return_t rc = MEMCACHED_SUCCESS;
  char* v = memcached_get(impl_->mc, key.data(), key.size(), &len, &flags, &rc);
  if (rc == MEMCACHED_NOTFOUND) return std::nullopt;
  if (rc != MEMCACHED_SUCCESS || v == nullptr) {
    std::free(v);
    throw std::runtime_error("libmemcached get " + key + ": " +
                             memcached_last_error_message(impl_->mc));
  }
  std::string out(v, len);
  std::free(v);
  return out;
}

size_t LibmemcachedClient::server_for(const std::string& key) {
  if (impl_->servers <= 1) return 0;
  return memcached_generate_hash(impl_->mc, key.data(), key.size());
}

}  // namespace kv::test
