#include "store/memcached_ring.hpp"

#include <libmemcached/memcached.h>
#include <netinet/in.h>

#include <stdexcept>
#include <string>

namespace kv::drive {

struct MemcachedRing::Impl {
  memcached_st* mc = nullptr;
  size_t servers = 0;
  ~Impl() {
    if (mc) memcached_free(mc);
  }
};

MemcachedRing::MemcachedRing(const TargetSpec& spec) : impl_(std::make_unique<Impl>()) {
  impl_->mc = memcached_create(nullptr);
  if (!impl_->mc) throw std::runtime_error("memcached_create failed");
  impl_->servers = spec.servers.size();
  // As MemcachedClient::connect: ketama for a pool, servers added in the URI's order.
  if (spec.servers.size() > 1) {
    memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                           MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  }
  for (const auto& s : spec.servers) {
    if (memcached_server_add(impl_->mc, s.host.c_str(), static_cast<in_port_t>(s.port)) !=
        MEMCACHED_SUCCESS)
      throw std::runtime_error("cannot add memcached server " + s.host + ":" +
                               std::to_string(s.port));
  }
}

MemcachedRing::~MemcachedRing() = default;

size_t MemcachedRing::server_for(std::string_view key) const {
  if (impl_->servers <= 1) return 0;
  uint32_t i = memcached_generate_hash(impl_->mc, key.data(), key.size());
  return i < impl_->servers ? i : 0;
}

}  // namespace kv::drive
