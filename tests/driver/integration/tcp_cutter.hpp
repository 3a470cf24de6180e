// A loopback TCP relay for tests that can drop every connection it carries on demand, to
// simulate a link that breaks while both ends stay up. One thread; header-only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace kv::test {

class TcpCutter {
 public:
  explicit TcpCutter(int upstream_port) : upstream_(upstream_port) {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(0);
    bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(listener_, 16);
    socklen_t len = sizeof a;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { run(); });
  }
  ~TcpCutter() {
    stop_ = true;
    thread_.join();
    for (auto& [a, b] : pairs_) {
      close(a);
      close(b);
    }
    close(listener_);
  }
  int port() const { return port_; }
  // true: drops every relayed connection and refuses new ones; false: relays again.
  void cut_and_pause(bool cut) {
    paused_ = cut;
    if (cut) cut_ = true;
  }

 private:
  static sockaddr_in loopback(int port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  void accept_one() {
    int c = accept(listener_, nullptr, nullptr);
    if (c < 0) return;
    if (paused_) {
      close(c);
      return;
    }
    int u = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a = loopback(upstream_);
    if (connect(u, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      close(c);
      close(u);
      return;
    }
    pairs_.emplace_back(c, u);
  }
  // Copies what is readable on `from` to `to`; false when the connection ended.
  static bool relay(int from, int to) {
    char buf[65536];
    ssize_t n = recv(from, buf, sizeof buf, 0);
    return n > 0 && send(to, buf, static_cast<size_t>(n), MSG_NOSIGNAL) == n;
  }
  void run() {
    while (!stop_) {
      if (cut_.exchange(false)) {
        for (auto& [a, b] : pairs_) {
          close(a);
          close(b);
        }
        pairs_.clear();
      }
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (auto& [a, b] : pairs_) {
        fds.push_back({a, POLLIN, 0});
        fds.push_back({b, POLLIN, 0});
      }
      if (poll(fds.data(), fds.size(), 20) <= 0) continue;
      if (fds[0].revents & POLLIN) accept_one();
      for (size_t i = 0; i < (fds.size() - 1) / 2 && i < pairs_.size(); ++i) {
        auto [a, b] = pairs_[i];
        bool ok = true;
        if (fds[1 + 2 * i].revents) ok = relay(a, b);
        if (ok && fds[2 + 2 * i].revents) ok = relay(b, a);
        if (!ok) {
          close(a);
          close(b);
          pairs_.erase(pairs_.begin() + static_cast<long>(i));
          break;  // indices shifted: poll again
        }
      }
    }
  }

  int upstream_;
  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false}, paused_{false}, cut_{false};
  std::vector<std::pair<int, int>> pairs_;  // (client side, upstream side), thread-owned
  std::thread thread_;
};

}  // namespace kv::test
