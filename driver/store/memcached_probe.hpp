// A request to a memcached-protocol server over a text-protocol connection of its own, outside
// the request path: the settings that shape a benchmark, recorded with the run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/target_uri.hpp"

namespace kv::drive {

// The first server's `stats settings` that shape a benchmark, as it names them: maxbytes (-m),
// num_threads (-t), item_size_max (-I), maxconns (-c), evictions (-M), growth_factor (-f),
// chunk_size (-n). Empty when the server does not answer it (not memcached) and for a TLS
// target (a plain socket only: read_store_settings reads those over TLS).
std::vector<std::pair<std::string, std::string>> read_memcached_settings(const TargetSpec& spec,
                                                                         int64_t timeout_us);
// Those settings out of a `stats settings` reply ("STAT name value" lines).
std::vector<std::pair<std::string, std::string>> parse_memcached_settings(std::string_view reply);

}  // namespace kv::drive
