#include "engine/loop/tcp_transport.hpp"

#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <sys/socket.h>
#include <time.h>

#include <cstring>

namespace kv::drive::loop {
namespace {

constexpr int64_t kMaxStampAgeNs = 10'000'000'000;

int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
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
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPING ||
        c->cmsg_len < CMSG_LEN(sizeof(scm_timestamping)))
      continue;
    scm_timestamping ts{};
    std::memcpy(&ts, CMSG_DATA(c), sizeof ts);  // ts[0]: the software stamp
    const int64_t stamp = static_cast<int64_t>(ts.ts[0].tv_sec) * 1'000'000'000 + ts.ts[0].tv_nsec;
    const int64_t age = wall - stamp;
    if (stamp != 0 && age >= 0 && age <= kMaxStampAgeNs) *arrived_ns = steady - age;
  }
  return n;
}

}  // namespace kv::drive::loop
