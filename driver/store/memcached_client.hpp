// StoreClient for the memcached text and binary protocols (memcached, MemcacheDB, Tokyo Tyrant,
// Couchbase memcached buckets) over libmemcached; several servers form a ketama pool.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/store_client.hpp"

namespace kv::drive {
std::unique_ptr<StoreClient> make_memcached_client(const TargetSpec& spec,
                                                   const ClientOptions& opts);

// libmemcached's error text without what only its developers can use: the object's address
// "(0x55eb...)" and the source location "-> ./src/libmemcached/io.cc:220"; runs of spaces
// become one. "(0x5568) A TIMEOUT OCCURRED, time out,  host: h:1 -> ./src/libmemcached/io.cc:220"
// -> "A TIMEOUT OCCURRED, time out, host: h:1".
std::string clean_memcached_error(std::string_view text);

}  // namespace kv::drive
