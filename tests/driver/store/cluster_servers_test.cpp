// Redis Cluster building blocks against real redis-servers: key slots against CLUSTER KEYSLOT,
// and a 3-master cluster made by the test (tests/support/redis_cluster.hpp): the slot map from
// CLUSTER SLOTS, MOVED and ASK from a slot migration, and store stats from every node.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
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

// What the engine's cluster routing must do, done here over blocking connections: requests
// routed by ClusterRouter while their slot migrates (MIGRATE in batches with pauses), every
// MOVED / ASK followed; every request succeeds, redirects are counted, and what the nodes
// counted (summed) is what was sent, retries included.
TEST_F(ClusterFixture, RouterSurvivesASlotMigrationUnderTrafficAndCountsMatchTheNodes) {
  SlotMap map;
  refresh_slot_map(map, spec(), nullptr, kTimeoutUs);
  ClusterRouter router(map);
  const int kKeys = 200;
  auto key = [](int i) { return "{mig}:" + std::to_string(i); };  // one slot for all
  const int slot = key_hash_slot(key(0));
  const int from = router.nodes()[static_cast<size_t>(router.node_for(key(0)))].port;
  int to = 0;
  for (int p : cluster_.ports())
    if (p != from) to = p;

  std::map<int, std::unique_ptr<SyncConnection>> conns;  // by node index, opened on first use
  auto conn = [&](int node) -> SyncConnection& {
    auto& c = conns[node];
    if (!c)
      c = std::make_unique<SyncConnection>(router.nodes()[static_cast<size_t>(node)], nullptr,
                                           kTimeoutUs);
    return *c;
  };
  long long gets_sent = 0, sets_sent = 0, asking_sent = 0;
  // One request, redirected as often as it takes (at most 5 times): its final reply. The
  // preload (before any migration) sees no redirect; the GET rounds count theirs.
  auto run = [&](const std::string& cmd, bool is_get) {
    int node = router.node_for(key(0));
    bool asking = false;
    for (int tries = 0; tries < 6; ++tries) {
      SyncConnection& c = conn(node);
      if (asking) {
        EXPECT_EQ(c.request_resp(command({"ASKING"}), kTimeoutUs), "+OK\r\n");
        ++asking_sent;
      }
      std::string r = c.request_resp(cmd, kTimeoutUs);
      (is_get ? gets_sent : sets_sent)++;
      if (r[0] != '-') return r;
      auto a = router.on_error(std::string_view(r).substr(1, r.size() - 3));
      if (a.kind == ClusterRouter::Action::Kind::none) return r;
      node = a.node;
      asking = a.kind == ClusterRouter::Action::Kind::retry_asking;
    }
    return std::string("-too many redirects");
  };
  for (int i = 0; i < kKeys; ++i)
    ASSERT_EQ(run(command({"SET", key(i), "v" + std::to_string(i)}), false), "+OK\r\n");

  std::atomic<bool> done{false};
  int migrated = 0;
  std::thread mover([&] {
    migrated = cluster_.migrate_slot(slot, from, to, 5, 20);
    done = true;
  });
  int rounds = 0, bad = 0;
  uint64_t moved = 0, asked = 0;
  while (!done || rounds < 2) {  // traffic throughout, and two rounds after the hand-over
    bool was_done = done;
    for (int i = 0; i < kKeys; ++i) {
      std::string want =
          "$" + std::to_string(std::to_string(i).size() + 1) + "\r\nv" + std::to_string(i) + "\r\n";
      if (run(command({"GET", key(i)}), true) != want) ++bad;
    }
    moved += router.take_moved();
    asked += router.take_asked();
    if (was_done) ++rounds;
  }
  mover.join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(migrated, kKeys);
  EXPECT_GE(moved, 1u);  // at least the first request after the hand-over
  EXPECT_EQ(router.nodes()[static_cast<size_t>(router.node_for(key(0)))].port, to);
  // The nodes ran each GET once, where it was served, and refused (rejected_calls) the tries
  // they redirected: kvdrive's ops of a cluster run are the first, its redirects the second.
  EXPECT_EQ(cluster_.command_calls("get"), gets_sent - static_cast<long long>(moved + asked));
  EXPECT_EQ(cluster_.command_stat("get", "rejected_calls"), static_cast<long long>(moved + asked));
  EXPECT_EQ(cluster_.command_calls("set"), sets_sent);
  EXPECT_EQ(cluster_.command_calls("asking"), asking_sent);
  RecordProperty("moved", std::to_string(moved));
  RecordProperty("asked", std::to_string(asked));
  std::cout << "gets " << gets_sent << ", MOVED " << moved << ", ASK " << asked << "\n";
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
