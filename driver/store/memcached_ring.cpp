#include "store/memcached_ring.hpp"

#include <libmemcached/memcached.h>
#include <netinet/in.h>

#include <stdexcept>
#include <string>

namespace kv::drive {

struct MemcachedRing::Impl {
  memcached_st* mc = nullptr;
  size_t servers = 0;
  std::vector<size_t> index;  // the ring's server i is spec.servers[index[i]]
  ~Impl() {
    if (mc) memcached_free(mc);
  }
};

MemcachedRing::MemcachedRing(const TargetSpec& spec)
    : MemcachedRing(spec, std::vector<bool>(spec.servers.size(), false)) {}

MemcachedRing::MemcachedRing(const TargetSpec& spec, const std::vector<bool>& left_out)
    : impl_(std::make_unique<Impl>()) {
  impl_->mc = memcached_create(nullptr);
  if (!impl_->mc) throw std::runtime_error("memcached_create failed");
  // As a libmemcached client of the pool: ketama, servers added in the URI's order.
  if (spec.servers.size() > 1) {
    memcached_behavior_set(impl_->mc, MEMCACHED_BEHAVIOR_DISTRIBUTION,
                           MEMCACHED_DISTRIBUTION_CONSISTENT_KETAMA);
  }
  for (size_t i = 0; i < spec.servers.size(); ++i) {
    if (i < left_out.size() && left_out[i]) continue;
    const HostPort& s = spec.servers[i];
    if (memcached_server_add(impl_->mc, s.host.c_str(), static_cast<in_port_t>(s.port)) !=
        MEMCACHED_SUCCESS)
      throw std::runtime_error("cannot add memcached server " + host_port(s));
    impl_->index.push_back(i);
  }
  impl_->servers = impl_->index.size();
  if (impl_->servers == 0) throw std::runtime_error("a memcached ring needs a server");
}

MemcachedRing::~MemcachedRing() = default;

size_t MemcachedRing::server_for(std::string_view key) const {
  if (impl_->servers <= 1) return impl_->index.front();
  uint32_t i = memcached_generate_hash(impl_->mc, key.data(), key.size());
  return impl_->index[i < impl_->servers ? i : 0];
}

}  // namespace kv::drive
