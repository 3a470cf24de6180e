// StoreClient for the memcached text and binary protocols (memcached, MemcacheDB, Tokyo Tyrant,
// Couchbase memcached buckets) over libmemcached; several servers form a ketama pool.
#pragma once

#include <memory>

#include "store_client.hpp"

namespace kv::drive {
std::unique_ptr<StoreClient> make_memcached_client(const TargetSpec& spec,
                                                   const ClientOptions& opts);
}
