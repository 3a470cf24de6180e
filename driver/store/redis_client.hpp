// StoreClient for the Redis protocol (Redis, Valkey, KeyDB, Dragonfly) over hiredis.
#pragma once

#include <memory>

#include "store/store_client.hpp"

namespace kv::drive {
std::unique_ptr<StoreClient> make_redis_client(const TargetSpec& spec, const ClientOptions& opts);
}
