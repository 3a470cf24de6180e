// The codecs against real servers (tests/support/servers.hpp) over a plain blocking socket: one
// pipelined batch of 100 sets and 100 gets written by the writers, every reply decoded by the
// codecs, and the verdicts counted exactly as the servers count them (Redis INFO commandstats /
// stats, memcached stats). Part of each batch is refused by the server, so the test shows that a
// refused set in the middle of a pipelined batch is seen (libmemcached's text protocol keeps
// only the last buffered reply).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <map>
#include <stdexcept>

#include "servers.hpp"
#include "store/memcached_codec.hpp"
#include "store/resp_codec.hpp"

namespace {

using kv::drive::store::ExpectFifo;
using kv::drive::store::Op;
using kv::drive::store::ReadStatus;
using kv::drive::store::Verdict;
using kv::test::StoreServer;
namespace mc = kv::drive::store::mc;
namespace resp = kv::drive::store::resp;

// Writes all of `request` to 127.0.0.1:port while reading replies (so neither side's socket
// buffer can fill and stall the other), handing each piece read to on_bytes until it returns
// true (every reply in). Throws on a socket error, EOF or 10 s without progress.
void exchange(int port, std::string_view request,
              const std::function<bool(std::string_view)>& on_bytes) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error("connect");
  }
  size_t sent = 0;
  char buf[65536];
  bool done = false;
  while (!done) {
    pollfd p{fd, static_cast<short>(POLLIN | (sent < request.size() ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, 10'000) <= 0) {
      ::close(fd);
      throw std::runtime_error("no progress for 10 s");
    }
    if ((p.revents & POLLOUT) != 0) {
      ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n < 0) break;
      sent += static_cast<size_t>(n);
    }
    if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      done = on_bytes(std::string_view(buf, static_cast<size_t>(n)));
    }
  }
  ::close(fd);
  if (!done) throw std::runtime_error("connection ended before every reply was read");
}

std::string key(const char* prefix, int i) { return prefix + std::to_string(i); }

long long cmdstat(int port, const std::string& cmd, const std::string& field) {
  std::string text = kv::test::redis_info(port, "commandstats");
  auto line = text.find("cmdstat_" + cmd + ":");
  if (line == std::string::npos) return 0;
  auto at = text.find(field + "=", line);
  if (at == std::string::npos || at > text.find('\n', line)) return 0;
  return std::stoll(text.substr(at + field.size() + 1));
}

