// Reading a Redis Cluster's topology over the network: CLUSTER SLOTS from the first node that
// answers, into a SlotMap (store/cluster.hpp). Blocking, bounded by a timeout per node; for
// start-up and for the refresh after MOVED, never per request.
#pragma once

#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/result.hpp"
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

// One CLUSTER SLOTS read (fetch_cluster_slots over `nodes`) on a thread of its own, so that
// the event loop that wants it keeps serving its connections meanwhile. Not thread-safe: owned
// by one worker; the destructor waits for a read in progress (bounded by its timeouts).
class SlotRefresh {
 public:
  SlotRefresh() = default;
  SlotRefresh(const SlotRefresh&) = delete;
  SlotRefresh& operator=(const SlotRefresh&) = delete;
  ~SlotRefresh();
  bool busy() const { return pending_.valid(); }
  // Starts a read; precondition: !busy(). `tls` must outlive it.
  void start(std::vector<HostPort> nodes, const TargetSpec& spec, const TlsContext* tls,
             int64_t timeout_us);
  // Nullopt while the read runs (or none was started); once it is over, its ranges or why it
  // failed (and busy() is false again).
  std::optional<Result<std::vector<SlotRange>>> take();

 private:
  std::future<std::vector<SlotRange>> pending_;
};

// The masters of a cluster (each once, in slot order) from its CLUSTER SLOTS ranges.
std::vector<HostPort> cluster_masters(const std::vector<SlotRange>& ranges);

}  // namespace kv::drive::store
