// Redis Cluster routing pieces without a socket (store/cluster.hpp). The slot values are what
// a real node's CLUSTER KEYSLOT answers (also checked against a live node in
// cluster_servers_test.cpp, over many keys).
#include "store/cluster.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace {
using namespace kv::drive::store;
using kv::drive::HostPort;

TEST(ClusterSlots, Crc16AndKnownKeySlots) {
  EXPECT_EQ(crc16_xmodem("123456789"), 0x31C3);  // the CRC16/XMODEM check value
  EXPECT_EQ(crc16_xmodem(""), 0);
  EXPECT_EQ(key_hash_slot("foo"), 12182);
  EXPECT_EQ(key_hash_slot("bar"), 5061);
  EXPECT_EQ(key_hash_slot("hello"), 866);
  EXPECT_EQ(key_hash_slot("kvbench:0000000001"), 6978);
}

TEST(ClusterSlots, HashTags) {
  EXPECT_EQ(key_hash_slot("{user1000}.following"), key_hash_slot("user1000"));
  EXPECT_EQ(key_hash_slot("{user1000}.followers"), key_hash_slot("user1000"));
  EXPECT_EQ(key_hash_slot("foo{bar}{zap}"), key_hash_slot("bar"));             // the first tag
  EXPECT_EQ(key_hash_slot("foo{}{bar}"), crc16_xmodem("foo{}{bar}") % 16384);  // empty: whole key
  EXPECT_EQ(key_hash_slot("foo{{bar}}zap"), key_hash_slot("{bar"));  // up to the first '}'
  EXPECT_EQ(key_hash_slot("foo{bar"), key_hash_slot(std::string("foo{bar")));
  EXPECT_EQ(key_hash_slot("foo{bar"), crc16_xmodem("foo{bar") % 16384);  // no '}': whole key
  EXPECT_EQ(key_hash_slot(std::string("\0{\xff}", 4)), key_hash_slot("\xff"));
}

// A CLUSTER SLOTS reply as Redis 7 writes it: [first, last, [host, port, id, {}], replicas...].
std::string node(const std::string& host, int port, const std::string& id) {
  return "*4\r\n$" + std::to_string(host.size()) + "\r\n" + host + "\r\n:" + std::to_string(port) +
         "\r\n$" + std::to_string(id.size()) + "\r\n" + id + "\r\n*0\r\n";
}

TEST(ClusterSlots, ParsesClusterSlotsReplies) {
  std::string reply = "*2\r\n";
  reply += "*3\r\n:0\r\n:8191\r\n" + node("127.0.0.1", 7000, "aaaa");
  reply += "*4\r\n:8192\r\n:16383\r\n" + node("", 7001, "bbbb") + node("10.9.9.9", 7002, "cccc");
  auto ranges = parse_cluster_slots(reply, "seed.example");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].first, 0);
  EXPECT_EQ(ranges[0].last, 8191);
  EXPECT_EQ(ranges[0].master.address.host, "127.0.0.1");
  EXPECT_EQ(ranges[0].master.address.port, 7000);
  EXPECT_EQ(ranges[0].master.id, "aaaa");
  EXPECT_TRUE(ranges[0].replicas.empty());
  EXPECT_EQ(ranges[1].master.address.host, "seed.example");  // "" = the node that answered
  ASSERT_EQ(ranges[1].replicas.size(), 1u);
  EXPECT_EQ(ranges[1].replicas[0].address.port, 7002);
  // Redis 3 style: [host, port] only.
  auto old = parse_cluster_slots("*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$1\r\nh\r\n:1\r\n", "x");
  EXPECT_EQ(old.at(0).master.id, "");
  EXPECT_EQ(old.at(0).master.address.host, "h");
}

