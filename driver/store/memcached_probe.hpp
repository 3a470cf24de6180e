// Requests to a memcached-protocol server over a text-protocol connection of their own, beside
// the libmemcached client: its version, its set counters, whether sampled keys are there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/target_uri.hpp"

namespace kv::drive {

// The first line a memcached-protocol server sends back to a text "version" request, as it
// sent it ("VERSION 1.6.18", only printable bytes kept); empty if it answered nothing within
// timeout_us (a server that speaks only the binary protocol) or could not be reached.
std::string text_version_reply(const HostPort& server, int64_t timeout_us);

// A memcached server's own set counters ("stats": cmd_set, store_too_large, store_no_memory),
// read over a connection of their own. The text protocol with --pipeline > 1 does not see each
// set's reply (libmemcached keeps only a batch's last), so a phase compares these before and
// after to find sets the server refused. nullopt: no answer, or none of these counters (a
// server that is not memcached); a missing counter is -1.
struct MemcachedSetCounters {
  int64_t cmd_set = -1, too_large = -1, no_memory = -1;
};
std::optional<MemcachedSetCounters> read_set_counters(const TargetSpec& spec, int64_t timeout_us);

// The first server's `stats settings` that shape a benchmark, as it names them: maxbytes (-m),
// num_threads (-t), item_size_max (-I), maxconns (-c), evictions (-M), growth_factor (-f),
// chunk_size (-n). Empty when the server does not answer it (not memcached, a TLS target).
std::vector<std::pair<std::string, std::string>> read_memcached_settings(const TargetSpec& spec,
                                                                         int64_t timeout_us);

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
