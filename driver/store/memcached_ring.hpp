// Key placement over a memcached pool, exactly as libmemcached places keys: a memcached_st
// configured like the classic client's (the same servers in the same order, consistent ketama
// distribution for a pool), asked through memcached_generate_hash. It never connects. Used by
// the event-loop engine, which has its own connections but must send each key where a
// libmemcached client would. Not thread-safe: one per connection (or per thread).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "store/target_uri.hpp"

namespace kv::drive {

class MemcachedRing {
 public:
  // Throws std::runtime_error if libmemcached refuses a server of spec.
  explicit MemcachedRing(const TargetSpec& spec);
  // The ring of spec's servers less those `left_out` marks (at least one must stay): where
  // libmemcached's auto-eject sends keys while those servers are ejected, since its continuum
  // is then made of the other servers' points alone. server_for still answers indexes into
  // spec.servers.
  MemcachedRing(const TargetSpec& spec, const std::vector<bool>& left_out);
  ~MemcachedRing();
  MemcachedRing(const MemcachedRing&) = delete;
  MemcachedRing& operator=(const MemcachedRing&) = delete;
  // The index in spec.servers of the server that holds `key` (0 for a single server).
  size_t server_for(std::string_view key) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kv::drive
