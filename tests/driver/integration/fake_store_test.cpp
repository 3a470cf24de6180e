// The scriptable fake store (tests/support/fake_store.hpp) over raw sockets: what it speaks and
// what its scripts do (refusals, per-connection scripts, delays). The real kvdrive against it:
// fake_store_kvdrive_test.cpp. No real server needed.
#include "fake_store.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "kvbench/clock.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;
using Clock = std::chrono::steady_clock;

// A blocking loopback client for the raw-socket tests.
class Client {
 public:
  explicit Client(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) ADD_FAILURE() << "connect";
  }
  ~Client() { ::close(fd_); }
  void send(const std::string& s) {
    ASSERT_EQ(::send(fd_, s.data(), s.size(), MSG_NOSIGNAL), static_cast<ssize_t>(s.size()));
  }
  // Reads until `n` bytes arrived, the peer closed, or timeout_ms passed without data.
  std::string read(size_t n, int timeout_ms = 5000) {
    std::string out;
    char buf[4096];
    while (out.size() < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) break;
      ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
      if (r <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  std::string ask(const std::string& req, const std::string& expected) {
    send(req);
    return read(expected.size());
  }
  bool closed() {
    if (!closed_) read(1, 2000);
    return closed_;
  }

 private:
  int fd_ = -1;
  bool closed_ = false;
};

std::string resp(std::initializer_list<std::string> args) {
  std::string s = "*" + std::to_string(args.size()) + "\r\n";
  for (const auto& a : args) s += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
  return s;
}

// A memcached binary request (magic 0x80).
std::string bin(uint8_t op, const std::string& key, const std::string& extras = "",
                const std::string& value = "") {
  std::string h(24, '\0');
  h[0] = static_cast<char>(0x80);
  h[1] = static_cast<char>(op);
  uint16_t kl = htons(static_cast<uint16_t>(key.size()));
  std::memcpy(&h[2], &kl, 2);
  h[4] = static_cast<char>(extras.size());
  uint32_t body = htonl(static_cast<uint32_t>(extras.size() + key.size() + value.size()));
  std::memcpy(&h[8], &body, 4);
  return h + extras + key + value;
}

TEST(FakeStore, SpeaksRespMemcachedTextAndBinaryOnOnePort) {
  FakeStore store;
  Client c(store.port());
  EXPECT_EQ(c.ask(resp({"PING"}), "+PONG\r\n"), "+PONG\r\n");
  EXPECT_EQ(c.ask(resp({"SET", "k", "v1", "PX", "60000"}), "+OK\r\n"), "+OK\r\n");
  EXPECT_EQ(c.ask(resp({"GET", "k"}), "$2\r\nv1\r\n"), "$2\r\nv1\r\n");
  EXPECT_EQ(c.ask(resp({"GET", "nope"}), "$-1\r\n"), "$-1\r\n");
  EXPECT_EQ(c.ask(resp({"FLUSHALL"}), "-ERR").substr(0, 4), "-ERR");
  c.read(100, 200);  // the rest of the error line

  // memcached text on the same key space.
  EXPECT_EQ(c.ask("set t 5 0 3\r\nabc\r\n", "STORED\r\n"), "STORED\r\n");
  c.send("set quiet 0 0 1 noreply\r\nq\r\n");
  const std::string two = "VALUE t 5 3\r\nabc\r\nVALUE k 0 2\r\nv1\r\nEND\r\n";
  EXPECT_EQ(c.ask("get t nope k\r\n", two), two);
  EXPECT_EQ(c.ask("version\r\n", "VERSION 1.6.18\r\n"), "VERSION 1.6.18\r\n");

  // memcached binary: a set, a quiet get of a hit and of a miss, then noop.
  std::string reply = c.ask(bin(0x01, "b", std::string(8, '\0'), "xyz"), std::string(24, ' '));
  ASSERT_EQ(reply.size(), 24u);
  EXPECT_EQ(static_cast<uint8_t>(reply[0]), 0x81);
  EXPECT_EQ(reply[6] | reply[7], 0);  // status success
  c.send(bin(0x0d, "b") + bin(0x0d, "missing") + bin(0x0a, ""));
  reply = c.read(24 + 4 + 1 + 3 + 24);  // getkq hit: extras (flags), key, value; then noop
  ASSERT_EQ(reply.size(), 56u);
  EXPECT_EQ(reply.substr(28, 4), "bxyz");
  EXPECT_EQ(static_cast<uint8_t>(reply[33]), 0x0a);
  // Binary STAT: one response per counter, then an empty one.
  c.send(bin(0x10, ""));
  reply = c.read(100'000, 300);
  ASSERT_GE(reply.size(), 48u);
  EXPECT_NE(reply.find("cmd_get"), std::string::npos);
  EXPECT_EQ(reply.substr(reply.size() - 24, 2), "\x81\x10");
  EXPECT_EQ(reply.substr(reply.size() - 16, 4), std::string(4, '\0'));  // no body

  EXPECT_EQ(store.value("quiet"), "q");
  EXPECT_EQ(store.requests("get"), 5);  // two RESP gets, three keys of one text get
  EXPECT_EQ(store.requests("set"), 4);  // RESP, two text, binary
  EXPECT_EQ(store.requests("getkq"), 2);
  EXPECT_EQ(store.requests(0, "noop"), 1);
  EXPECT_EQ(store.connections_accepted(), 1);
  auto conns = store.connections();
  ASSERT_EQ(conns.size(), 1u);
  EXPECT_GT(conns[0].bytes_in, 100);
  EXPECT_GT(conns[0].bytes_out, 100);
}

TEST(FakeStore, RefusalsPerProtocol) {
  FakeStore store;
  FakeStore::Behavior b;
  b.refuse_sets = FakeStore::Refusal::out_of_memory;
  store.set_behavior_all(b);
  Client c(store.port());
  EXPECT_EQ(c.ask(resp({"SET", "k", "v"}), "-OOM").substr(0, 4), "-OOM");
  c.read(200, 200);
  const std::string oom = "SERVER_ERROR out of memory storing object\r\n";
  EXPECT_EQ(c.ask("set t 0 0 1 noreply\r\nx\r\n", oom), oom);  // errors ignore noreply
  std::string reply = c.ask(bin(0x11, "b", std::string(8, '\0'), "x"), std::string(24, ' '));
  ASSERT_EQ(reply.size(), 24u);  // even a quiet set's refusal is answered
  EXPECT_EQ(static_cast<uint8_t>(reply[7]), 0x82);
  b.refuse_sets = FakeStore::Refusal::read_only;
  store.set_behavior_all(b);
  EXPECT_EQ(c.ask(resp({"SET", "k", "v"}), "-READONLY").substr(0, 9), "-READONLY");
  c.read(200, 200);
  EXPECT_EQ(c.ask("set t 0 0 1\r\nx\r\n", "NOT_STORED\r\n"), "NOT_STORED\r\n");
  reply = c.ask(bin(0x01, "b", std::string(8, '\0'), "x"), std::string(24, ' '));
  ASSERT_EQ(reply.size(), 24u);
  EXPECT_EQ(static_cast<uint8_t>(reply[7]), 0x05);
  EXPECT_FALSE(store.value("k"));
  EXPECT_FALSE(store.value("t"));
}

TEST(FakeStore, ScriptsApplyPerConnection) {
  FakeStore store;
  FakeStore::Behavior stall;
  stall.stall_after_requests = 1;  // until released
  store.set_behavior(1, stall);
  FakeStore::Behavior cut;
  cut.close_after_reply_bytes = 9;  // "+PONG\r\n" fits, the next reply is cut after 2 bytes
  store.set_behavior(2, cut);
  Client c0(store.port()), c1(store.port()), c2(store.port());
  const std::string pong = "+PONG\r\n";
  EXPECT_EQ(c1.ask(resp({"PING"}), pong), pong);
  c1.send(resp({"PING"}));
  EXPECT_EQ(c1.read(pong.size(), 300), "");       // stalled ...
  EXPECT_EQ(c0.ask(resp({"PING"}), pong), pong);  // ... while connection 0 answers
  store.release_stalls();
  EXPECT_EQ(c1.read(pong.size()), pong);
  EXPECT_EQ(c1.ask(resp({"PING"}), pong), pong);  // one stall per script

  EXPECT_EQ(c2.ask(resp({"PING"}), pong), pong);
  EXPECT_EQ(c2.ask(resp({"PING"}), pong), "+P");
  EXPECT_TRUE(c2.closed());
  EXPECT_EQ(store.connections()[2].bytes_out, 9);
  EXPECT_FALSE(store.connections()[2].open);

  FakeStore::Behavior late_close;
  late_close.close_after_requests = 1;
  late_close.garbage_after_requests = 0;
  store.set_behavior(3, late_close);
  Client c3(store.port());
  EXPECT_EQ(c3.ask("version\r\n", "GARBAGE \x01\x02\r\n"), "GARBAGE \x01\x02\r\n");
  c3.send("version\r\n");
  EXPECT_TRUE(c3.closed());
  EXPECT_EQ(store.requests(3, "version"), 1);  // the second was never taken
}

TEST(FakeStore, DelayAndTextOnly) {
  FakeStore store;
  FakeStore::Behavior b;
  b.delay_us = 30'000;
  b.text_only = true;
  store.set_behavior_all(b);
  Client c(store.port());
  auto t0 = Clock::now();
  EXPECT_EQ(c.ask("version\r\n", "VERSION 1.6.18\r\n"), "VERSION 1.6.18\r\n");
  EXPECT_GE(Clock::now() - t0, std::chrono::milliseconds(30));
  c.send(bin(0x0b, ""));
  EXPECT_EQ(c.read(24, 300), "");  // binary is read and never answered
  EXPECT_EQ(store.requests("version"), 2);
}

}  // namespace
