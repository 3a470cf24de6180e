// FakeStore (fake_store.hpp): the server thread (the listening socket, connections polled, each
// request put through its connection's script, replies written when due) and the public
// members. What the requests are and how they are answered: fake_store_protocol.cpp.
#include "fake_store.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "fake_store_impl.hpp"

namespace kv::test {
using namespace fake_store_detail;  // NOLINT(google-build-using-namespace): FakeStore's insides

// Cuts and answers every complete request in c.in (under mu).
void FakeStore::Impl::on_input(Conn& c, int64_t now) {
  size_t pos = 0;
  while (pos < c.in.size() && !c.closing) {
    c.b = behavior_of(c.index);
    if (c.b.close_after_requests >= 0 && c.requests >= c.b.close_after_requests) {
      c.closing = true;  // this request stays unanswered
      break;
    }
    Request r;
    size_t used = 0;
    Cut cut = cut_request(std::string_view(c.in).substr(pos), &used, &r);
    if (cut == Cut::incomplete) break;
    if (cut == Cut::bad || (r.wire == Wire::resp && r.args.empty())) {
      c.pending.push_back({now, r.wire == Wire::binary ? "" : "-ERR Protocol error\r\n"});
      c.closing = true;
      break;
    }
    pos += used;
    ++c.requests;
    if (c.b.stall_after_requests >= 0 && c.requests > c.b.stall_after_requests &&
        c.stalled_in_gen != gen) {
      c.stalled = true;
      c.stalled_in_gen = gen;
      c.stall_release = releases;
      c.stall_until_us = c.b.stall_us > 0 ? now + c.b.stall_us : INT64_MAX;
    }
    if (r.wire == Wire::binary && c.b.text_only) {
      count(c, binary_name(static_cast<uint8_t>(r.header[1])));
      continue;
    }
    std::string reply = r.wire == Wire::resp   ? resp(c, r)
                        : r.wire == Wire::text ? text(c, r)
                                               : binary(c, r);
    const bool version = r.wire == Wire::text
                             ? !r.args.empty() && lower(r.args[0]) == "version"
                             : r.wire == Wire::binary && static_cast<uint8_t>(r.header[1]) == 0x0b;
    if (c.b.garbage_after_requests >= 0 && c.requests > c.b.garbage_after_requests &&
        !(version && c.b.garbage_spares_version)) {
      reply = r.wire == Wire::resp   ? "?garbage\x01\r\n"
              : r.wire == Wire::text ? "GARBAGE \x01\x02\r\n"
                                     : std::string(24, '\x7f');
    }
    if (!reply.empty()) c.pending.push_back({now + c.b.delay_us, std::move(reply)});
  }
  c.in.erase(0, pos);
}

FakeStore::FakeStore() : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  s.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s.listen_fd < 0 || s.wake_fd < 0 ||
      ::bind(s.listen_fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(s.listen_fd, 128) != 0 ||
      ::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    std::string why = std::strerror(errno);
    if (s.listen_fd >= 0) ::close(s.listen_fd);
    if (s.wake_fd >= 0) ::close(s.wake_fd);
    throw std::runtime_error("fake store: cannot listen on 127.0.0.1: " + why);
  }
  s.port = ntohs(a.sin_port);
  s.thread = std::thread([this] { impl_->serve(); });
}

FakeStore::~FakeStore() {
  impl_->stop = true;
  impl_->wake();
  impl_->thread.join();
  for (auto& c : impl_->conns) ::close(c->fd);
  ::close(impl_->listen_fd);
  ::close(impl_->wake_fd);
}