TEST(ClusterSlots, BadClusterSlotsRepliesSayWhy) {
  struct Case {
    std::string reply, mentions;
  } cases[] = {
      {"-ERR This instance has cluster support disabled\r\n", "cluster support disabled"},
      {"*1\r\n*3\r\n:0\r\n:16383\r\n", "incomplete"},
      {"+OK\r\n", "not an array"},
      {"*1\r\n:5\r\n", "a range is not"},
      {"*1\r\n*3\r\n:10\r\n:5\r\n*2\r\n$1\r\nh\r\n:1\r\n", "out of range"},
      {"*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$1\r\nh\r\n:1\r\n", "out of range"},
      {"*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$1\r\nh\r\n:0\r\n", "port 0"},
      {"*1\r\n*3\r\n:0\r\n:1\r\n*1\r\n$1\r\nh\r\n", "a node is not"},
      {"?garbage\r\n", "not RESP"},
  };
  for (const auto& c : cases) {
    try {
      parse_cluster_slots(c.reply, "h");
      ADD_FAILURE() << "accepted " << c.reply;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(c.mentions), std::string::npos)
          << c.reply << " -> " << e.what();
    }
  }
}

TEST(ClusterSlots, MovedAndAskRedirects) {
  auto m = parse_redirect("MOVED 3999 127.0.0.1:6381");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->kind, Redirect::Kind::moved);
  EXPECT_EQ(m->slot, 3999);
  EXPECT_EQ(m->to.host, "127.0.0.1");
  EXPECT_EQ(m->to.port, 6381);
  auto a = parse_redirect("ASK 16383 [::1]:7000");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->kind, Redirect::Kind::ask);
  EXPECT_EQ(a->slot, 16383);
  EXPECT_EQ(a->to.host, "::1");
  EXPECT_EQ(a->to.port, 7000);
  for (const char* bad : {"ERR unknown command", "MOVED", "MOVED 1", "MOVED x h:1",
                          "MOVED 16384 h:1", "MOVED 1 h:0", "MOVED 1 h", "ASK 1 :1", "moved 1 h:1"})
    EXPECT_FALSE(parse_redirect(bad)) << bad;
}

TEST(ClusterSlots, SlotMapAssignMoveAndStableNodeIndexes) {
  SlotMap map;
  EXPECT_EQ(map.covered_slots(), 0);
  EXPECT_EQ(map.node_of_key("foo"), -1);
  SlotRange a{0, 8191, {{"h", 1}, ""}, {}};
  SlotRange b{8192, 16383, {{"h", 2}, ""}, {}};
  map.assign({a, b});
  EXPECT_EQ(map.covered_slots(), 16384);
  ASSERT_EQ(map.nodes().size(), 2u);
  EXPECT_EQ(map.node_of_slot(0), 0);
  EXPECT_EQ(map.node_of_slot(16383), 1);
  EXPECT_EQ(map.node_of_key("foo"), 1);  // 12182
  EXPECT_EQ(map.node_of_key("bar"), 0);  // 5061

  int moved_to = map.move_slot(12182, HostPort{"h", 3});
  EXPECT_EQ(moved_to, 2);
  EXPECT_EQ(map.node_of_key("foo"), 2);
  EXPECT_EQ(map.node_of_slot(12183), 1);
  EXPECT_EQ(map.node_index(HostPort{"h", 2}), 1);

  // A refresh that drops node 1 keeps the others' indexes.
  SlotRange c{8192, 16383, {{"h", 3}, ""}, {}};
  map.assign({a, c});
  EXPECT_EQ(map.node_of_slot(16383), 2);
  EXPECT_EQ(map.node_of_slot(0), 0);
  EXPECT_EQ(map.nodes().size(), 3u);
  SlotRange partial{0, 99, {{"h", 1}, ""}, {}};
  map.assign({partial});
  EXPECT_EQ(map.covered_slots(), 100);
  EXPECT_EQ(map.node_of_slot(100), -1);
}

TEST(ClusterSlots, ReplicaReadsGoToTheMastersReplicasSlotBySlot) {
  SlotRange a{0, 8191, {{"m", 1}, ""}, {{{"r", 11}, ""}, {{"r", 12}, ""}}};
  SlotRange b{8192, 16383, {{"m", 2}, ""}, {}};  // no replica: its master reads
  SlotMap masters;
  masters.assign({a, b});
  EXPECT_EQ(masters.nodes().size(), 2u) << "replicas are nodes only with replica reads";
  EXPECT_EQ(masters.reader_of_slot(0), 0);
  SlotMap map(true);
  map.assign({a, b});
  ASSERT_EQ(map.nodes().size(), 4u);  // m:1, r:11, r:12, m:2
  EXPECT_EQ(map.nodes()[1].port, 11);
  EXPECT_EQ(map.nodes()[2].port, 12);
  EXPECT_EQ(map.node_of_slot(0), 0);
  EXPECT_EQ(map.reader_of_slot(0), 1);  // slot 0 -> the first replica, slot 1 -> the second
  EXPECT_EQ(map.reader_of_slot(1), 2);
  EXPECT_EQ(map.reader_of_slot(16383), map.node_of_slot(16383));
  ClusterRouter router(map);
  EXPECT_EQ(router.node_for_read("bar"), 5061 % 2 == 0 ? 1 : 2);  // bar: slot 5061
  EXPECT_EQ(router.node_for("bar"), 0);
  // A MOVED sends reads of the slot to its new master until a refresh names its replicas.
  const auto act = router.on_error("MOVED 5061 m:3");
  EXPECT_EQ(router.node_for_read("bar"), act.node);
}

