#include "engine/loop/tcp_transport.hpp"

#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>

#include <cerrno>
#include <cstring>

namespace kv::drive::loop {
namespace {

constexpr int64_t kMaxStampAgeNs = 10'000'000'000;

// Linux 6.2's: the key counts from the bytes queued (snd_nxt) rather than acknowledged
// (snd_una) when it is enabled. Older kernels refuse it; there the two agree when nothing is in
// flight, as enable_tx_timestamps asks.
#ifndef SOF_TIMESTAMPING_OPT_ID_TCP
constexpr int SOF_TIMESTAMPING_OPT_ID_TCP = 1 << 16;
#endif

int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The software stamp of an SCM_TIMESTAMPING message on the steady clock, by the wall-steady
// offset of (steady, wall) read together after it; 0 when absent or outside [wall - 10 s, wall].
int64_t steady_stamp(const cmsghdr* c, int64_t steady, int64_t wall) noexcept {
  if (c->cmsg_len < CMSG_LEN(sizeof(scm_timestamping))) return 0;
  scm_timestamping ts{};
  std::memcpy(&ts, CMSG_DATA(c), sizeof ts);  // ts[0]: the software stamp
  const int64_t stamp = static_cast<int64_t>(ts.ts[0].tv_sec) * 1'000'000'000 + ts.ts[0].tv_nsec;
  const int64_t age = wall - stamp;
  return stamp != 0 && age >= 0 && age <= kMaxStampAgeNs ? steady - age : 0;
}

}  // namespace

bool enable_rx_timestamps(int fd) noexcept {
  const int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
}

ssize_t read_stamped(int fd, char* buf, size_t len, int64_t* arrived_ns,
                     int64_t* read_ns) noexcept {
  *arrived_ns = 0;
  iovec iov{buf, len};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(scm_timestamping))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT);
  if (n <= 0) return n;
  const int64_t steady = clock_ns(CLOCK_MONOTONIC);
  const int64_t wall = clock_ns(CLOCK_REALTIME);
  if (read_ns != nullptr) *read_ns = steady;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING)
      *arrived_ns = steady_stamp(c, steady, wall);
  }
  return n;
}

int64_t arrival_now(const cmsghdr* c, int64_t* read_ns) noexcept {
  const int64_t steady = clock_ns(CLOCK_MONOTONIC);
  *read_ns = steady;
  if (c == nullptr) return 0;
  return steady_stamp(c, steady, clock_ns(CLOCK_REALTIME));
}

bool enable_tx_timestamps(int fd) noexcept {
  const int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE |
                    SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_OPT_ID |
                    SOF_TIMESTAMPING_OPT_TSONLY;
  const int with_tcp = flags | SOF_TIMESTAMPING_OPT_ID_TCP;
  return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &with_tcp, sizeof with_tcp) == 0 ||
         setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof flags) == 0;
}

TxRead read_tx_stamp(int fd, uint32_t* key, int64_t* sent_ns) noexcept {
  *key = 0;
  *sent_ns = 0;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(scm_timestamping)) +
                                CMSG_SPACE(sizeof(sock_extended_err) + sizeof(sockaddr_in6))];
  char byte = 0;  // OPT_TSONLY: no payload comes back
  iovec iov{&byte, sizeof byte};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) return TxRead::empty;
  const int64_t steady = clock_ns(CLOCK_MONOTONIC);
  const int64_t wall = clock_ns(CLOCK_REALTIME);
  int64_t at = 0;
  bool sent = false;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_TIMESTAMPING) {
      at = steady_stamp(c, steady, wall);
    } else if ((c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
               (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR)) {
      if (c->cmsg_len < CMSG_LEN(sizeof(sock_extended_err))) continue;
      sock_extended_err e{};
      std::memcpy(&e, CMSG_DATA(c), sizeof e);
      if (e.ee_errno != ENOMSG || e.ee_origin != SO_EE_ORIGIN_TIMESTAMPING ||
          e.ee_info != SCM_TSTAMP_SND)
        continue;
      sent = true;
      *key = e.ee_data;
    }
  }
  if (!sent) return TxRead::other;
  *sent_ns = at;
  return TxRead::stamp;
}

}  // namespace kv::drive::loop
