// The plain-TCP transport's receive stamps (engine/loop/tcp_transport.hpp) on a real loopback
// connection: the kernel stamps what it receives, and the stamp is the arrival, not the read.
#include "engine/loop/tcp_transport.hpp"

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

#include "kvbench/clock.hpp"

namespace {

using kv::drive::loop::enable_rx_timestamps;
using kv::drive::loop::enable_tx_timestamps;
using kv::drive::loop::read_stamped;
using kv::drive::loop::read_tx_stamp;
using kv::drive::loop::TxRead;

// A connected pair of TCP sockets on 127.0.0.1: [0] the client (stamped), [1] the server side.
struct LoopbackPair {
  int fd[2] = {-1, -1};
  LoopbackPair() {
    const int lst = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    EXPECT_EQ(::bind(lst, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(lst, 1), 0);
    EXPECT_EQ(::getsockname(lst, reinterpret_cast<sockaddr*>(&a), &len), 0);
    fd[0] = ::socket(AF_INET, SOCK_STREAM, 0);
    EXPECT_TRUE(enable_rx_timestamps(fd[0]));  // before the connect, as kvdrive's links
    EXPECT_EQ(::connect(fd[0], reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    fd[1] = ::accept(lst, nullptr, nullptr);
    ::close(lst);
  }
  ~LoopbackPair() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void send(const std::string& s) const {
    ASSERT_EQ(::send(fd[1], s.data(), s.size(), 0), static_cast<ssize_t>(s.size()));
  }
  void wait_readable() const {
    pollfd p{fd[0], POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 5000), 1);
  }
  // The kernel turns receive stamping on for the whole host when the first socket asks, from a
  // work queue: until then segments arrive unstamped. Exchanges until one is stamped; false
  // when none is within ~2 s.
  bool stamping_on() const {
    for (int i = 0; i < 200; ++i) {
      send("x");
      wait_readable();
      char buf[8];
      int64_t arrived = 0;
      if (read_stamped(fd[0], buf, sizeof buf, &arrived) == 1 && arrived != 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

TEST(TcpTransport, TheKernelStampsWhatArrivesAndTheReadReturnsIt) {
  LoopbackPair c;
  ASSERT_TRUE(c.stamping_on()) << "no segment was stamped in 200 exchanges";
  // Several replies, each read on its own: every one carries a stamp (a kernel that does not
  // stamp would give 0 for all of them).
  int stamped = 0;
  for (int i = 0; i < 5; ++i) {
    c.send("+OK\r\n");
    c.wait_readable();
    char buf[64];
    int64_t arrived = -1;
    const int64_t before = kv::steady_ns();
    const ssize_t n = read_stamped(c.fd[0], buf, sizeof buf, &arrived);
    const int64_t after = kv::steady_ns();
    ASSERT_EQ(n, 5);
    EXPECT_EQ(std::string(buf, 5), "+OK\r\n");
    if (arrived != 0) {
      ++stamped;
      EXPECT_LE(arrived, after);
      EXPECT_GT(arrived, before - 5'000'000'000);
    }
  }
  EXPECT_EQ(stamped, 5);
}

TEST(TcpTransport, TheStampIsTheArrivalNotTheRead) {
  LoopbackPair c;
  ASSERT_TRUE(c.stamping_on());
  char buf[64];
  int64_t arrived = 0;
  // The reply arrives, and is read 100 ms later: the stamp says when it arrived.
  c.send("+OK\r\n");
  c.wait_readable();
  const int64_t readable_at = kv::steady_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t read_at = kv::steady_ns();
  ASSERT_EQ(read_stamped(c.fd[0], buf, sizeof buf, &arrived), 5);
  ASSERT_NE(arrived, 0);
  EXPECT_LE(arrived, readable_at);
  EXPECT_GE(read_at - arrived, 100'000'000);
}

TEST(TcpTransport, AReadOfNothingAndAClosedPeerAreTheUsualResults) {
  LoopbackPair c;
  char buf[16];
  int64_t arrived = 7;
  EXPECT_EQ(read_stamped(c.fd[0], buf, sizeof buf, &arrived), -1);
  EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
  EXPECT_EQ(arrived, 0);
  ::close(c.fd[1]);
  c.fd[1] = -1;
  c.wait_readable();
  EXPECT_EQ(read_stamped(c.fd[0], buf, sizeof buf, &arrived), 0);
}

// --wire-start kernel: each send's last byte is stamped when it leaves for the device, keyed by
// the bytes written since the stamps were asked for, and the stamp lies within the send call.
TEST(TcpTransport, EachSendIsStampedWhenItLeavesKeyedByItsLastByte) {
  LoopbackPair c;
  ASSERT_TRUE(enable_tx_timestamps(c.fd[0]));
  int64_t before[3], after[3];
  const size_t sizes[3] = {10, 20, 5};
  for (int i = 0; i < 3; ++i) {
    const std::string bytes(sizes[i], 'a');
    before[i] = kv::steady_ns();
    ASSERT_EQ(::send(c.fd[0], bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    after[i] = kv::steady_ns();
  }
  const uint32_t keys[3] = {9, 29, 34};  // the last byte of each, counted from 0
  for (int i = 0; i < 3; ++i) {
    uint32_t key = 0;
    int64_t at = 0;
    TxRead r = TxRead::empty;
    for (int tries = 0; tries < 500 && (r = read_tx_stamp(c.fd[0], &key, &at)) == TxRead::empty;
         ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_EQ(r, TxRead::stamp) << "send " << i << " was not stamped";
    EXPECT_EQ(key, keys[i]);
    ASSERT_NE(at, 0) << "a stamp of zero";
    // Within the call, give or take the two clocks' offset read after it (a preemption).
    EXPECT_GE(at, before[i] - 1'000'000);
    EXPECT_LE(at, after[i] + 1'000'000);
  }
  uint32_t key = 0;
  int64_t at = 0;
  EXPECT_EQ(read_tx_stamp(c.fd[0], &key, &at), TxRead::empty);
  // Without them asked for, nothing is queued.
  LoopbackPair plain;
  ASSERT_EQ(::send(plain.fd[0], "x", 1, 0), 1);
  EXPECT_EQ(read_tx_stamp(plain.fd[0], &key, &at), TxRead::empty);
}

}  // namespace
