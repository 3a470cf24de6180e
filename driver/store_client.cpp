#include "store_client.hpp"

#include "memcached_client.hpp"
#include "redis_client.hpp"

namespace kv::drive {

std::unique_ptr<StoreClient> make_store_client(const TargetSpec& spec, const ClientOptions& opts) {
  if (spec.protocol == Protocol::redis) return make_redis_client(spec, opts);
  return make_memcached_client(spec, opts);
}

}  // namespace kv::drive
