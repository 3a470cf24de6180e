// A Redis Cluster of local redis-servers for integration tests: N masters, each with R replicas
// (none by default), each node a StoreServer with --cluster-enabled in its own temp dir on a
// free loopback port, joined with `redis-cli --cluster create ... --cluster-replicas R
// --cluster-yes`; stopped and removed on destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "servers.hpp"

namespace kv::test {

class RedisCluster {
 public:
  // `node_timeout_ms`: cluster-node-timeout, after which a replica takes a dead master's slots.
  explicit RedisCluster(int masters = 3, int replicas = 0, int node_timeout_ms = 5000)
      : masters_(masters), replicas_(replicas), node_timeout_ms_(node_timeout_ms) {}
  // Returns false (and sets `why`) when redis-server or redis-cli is missing; throws when the
  // cluster does not form (every node reporting cluster_state:ok, all slots, every node known)
  // within 60 s.
  bool start(std::string* why);
  const std::vector<int>& ports() const { return ports_; }
  // redis+cluster://127.0.0.1:<first port>
  std::string uri() const;
  // Runs redis-cli with `args` (e.g. {"--cluster", "reshard", ...}) and returns its exit code;
  // its output goes to `log` (a file in the first node's dir when empty).
  int redis_cli(const std::vector<std::string>& args, int timeout_ms = 120'000,
                const std::string& log = "") const;
  // A node's CLUSTER MYID.
  std::string node_id(int port) const;
  // Sum over the nodes of cmdstat_<cmd> calls: what ran. A command refused with MOVED / ASK
  // is not among them: Redis 7 counts it in rejected_calls (command_stat(cmd, "rejected_calls")).
  long long command_calls(const std::string& cmd) const;
  // Sum over the nodes of a field of cmdstat_<cmd> ("calls", "rejected_calls", "failed_calls").
  long long command_stat(const std::string& cmd, const std::string& field) const;
  // Moves `slot` and its keys from the node on from_port to the node on to_port, the way
  // redis-cli --cluster reshard does: IMPORTING / MIGRATING, MIGRATE of batch keys at a time
  // (sleeping pause_ms between batches, so traffic can meet the slot mid-way), then SETSLOT
  // NODE on every node. Returns how many keys moved. Throws on an unexpected reply.
  int migrate_slot(int slot, int from_port, int to_port, int batch = 10, int pause_ms = 0) const;
  // Waits (up to timeout_ms) until every node reports cluster_state:ok and all slots assigned.
  void wait_ok(int timeout_ms = 60'000) const;
  // The ports of the nodes that are masters now (INFO replication), in ports() order.
  std::vector<int> master_ports() const;
  // The last lines of every node's log, for a failure's message.
  std::string log_tails() const;
  // Kills the node on `port` (SIGKILL: no goodbye to the cluster).
  void kill(int port);
  // Waits until a replica has been promoted in place of the killed master on `dead_port` (as
  // many masters as at the start) and every other node reports cluster_state:ok with all
  // slots served; throws after timeout_ms.
  void wait_ok_without(int dead_port, int timeout_ms = 60'000) const;

 private:
  int masters_, replicas_, node_timeout_ms_;
  std::string cli_;
  std::vector<std::unique_ptr<StoreServer>> nodes_;
  std::vector<int> ports_;
  std::vector<int> dead_;  // killed (kill)
};

// One RESP command (its arguments as bulk strings) to 127.0.0.1:port on a connection of its
// own; the raw bytes of its whole reply (arrays too). Throws when none comes in timeout_ms.
std::string redis_command(int port, const std::vector<std::string>& args, int timeout_ms = 5000);

}  // namespace kv::test
