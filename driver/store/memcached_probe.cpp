#include "store/memcached_probe.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "kvbench/clock.hpp"
#include "kvbench/tcp_connect.hpp"

namespace kv::drive {
namespace {

// Sends `request` over a new text-protocol connection and returns the reply once `done` says
// it is whole (given all that arrived so far); empty if the server did not answer within
// timeout_us, could not be reached, or sent more than 1 MiB.
template <typename Done>
std::string text_request(const HostPort& server, std::string_view request, int64_t timeout_us,
                         Done done) {
  const int64_t deadline = steady_us() + timeout_us;
  auto connected = tcp_connect(server.host, server.port, deadline);
  if (!connected) return "";
  int fd = connected.value();
  std::unique_ptr<int, void (*)(int*)> closer(&fd, [](int* f) { ::close(*f); });
  auto wait = [&](short events) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    return ::poll(&p, 1, static_cast<int>((left + 999) / 1000)) == 1;
  };
  size_t sent = 0;
  while (sent < request.size()) {
    if (!wait(POLLOUT)) return "";
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return "";
    sent += static_cast<size_t>(n);
  }
  std::string reply;
  for (;;) {
    if (done(std::string_view(reply))) return reply;
    if (reply.size() > (1u << 20) || !wait(POLLIN)) return "";
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return "";
    reply.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> parse_memcached_settings(std::string_view reply) {
  static constexpr std::string_view kWanted[] = {"maxbytes",  "num_threads", "item_size_max",
                                                 "maxconns",  "evictions",   "growth_factor",
                                                 "chunk_size"};
  std::vector<std::pair<std::string, std::string>> out;
  std::string_view rest = reply;
  while (!rest.empty()) {
    const auto nl = rest.find("\r\n");
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 2);
    if (!line.starts_with("STAT ")) continue;
    line.remove_prefix(5);
    const auto sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, sp);
    for (std::string_view w : kWanted)
      if (w == name) out.emplace_back(std::string(name), std::string(line.substr(sp + 1)));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> read_memcached_settings(const TargetSpec& spec,
                                                                         int64_t timeout_us) {
  if (spec.tls.enabled) return {};  // a plain socket only (read_store_settings does TLS)
  return parse_memcached_settings(text_request(
      spec.servers.front(), "stats settings\r\n", timeout_us,
      [](std::string_view r) { return r.ends_with("END\r\n") || r.ends_with("ERROR\r\n"); }));
}

}  // namespace kv::drive
