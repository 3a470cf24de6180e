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

// A memcached server's own set counters ("stats": cmd_set, store_too_large, store_no_memory),
// read over a connection of their own. The text protocol with --pipeline > 1 does not see each
// set's reply (libmemcached keeps only a batch's last), so a phase compares these before and
// after to find sets the server refused. nullopt: no answer, or none of these counters (a
// server that is not memcached); a missing counter is -1.
struct MemcachedSetCounters {
  int64_t cmd_set = -1, too_large = -1, no_memory = -1;
};
std::optional<MemcachedSetCounters> read_set_counters(const TargetSpec& spec, int64_t timeout_us);

// Reads back `keys` (the caller picks them, e.g. spread over the loaded key range) in one text
// multi-get (values are read and dropped): how many the server holds. nullopt if `keys` is
// empty or the server did not answer.
struct SampleCheck {
  uint64_t sampled = 0, present = 0;
};
std::optional<SampleCheck> sample_keys_present(const TargetSpec& spec,
                                               const std::vector<std::string>& keys,
                                               int64_t timeout_us);
}  // namespace kv::drive
