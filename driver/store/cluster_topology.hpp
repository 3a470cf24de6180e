// Reading a Redis Cluster's topology over the network: CLUSTER SLOTS from the first node that
// answers, into a SlotMap (store/cluster.hpp). Blocking, bounded by a timeout per node; for
// start-up and for the refresh after MOVED, never per request.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/cluster.hpp"
#include "store/target_uri.hpp"

namespace kv::drive::store {

class TlsContext;

// Asks `nodes` in turn for CLUSTER SLOTS (after AUTH when spec has a password), each within
// timeout_us, over TLS when `tls` is set; returns the first reply that covers any slot.
// Throws std::runtime_error with one line naming each node's failure when none answered.
std::vector<SlotRange> fetch_cluster_slots(const std::vector<HostPort>& nodes,
                                           const TargetSpec& spec, const TlsContext* tls,
                                           int64_t timeout_us);

// Refreshes `map` from the nodes it knows, then the target's seeds: assign(fetch_cluster_slots).
// Throws as fetch_cluster_slots; the map is unchanged then.
void refresh_slot_map(SlotMap& map, const TargetSpec& spec, const TlsContext* tls,
                      int64_t timeout_us);

// The masters of a cluster (each once, in slot order) from its CLUSTER SLOTS ranges.
std::vector<HostPort> cluster_masters(const std::vector<SlotRange>& ranges);

}  // namespace kv::drive::store
