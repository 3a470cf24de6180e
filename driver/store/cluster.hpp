// Redis Cluster routing pieces, free of sockets: the key → hash slot function (CRC16 with
// {hash tags}), the CLUSTER SLOTS reply parser, MOVED / ASK error parsing, and the slot map
// (slot → master) that a router consults per key and rebuilds on MOVED. hiredis (its reader,
// for the nested CLUSTER SLOTS array) is included only by cluster.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "store/target_uri.hpp"

namespace kv::drive::store {

constexpr int kClusterSlots = 16384;

// Redis's CRC16 (XMODEM: poly 0x1021, init 0) of `bytes`.
uint16_t crc16_xmodem(std::string_view bytes);
// The key's hash slot, as CLUSTER KEYSLOT: CRC16 mod 16384 of the key, or of the text between
// the first '{' and the first '}' after it when that text is not empty.
int key_hash_slot(std::string_view key);

// One node as CLUSTER SLOTS names it.
struct ClusterNode {
  HostPort address;
  std::string id;  // node id (Redis >= 4); empty if the reply has none
  bool operator==(const ClusterNode& o) const {
    return address.host == o.address.host && address.port == o.address.port;
  }
};

// One range of CLUSTER SLOTS: slots [first, last] served by master, copied on replicas.
struct SlotRange {
  int first = 0;
  int last = 0;
  ClusterNode master;
  std::vector<ClusterNode> replicas;
};

// Parses the raw bytes of one CLUSTER SLOTS reply. A node whose host is empty (Redis names the
// node that answered so when it does not know its own address) gets `default_host`. Throws
// std::runtime_error with one line on an error reply ("ERR This instance has cluster support
// disabled"), an incomplete reply or a shape that is not CLUSTER SLOTS'.
std::vector<SlotRange> parse_cluster_slots(std::string_view reply, const std::string& default_host);

// A MOVED or ASK error reply's text, "MOVED 3999 127.0.0.1:6381" (without the leading '-').
struct Redirect {
  enum class Kind { moved, ask } kind = Kind::moved;
  int slot = 0;
  HostPort to;
};
// The redirect in an error reply's text; nullopt for any other error (or a malformed one).
std::optional<Redirect> parse_redirect(std::string_view error_text);

// slot → master node. Built from CLUSTER SLOTS; a MOVED moves one slot until the next refresh.
// Not thread-safe: one per router (per worker thread).
class SlotMap {
 public:
  // Empty: every slot unassigned. `replica_reads` (?read-from=replica): each slot also has a
  // reader, one of its master's replicas (the master when it has none), and replicas are nodes.
  explicit SlotMap(bool replica_reads = false) : replica_reads_(replica_reads) {
    owner_.fill(kNone);
    reader_.fill(kNone);
  }
  // Replaces the whole map. Node indexes stay stable for nodes already known (so per-node
  // connections keep their index); new nodes are appended.
  void assign(const std::vector<SlotRange>& ranges);
  // Index into nodes() of the slot's master; -1 if no node serves it.
  int node_of_slot(int slot) const { return owner_[static_cast<size_t>(slot)]; }
  int node_of_key(std::string_view key) const { return node_of_slot(key_hash_slot(key)); }
  // Where a read of the slot goes: its reader with replica reads, else its master; -1 if none.
  int reader_of_slot(int slot) const { return reader_[static_cast<size_t>(slot)]; }
  // A MOVED: the slot now lives at `to` (added to nodes() if new). Returns its index.
  int move_slot(int slot, const HostPort& to);
  // Index of the node at `address` (added if new): for ASK, which goes to a node for one request.
  int node_index(const HostPort& address);
  const std::vector<HostPort>& nodes() const { return nodes_; }
  // How many slots have a master (16384 when the cluster is whole).
  int covered_slots() const;
  // With replica reads: how many served slots are read from their master (no replica listed).
  int slots_read_by_masters() const;

 private:
  static constexpr int16_t kNone = -1;
  bool replica_reads_ = false;
  std::array<int16_t, kClusterSlots> owner_{};
  std::array<int16_t, kClusterSlots> reader_{};  // the owner, or with replica_reads_ a replica
  std::vector<HostPort> nodes_;
};

// A worker's routing for a cluster target: the node a key's request goes to, and what an error
// reply means. MOVED updates the map (the slot moved for good: later keys of it go there too)
// and asks for a refresh (other slots may have moved with it); ASK sends one request to the
// importing node, after ASKING, and leaves the map. Redirects are counted for the per-second
// figures. Not thread-safe: one per worker thread.
class ClusterRouter {
 public:
  explicit ClusterRouter(SlotMap map) : map_(std::move(map)) {}

  // Index into nodes() of the node for `key`; -1 while its slot has no master (refresh, then
  // try again, or count the request failed).
  int node_for(std::string_view key) const { return map_.node_of_key(key); }
  // The node for a read of `key`: a replica of its master with ?read-from=replica (READONLY on
  // every connection), else node_for.
  int node_for_read(std::string_view key) const { return map_.reader_of_slot(key_hash_slot(key)); }

  struct Action {
    enum class Kind { none, retry, retry_asking } kind = Kind::none;
    int node = -1;  // where to send the request again (retry: as is; retry_asking: ASKING first)
  };
  // The action for an error reply's text (without '-'): MOVED → retry (map updated), ASK →
  // retry_asking, any other error → none (the request's own error).
  Action on_error(std::string_view error_text);

  // Redirects since the last take (for the per-second row), then zero.
  uint64_t take_moved() { return std::exchange(moved_, 0); }
  uint64_t take_asked() { return std::exchange(asked_, 0); }
  // True after a MOVED until replace(): the caller fetches CLUSTER SLOTS (rate-limited, see
  // refresh_due) and calls replace().
  bool needs_refresh() const { return needs_refresh_; }
  // A node was lost (its connection failed or a connect to it did), or one answered
  // CLUSTERDOWN / TRYAGAIN: the map may be stale (a failover), so re-read it (rate-limited).
  void want_refresh() { needs_refresh_ = true; }
  // The rate limit on refreshes: true when a refresh is wanted and none was started in the
  // last min_interval_ns (the first one at once); the caller then starts one (the start is
  // noted at now_ns). A migration moves slots one by one, each with its MOVED: one CLUSTER
  // SLOTS per interval, not one per MOVED.
  static constexpr int64_t kMinRefreshNs = 100'000'000;
  bool refresh_due(int64_t now_ns, int64_t min_interval_ns = kMinRefreshNs);
  // The topology a refresh read. MOVEDs that came while it was read are applied again on top
  // (a node said so after the read began), and keep a refresh wanted.
  void replace(const std::vector<SlotRange>& ranges);
  const std::vector<HostPort>& nodes() const { return map_.nodes(); }
  const SlotMap& map() const { return map_; }

 private:
  SlotMap map_;
  uint64_t moved_ = 0;
  uint64_t asked_ = 0;
  bool needs_refresh_ = false;
  bool refresh_started_ = false;
  int64_t refresh_started_ns_ = 0;
  std::vector<std::pair<int, HostPort>> moved_since_start_;  // (slot, to) since refresh_due
};

}  // namespace kv::drive::store