TEST(CodecServers, RedisPipelinedBatchCountedAsTheServerCounts) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  // 50 sets, then maxmemory 1 byte (noeviction): the next 50 sets are refused with -OOM. Then
  // gets of the 50 stored keys (hits) and of the 50 refused ones (misses); maxmemory restored.
  std::string out;
  ExpectFifo<Op> expect(256);
  std::string value(100, 'v');
  for (int i = 0; i < 50; ++i) resp::append_set(out, key("k", i), value), expect.push(Op::set);
  for (std::string_view cmd : {"maxmemory-policy", "maxmemory"}) {
    resp::append_array_header(out, 4);
    resp::append_bulk(out, "CONFIG");
    resp::append_bulk(out, "SET");
    resp::append_bulk(out, cmd);
    resp::append_bulk(out, cmd == "maxmemory" ? "1" : "noeviction");
    expect.push(Op::other);
  }
  for (int i = 50; i < 100; ++i)
    resp::append_set(out, key("k", i), value, 60'000), expect.push(Op::set);
  for (int i = 0; i < 100; ++i) resp::append_get(out, key("k", i)), expect.push(Op::get);
  resp::append_array_header(out, 4);
  for (std::string_view w : {"CONFIG", "SET", "maxmemory", "0"}) resp::append_bulk(out, w);
  expect.push(Op::other);
  resp::append_ping(out);
  expect.push(Op::other);

  kv::drive::store::RespDecoder decoder;
  std::map<Verdict, int> sets, gets, others;
  std::vector<std::string> errors;
  exchange(redis.port(), out, [&](std::string_view bytes) {
    EXPECT_TRUE(decoder.feed(bytes));
    kv::drive::store::RespReply r;
    ReadStatus s;
    while ((s = decoder.next(&r)) == ReadStatus::reply) {
      EXPECT_FALSE(expect.empty());
      if (expect.empty()) return true;
      Op op = expect.front();
      expect.pop();
      Verdict v = kv::drive::store::resp_verdict(op, r);
      (op == Op::set ? sets : op == Op::get ? gets : others)[v]++;
      if (v == Verdict::error) errors.emplace_back(r.text);
      if (v == Verdict::hit) {
        EXPECT_EQ(r.text, value);
      }
    }
    EXPECT_EQ(s, ReadStatus::need_more) << decoder.error();
    return expect.empty() || s == ReadStatus::protocol_error;
  });
  EXPECT_EQ(sets[Verdict::ok], 50);
  EXPECT_EQ(sets[Verdict::error], 50);
  EXPECT_EQ(gets[Verdict::hit], 50);
  EXPECT_EQ(gets[Verdict::miss], 50);
  EXPECT_EQ(others[Verdict::ok], 4);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors.front().substr(0, 3), "OOM");
  // The server's own counts: executed sets, refused sets, gets, hits and misses.
  EXPECT_EQ(cmdstat(redis.port(), "set", "calls"), sets[Verdict::ok]);
  EXPECT_EQ(cmdstat(redis.port(), "set", "rejected_calls"), sets[Verdict::error]);
  EXPECT_EQ(cmdstat(redis.port(), "get", "calls"), 100);
  std::string stats = kv::test::redis_info(redis.port(), "stats");
  EXPECT_EQ(kv::test::stat_value(stats, "keyspace_hits"), gets[Verdict::hit]);
  EXPECT_EQ(kv::test::stat_value(stats, "keyspace_misses"), gets[Verdict::miss]);
}

// memcached with a 1 MiB item limit: 90 sets of 100 B stored, 10 sets of 1.5 MB refused (too
// large) spread through the batch; gets of all 100 keys: 90 hits, 10 misses.
struct McBatch {
  std::map<Verdict, int> sets, gets;
};

bool refused(int i) { return i % 10 == 3; }

// store_too_large: memcached 1.6 counts too-large sets there on the text protocol only.
void check_memcached_stats(int port, const McBatch& b, bool counts_too_large) {
  std::string stats = kv::test::tcp_request(port, "stats\r\n", "END\r\n");
  EXPECT_EQ(kv::test::stat_value(stats, "cmd_set"), b.sets.at(Verdict::ok));
  if (counts_too_large) {
    EXPECT_EQ(kv::test::stat_value(stats, "store_too_large"), b.sets.at(Verdict::error));
  }
  EXPECT_EQ(kv::test::stat_value(stats, "cmd_get"), 100);
  EXPECT_EQ(kv::test::stat_value(stats, "get_hits"), b.gets.at(Verdict::hit));
  EXPECT_EQ(kv::test::stat_value(stats, "get_misses"), b.gets.at(Verdict::miss));
}