TEST(ClusterSlots, RouterFollowsMovedCountsAndAsksOnce) {
  SlotMap map;
  map.assign({SlotRange{0, 8191, {{"h", 1}, ""}, {}}, SlotRange{8192, 16383, {{"h", 2}, ""}, {}}});
  ClusterRouter router(map);
  EXPECT_EQ(router.node_for("foo"), 1);  // slot 12182
  EXPECT_FALSE(router.needs_refresh());

  auto none = router.on_error("WRONGTYPE Operation against a key holding the wrong kind of value");
  EXPECT_EQ(none.kind, ClusterRouter::Action::Kind::none);

  auto ask = router.on_error("ASK 12182 h:3");
  EXPECT_EQ(ask.kind, ClusterRouter::Action::Kind::retry_asking);
  EXPECT_EQ(router.nodes()[static_cast<size_t>(ask.node)].port, 3);
  EXPECT_EQ(router.node_for("foo"), 1);  // ASK leaves the map
  EXPECT_FALSE(router.needs_refresh());

  auto moved = router.on_error("MOVED 12182 h:3");
  EXPECT_EQ(moved.kind, ClusterRouter::Action::Kind::retry);
  EXPECT_EQ(moved.node, ask.node);  // the same node, the same index
  EXPECT_EQ(router.node_for("foo"), moved.node);
  EXPECT_TRUE(router.needs_refresh());
  router.on_error("MOVED 0 h:2");
  EXPECT_EQ(router.take_moved(), 2u);
  EXPECT_EQ(router.take_moved(), 0u);
  EXPECT_EQ(router.take_asked(), 1u);

  router.replace({SlotRange{0, 16383, {{"h", 3}, ""}, {}}});
  EXPECT_FALSE(router.needs_refresh());
  EXPECT_EQ(router.node_for("bar"), moved.node);
}

TEST(ClusterSlots, RefreshIsRateLimitedAndKeepsMovesNewerThanTheRead) {
  SlotMap map;
  map.assign({SlotRange{0, 16383, {{"h", 1}, ""}, {}}});
  ClusterRouter router(map);
  EXPECT_FALSE(router.refresh_due(0));  // nothing moved: no refresh
  router.on_error("MOVED 12182 h:2");
  EXPECT_TRUE(router.refresh_due(1'000));  // the first at once
  router.on_error("MOVED 100 h:2");        // while the refresh is read
  EXPECT_FALSE(router.refresh_due(2'000));
  // The read predates the second MOVED: slot 100 stays where that MOVED said, and another
  // refresh is wanted, not before the interval is over.
  router.replace({SlotRange{0, 16383, {{"h", 1}, ""}, {}}});
  EXPECT_EQ(router.map().node_of_slot(12182), 0);
  EXPECT_EQ(router.nodes()[static_cast<size_t>(router.map().node_of_slot(100))].port, 2);
  EXPECT_TRUE(router.needs_refresh());
  EXPECT_FALSE(router.refresh_due(1'000 + ClusterRouter::kMinRefreshNs - 1));
  EXPECT_TRUE(router.refresh_due(1'000 + ClusterRouter::kMinRefreshNs));
  router.replace({SlotRange{0, 16383, {{"h", 1}, ""}, {}}});
  EXPECT_FALSE(router.needs_refresh());
  EXPECT_EQ(router.map().node_of_slot(100), 0);  // the newer read wins once no MOVED came since
  EXPECT_EQ(router.take_moved(), 2u);
}

}  // namespace