// The server thread: writes what is due, closes what is finished, then waits for input, a due
// reply, the end of a stall, or a wake-up (a new script, release_stalls(), the destructor).
void FakeStore::Impl::serve() {
  Impl& s = *this;
  std::vector<pollfd> fds;
  char buf[65536];
  while (!s.stop) {
    const int64_t now = now_us();
    int64_t next_us = now + 1'000'000;
    {
      std::lock_guard lock(s.mu);
      for (auto& cp : s.conns) {
        Conn& c = *cp;
        if (c.stalled && (now >= c.stall_until_us || s.releases != c.stall_release))
          c.stalled = false;
        while (!c.stalled && !c.pending.empty() && c.pending.front().due_us <= now) {
          c.out += c.pending.front().bytes;
          c.pending.pop_front();
        }
        // Write what is due; a cut (close_after_reply_bytes) closes the connection.
        auto& ctr = s.counters[static_cast<size_t>(c.index)];
        while (!c.out.empty()) {
          size_t n = c.out.size();
          bool cut = c.b.close_after_reply_bytes >= 0 &&
                     ctr.bytes_out + static_cast<int64_t>(n) >= c.b.close_after_reply_bytes;
          if (cut)
            n = static_cast<size_t>(
                std::max<int64_t>(0, c.b.close_after_reply_bytes - ctr.bytes_out));
          ssize_t w = n == 0 ? 0 : ::send(c.fd, c.out.data(), n, MSG_NOSIGNAL);
          if (w < 0 && (errno == EAGAIN || errno == EINTR)) break;
          if (w < 0) {
            c.closing = true;
            c.pending.clear();
            c.out.clear();
            break;
          }
          ctr.bytes_out += w;
          c.out.erase(0, static_cast<size_t>(w));
          if (cut && ctr.bytes_out >= c.b.close_after_reply_bytes) {
            c.closing = true;
            c.pending.clear();
            c.out.clear();
          }
        }
        if (c.stalled)
          next_us = std::min(next_us, c.stall_until_us);
        else if (!c.pending.empty())
          next_us = std::min(next_us, c.pending.front().due_us);
      }
      // Close what is finished.
      std::erase_if(s.conns, [&](const std::unique_ptr<Conn>& c) {
        if (!c->closing || !c->pending.empty() || !c->out.empty()) return false;
        ::close(c->fd);
        s.counters[static_cast<size_t>(c->index)].open = false;
        return true;
      });
    }
    fds.clear();
    fds.push_back({s.wake_fd, POLLIN, 0});
    fds.push_back({s.listen_fd, POLLIN, 0});
    for (auto& c : s.conns)
      fds.push_back({c->fd, static_cast<short>(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
    int64_t wait_ms = std::max<int64_t>(0, (next_us - now + 999) / 1000);
    if (::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(wait_ms, 1000))) < 0 &&
        errno != EINTR)
      return;
    if (fds[0].revents) {
      uint64_t n;
      [[maybe_unused]] ssize_t r = ::read(s.wake_fd, &n, sizeof n);
    }
    std::lock_guard lock(s.mu);
    const int64_t t = now_us();
    for (size_t i = 2; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Conn& c = *s.conns[i - 2];
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {  // the client went away: nothing more to answer
        c.closing = true;
        c.pending.clear();
        c.out.clear();
        continue;
      }
      s.counters[static_cast<size_t>(c.index)].bytes_in += n;
      if (c.closing) continue;  // read and dropped
      c.in.append(buf, static_cast<size_t>(n));
      s.on_input(c, t);
    }
    if (fds[1].revents & POLLIN) {
      for (;;) {
        int fd = ::accept4(s.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        auto c = std::make_unique<Conn>();
        c->fd = fd;
        c->index = static_cast<int>(s.counters.size());
        s.counters.emplace_back();
        s.conns.push_back(std::move(c));
      }
    }
  }
}

int FakeStore::port() const { return impl_->port; }
std::string FakeStore::redis_uri() const { return "redis://127.0.0.1:" + std::to_string(port()); }
std::string FakeStore::memcached_uri() const {
  return "memcached://127.0.0.1:" + std::to_string(port());
}

void FakeStore::set_behavior(int index, const Behavior& b) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->per_conn[index] = b;
    ++impl_->gen;
  }
  impl_->wake();
}

void FakeStore::set_behavior_all(const Behavior& b) {
  {
    std::lock_guard lock(impl_->mu);
    impl_->all = b;
    ++impl_->gen;
  }
  impl_->wake();
}

void FakeStore::release_stalls() {
  {
    std::lock_guard lock(impl_->mu);
    ++impl_->releases;
  }
  impl_->wake();
}

int64_t FakeStore::requests(const std::string& command) const {
  std::lock_guard lock(impl_->mu);
  int64_t n = 0;
  for (const auto& c : impl_->counters) {
    auto it = c.requests.find(command);
    if (it != c.requests.end()) n += it->second;
  }
  return n;
}

int64_t FakeStore::requests(int index, const std::string& command) const {
  std::lock_guard lock(impl_->mu);
  if (index < 0 || static_cast<size_t>(index) >= impl_->counters.size()) return 0;
  const auto& r = impl_->counters[static_cast<size_t>(index)].requests;
  auto it = r.find(command);
  return it == r.end() ? 0 : it->second;
}

std::vector<FakeStore::ConnectionCounters> FakeStore::connections() const {
  std::lock_guard lock(impl_->mu);
  return impl_->counters;
}

int FakeStore::connections_accepted() const {
  std::lock_guard lock(impl_->mu);
  return static_cast<int>(impl_->counters.size());
}

std::optional<std::string> FakeStore::value(const std::string& key) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->items.find(key);
  if (it == impl_->items.end()) return std::nullopt;
  if (it->second.expires_us != 0 && it->second.expires_us <= now_us()) return std::nullopt;
  return it->second.value;
}

}  // namespace kv::test
