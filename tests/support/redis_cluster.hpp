// A Redis Cluster of local redis-servers for integration tests: N masters (no replicas), each
// a StoreServer with --cluster-enabled in its own temp dir on a free loopback port, joined with
// `redis-cli --cluster create ... --cluster-yes`; stopped and removed on destruction.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "servers.hpp"

namespace kv::test {

class RedisCluster {
 public:
  explicit RedisCluster(int masters = 3) : masters_(masters) {}
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
  // Sum over the nodes of cmdstat_<cmd> calls.
  long long command_calls(const std::string& cmd) const;
  // Waits (up to timeout_ms) until every node reports cluster_state:ok and all slots assigned.
  void wait_ok(int timeout_ms = 60'000) const;

 private:
  int masters_;
  std::string cli_;
  std::vector<std::unique_ptr<StoreServer>> nodes_;
  std::vector<int> ports_;
};

// One RESP command (its arguments as bulk strings) to 127.0.0.1:port; the raw reply bytes.
std::string redis_command(int port, const std::vector<std::string>& args, int timeout_ms = 5000);

}  // namespace kv::test
