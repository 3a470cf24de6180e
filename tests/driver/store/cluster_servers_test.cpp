// Redis Cluster building blocks against real redis-servers: key slots against CLUSTER KEYSLOT,
// and a 3-master cluster made by the test (tests/support/redis_cluster.hpp): the slot map from
// CLUSTER SLOTS, MOVED and ASK from a slot migration, and store stats from every node.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "redis_cluster.hpp"
#include "servers.hpp"
#include "store/cluster.hpp"
#include "store/cluster_topology.hpp"
#include "store/resp_codec.hpp"
#include "store/store_stats.hpp"
#include "store/sync_connection.hpp"
#include "store/target_uri.hpp"

namespace {
using namespace kv::drive::store;
using kv::drive::HostPort;
using kv::drive::parse_target_uri;
using kv::test::redis_command;
using kv::test::RedisCluster;
using kv::test::StoreServer;

constexpr int64_t kTimeoutUs = 10'000'000;

std::string command(std::initializer_list<std::string_view> args) {
  std::string out;
  resp::append_array_header(out, args.size());
  for (auto a : args) resp::append_bulk(out, a);
  return out;
}

TEST(ClusterServers, KeySlotsEqualARealNodesClusterKeyslot) {
  StoreServer node(StoreServer::Kind::redis,
                   {"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-port", std::to_string(kv::test::free_port())});
  KV_START_OR_SKIP(node);
  std::vector<std::string> keys{"foo",
                                "bar",
                                "hello",
                                "kvbench:0000000001",
                                "{user1000}.following",
                                "foo{}{bar}",
                                "foo{{bar}}zap",
                                "foo{bar}{zap}",
                                "{",
                                "}",
                                "{}",
                                "a{b",
                                "a}b{c}",
                                ""};
  std::mt19937 rng(16);
  for (int i = 0; i < 300; ++i) {
    std::string k(1 + rng() % 24, '\0');
    for (char& c : k) c = static_cast<char>(rng() % 4 == 0 ? "{}"[rng() % 2] : rng() % 256);
    keys.push_back(k);
  }
  for (const auto& k : keys) {
    std::string r = redis_command(node.port(), {"CLUSTER", "KEYSLOT", k});
    ASSERT_EQ(r.front(), ':') << r;
    EXPECT_EQ(key_hash_slot(k), std::stoi(r.substr(1)))
        << "key bytes: " << testing::PrintToString(k);
  }
}

class ClusterFixture : public testing::Test {
 protected:
  void SetUp() override { KV_START_OR_SKIP(cluster_); }
  kv::drive::TargetSpec spec() const { return parse_target_uri(cluster_.uri()); }
  RedisCluster cluster_{3};
};

TEST_F(ClusterFixture, SlotMapFromClusterSlotsRoutesEveryKeyWithoutRedirect) {
  auto ranges = fetch_cluster_slots(spec().servers, spec(), nullptr, kTimeoutUs);
  auto masters = cluster_masters(ranges);
  ASSERT_EQ(masters.size(), 3u);
  std::set<int> ports;
  for (const auto& m : masters) ports.insert(m.port);
  EXPECT_EQ(ports, std::set<int>(cluster_.ports().begin(), cluster_.ports().end()));

  SlotMap map;
  refresh_slot_map(map, spec(), nullptr, kTimeoutUs);
  EXPECT_EQ(map.covered_slots(), 16384);
  std::vector<std::unique_ptr<SyncConnection>> conns;
  for (const auto& n : map.nodes())
    conns.push_back(std::make_unique<SyncConnection>(n, nullptr, kTimeoutUs));
  std::map<int, int> per_node;
  const int kKeys = 300;
  for (int i = 0; i < kKeys; ++i) {
    std::string key = "kvbench:" + std::to_string(i);
    int n = map.node_of_key(key);
    ASSERT_GE(n, 0);
    ASSERT_EQ(conns[static_cast<size_t>(n)]->request_resp(command({"SET", key, "v"}), kTimeoutUs),
              "+OK\r\n")
        << key;
    ++per_node[n];
  }
  EXPECT_EQ(per_node.size(), 3u);  // 300 keys reach every master
  EXPECT_EQ(cluster_.command_calls("set"), kKeys);

  // Store stats: one row of names per node, "host:port/<name>", summing to what was sent.
  kv::drive::StoreStatsPoller poller(spec(), 100'000, kTimeoutUs);
  poller.start();
  poller.stop();
  auto samples = poller.drain();
  ASSERT_FALSE(samples.empty());
  double sum = 0;
  int nodes_seen = 0;
  for (const auto& v : samples.back().values) {
    auto slash = v.name.find('/');
    ASSERT_NE(slash, std::string::npos) << v.name;
    if (v.name.substr(slash + 1) == "cmdstat_set_calls") {
      sum += v.value;
      ++nodes_seen;
      int port = std::stoi(v.name.substr(v.name.find(':') + 1));
      int idx = map.node_index(HostPort{"127.0.0.1", port});
      EXPECT_EQ(v.value, per_node[idx]) << v.name;
    }
  }
  EXPECT_EQ(nodes_seen, 3);
  EXPECT_EQ(sum, kKeys);
}

TEST_F(ClusterFixture, MigrationGivesAskThenMovedAndTheMapFollows) {
  SlotMap map;
  refresh_slot_map(map, spec(), nullptr, kTimeoutUs);
  const std::string key = "foo";
  const int slot = key_hash_slot(key);
  const HostPort from = map.nodes()[static_cast<size_t>(map.node_of_slot(slot))];
  HostPort to;
  for (const auto& n : map.nodes())
    if (n.port != from.port) to = n;
  const std::string from_id = cluster_.node_id(from.port), to_id = cluster_.node_id(to.port);

  // A wrong node answers MOVED to the owner.
  SyncConnection wrong(to, nullptr, kTimeoutUs);
  std::string r = wrong.request_resp(command({"GET", key}), kTimeoutUs);
  ASSERT_EQ(r.front(), '-') << r;
  auto moved = parse_redirect(std::string_view(r).substr(1, r.size() - 3));
  ASSERT_TRUE(moved) << r;
  EXPECT_EQ(moved->kind, Redirect::Kind::moved);
  EXPECT_EQ(moved->slot, slot);
  EXPECT_EQ(moved->to.port, from.port);

  // Mid-migration, a key the old owner lacks gives ASK; the new owner serves it after ASKING.
  ASSERT_EQ(
      redis_command(to.port, {"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", from_id}),
      "+OK\r\n");
  ASSERT_EQ(
      redis_command(from.port, {"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", to_id}),
      "+OK\r\n");
  SyncConnection owner(from, nullptr, kTimeoutUs);
  r = owner.request_resp(command({"GET", key}), kTimeoutUs);
  auto ask = parse_redirect(std::string_view(r).substr(1, r.size() - 3));
  ASSERT_TRUE(ask) << r;
  EXPECT_EQ(ask->kind, Redirect::Kind::ask);
  EXPECT_EQ(ask->to.port, to.port);
  EXPECT_EQ(wrong.request_resp(command({"ASKING"}), kTimeoutUs), "+OK\r\n");
  EXPECT_EQ(wrong.request_resp(command({"SET", key, "moved"}), kTimeoutUs), "+OK\r\n");

  // The slot is handed over: the old owner now answers MOVED; the map follows it, and a
  // refresh agrees once the nodes have spread the news.
  for (int port : cluster_.ports())
    ASSERT_EQ(redis_command(port, {"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", to_id}),
              "+OK\r\n");
  r = owner.request_resp(command({"GET", key}), kTimeoutUs);
  moved = parse_redirect(std::string_view(r).substr(1, r.size() - 3));
  ASSERT_TRUE(moved) << r;
  EXPECT_EQ(moved->kind, Redirect::Kind::moved);
  int idx = map.move_slot(moved->slot, moved->to);
  EXPECT_EQ(map.nodes()[static_cast<size_t>(idx)].port, to.port);
  EXPECT_EQ(map.node_of_key(key), idx);
  EXPECT_EQ(wrong.request_resp(command({"GET", key}), kTimeoutUs), "$5\r\nmoved\r\n");

  SlotMap fresh;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  do {
    refresh_slot_map(fresh, spec(), nullptr, kTimeoutUs);
    if (fresh.node_of_slot(slot) >= 0 &&
        fresh.nodes()[static_cast<size_t>(fresh.node_of_slot(slot))].port == to.port)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while (std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(fresh.nodes()[static_cast<size_t>(fresh.node_of_slot(slot))].port, to.port);
  EXPECT_EQ(fresh.covered_slots(), 16384);
}

TEST(ClusterTopology, ANodeWithoutClusterSupportIsOneClearLine) {
  StoreServer plain(StoreServer::Kind::redis);
  KV_START_OR_SKIP(plain);
  auto spec = parse_target_uri("redis+cluster://127.0.0.1:" + std::to_string(plain.port()));
  try {
    fetch_cluster_slots(spec.servers, spec, nullptr, kTimeoutUs);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cannot read the cluster's slots (127.0.0.1:" + std::to_string(plain.port()) +
                     ": ERR This instance has cluster support "
                     "disabled)"),
              std::string::npos)
        << m;
  }
}

}  // namespace