TEST(CodecServers, MemcachedTextPipelinedBatchReadsEveryReply) {
  StoreServer memcached(StoreServer::Kind::memcached, {"-I", "1m"});
  KV_START_OR_SKIP(memcached);
  std::string small(100, 's'), big(1'500'000, 'b');
  std::string out;
  ExpectFifo<mc::TextOp> expect(256);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(mc::append_text_set(out, key("k", i), refused(i) ? big : small, 3, 0));
    expect.push(mc::TextOp::storage);
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(i % 2 ? mc::append_text_get(out, key("k", i))
                      : mc::append_text_gets(out, key("k", i)));
    expect.push(i % 2 ? mc::TextOp::get : mc::TextOp::gets);
  }
  mc::TextDecoder decoder;
  McBatch b;
  std::vector<int> refused_seen;
  int n = 0;
  exchange(memcached.port(), out, [&](std::string_view bytes) {
    decoder.feed(bytes);
    mc::TextReply r;
    ReadStatus s;
    while (!expect.empty() && (s = decoder.next(expect.front(), &r)) == ReadStatus::reply) {
      mc::TextOp op = expect.front();
      expect.pop();
      Verdict v = mc::text_verdict(op, r);
      if (op == mc::TextOp::storage) {
        b.sets[v]++;
        if (v == Verdict::error) {
          refused_seen.push_back(n);
          EXPECT_EQ(r.text, "object too large for cache");
        }
      } else {
        b.gets[v]++;
        if (v == Verdict::hit) {
          EXPECT_EQ(r.value, small);
          EXPECT_EQ(r.flags, 3u);
          EXPECT_EQ(r.has_cas, op == mc::TextOp::gets);
        }
      }
      ++n;
    }
    if (!expect.empty()) {
      EXPECT_EQ(s, ReadStatus::need_more) << decoder.error();
    }
    return expect.empty() || s == ReadStatus::protocol_error;
  });
  EXPECT_EQ(b.sets[Verdict::ok], 90);
  EXPECT_EQ(b.sets[Verdict::error], 10);
  EXPECT_EQ(refused_seen, (std::vector<int>{3, 13, 23, 33, 43, 53, 63, 73, 83, 93}));
  EXPECT_EQ(b.gets[Verdict::hit], 90);
  EXPECT_EQ(b.gets[Verdict::miss], 10);
  check_memcached_stats(memcached.port(), b, true);
}

TEST(CodecServers, MemcachedBinaryPipelinedBatchReadsEveryReply) {
  StoreServer memcached(StoreServer::Kind::memcached, {"-I", "1m"});
  KV_START_OR_SKIP(memcached);
  std::string small(100, 's'), big(1'500'000, 'b');
  std::string out;
  ExpectFifo<Op> expect(256);
  uint32_t opaque = 0;
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(mc::append_binary_set(out, key("k", i), refused(i) ? big : small, opaque++, 3));
    expect.push(Op::set);
  }
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(i % 2 ? mc::append_binary_get(out, key("k", i), opaque++)
                      : mc::append_binary_getk(out, key("k", i), opaque++));
    expect.push(Op::get);
  }
  mc::BinaryDecoder decoder;
  McBatch b;
  std::vector<uint16_t> set_statuses;
  uint32_t want_opaque = 0;
  exchange(memcached.port(), out, [&](std::string_view bytes) {
    decoder.feed(bytes);
    mc::BinaryReply r;
    ReadStatus s;
    while (!expect.empty() && (s = decoder.next(&r)) == ReadStatus::reply) {
      Op op = expect.front();
      expect.pop();
      EXPECT_EQ(r.opaque, want_opaque++);
      Verdict v = mc::binary_verdict(op, r);
      if (op == Op::set) {
        b.sets[v]++;
        if (v != Verdict::ok) set_statuses.push_back(r.status);
      } else {
        b.gets[v]++;
        if (v == Verdict::hit) {
          EXPECT_EQ(r.value, small);
          EXPECT_EQ(r.flags, 3u);
        }
      }
    }
    if (!expect.empty()) {
      EXPECT_EQ(s, ReadStatus::need_more) << decoder.error();
    }
    return expect.empty() || s == ReadStatus::protocol_error;
  });
  EXPECT_EQ(b.sets[Verdict::ok], 90);
  EXPECT_EQ(b.sets[Verdict::error], 10);
  EXPECT_EQ(set_statuses, std::vector<uint16_t>(10, mc::status::kValueTooLarge));
  EXPECT_EQ(b.gets[Verdict::hit], 90);
  EXPECT_EQ(b.gets[Verdict::miss], 10);
  check_memcached_stats(memcached.port(), b, false);
}

}  // namespace
