#include "engine/loop/event_client.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <stdexcept>

#include "engine/loop/tcp_transport.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/tcp_connect.hpp"
#include "kvbench/usage_error.hpp"
#include "store/cluster.hpp"
#include "store/cluster_topology.hpp"
#include "store/error_text.hpp"
#include "store/memcached_codec.hpp"
#include "store/resp_codec.hpp"
#include "store/tls_context.hpp"
#include "store/tls_session.hpp"

namespace kv::drive {
namespace {

namespace st = store;

bool wait_fd(int fd, short events, int64_t deadline_us) {
  for (;;) {
    const int64_t left = deadline_us - steady_us();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>((left + 999) / 1000));
    if (n == 1) return true;
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) continue;  // re-check the deadline
    return false;
  }
}

// Connects a non-blocking TCP socket to `s` within timeout_us (kvbench/tcp_connect.hpp, one
// address after another); the fd and its address in *out, or -1 and *why.
int open_socket(const HostPort& s, int64_t timeout_us, bool nodelay, SocketAddress* out,
                std::string* why) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(s.host.c_str(), std::to_string(s.port).c_str(), &hints, &found);
      rc != 0) {
    *why = gai_strerror(rc);
    return -1;
  }
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(found, freeaddrinfo);
  const int64_t deadline = steady_us() + timeout_us;
  *why = "no address";
  for (addrinfo* a = found; a; a = a->ai_next) {
    Result<int> fd = tcp_connect_address(*a, deadline);
    if (!fd.ok()) {
      *why = fd.error().message;
      continue;
    }
    int flag = nodelay ? 1 : 0;
    setsockopt(fd.value(), IPPROTO_TCP, TCP_NODELAY, &flag, sizeof flag);
    // Stamps from the first segment on (the handshake's replies take the first, unstamped one).
    loop::enable_rx_timestamps(fd.value());
    std::memcpy(&out->addr, a->ai_addr, a->ai_addrlen);
    out->len = a->ai_addrlen;
    return fd.value();
  }
  return -1;
}

// The first address of `s` (len 0 when it has none).
SocketAddress resolve(const HostPort& s) {
  SocketAddress out;
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(s.host.c_str(), std::to_string(s.port).c_str(), &hints, &found) != 0) return out;
  if (found && found->ai_addrlen <= sizeof out.addr) {
    std::memcpy(&out.addr, found->ai_addr, found->ai_addrlen);
    out.len = found->ai_addrlen;
  }
  freeaddrinfo(found);
  return out;
}

// Waits for what a TLS call asked for; false for closed / error / a timeout.
bool wait_tls(int fd, st::TlsSession::Io io, int64_t deadline_us) {
  if (io == st::TlsSession::Io::want_read) return wait_fd(fd, POLLIN, deadline_us);
  if (io == st::TlsSession::Io::want_write) return wait_fd(fd, POLLOUT, deadline_us);
  return false;
}

// Sends `request` and reads until done(bytes just read) says the reply is whole, through `tls`
// when set. False on a lost connection, a timeout, or done() returning false via *failed.
bool exchange(int fd, st::TlsSession* tls, std::string_view request, int64_t timeout_us,
              const std::function<bool(std::string_view, bool*)>& done) {
  const int64_t deadline = steady_us() + timeout_us;
  size_t sent = 0;
  char buf[16384];
  if (tls) {
    while (sent < request.size()) {
      size_t n = 0;
      auto io = tls->write(request.data() + sent, request.size() - sent, &n);
      if (io == st::TlsSession::Io::done)
        sent += n;
      else if (!wait_tls(fd, io, deadline))
        return false;
    }
    for (;;) {
      size_t n = 0;
      auto io = tls->read(buf, sizeof buf, &n);
      if (io == st::TlsSession::Io::done) {
        bool failed = false;
        if (done(std::string_view(buf, n), &failed)) return true;
        if (failed) return false;
      } else if (!wait_tls(fd, io, deadline)) {
        return false;
      }
    }
  }
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_fd(fd, POLLOUT, deadline)) return false;
    } else {
      return false;
    }
  }
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      bool failed = false;
      if (done(std::string_view(buf, static_cast<size_t>(n)), &failed)) return true;
      if (failed) return false;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_fd(fd, POLLIN, deadline)) return false;
    } else {
      return false;
    }
  }
}

std::string where_of(const TargetSpec& spec, const HostPort& s) {
  return (spec.protocol == Protocol::redis ? "redis server " : "memcached server ") + s.host + ":" +
         std::to_string(s.port);
}

// Redis: runs the commands in `out` (n replies) and returns the first error reply's text
// ("WRONGPASS invalid username-password pair ..."), or "" when all succeeded; *lost when the
// connection failed. *error_at (when given): which reply (0-based) that error was.
std::string redis_commands(int fd, st::TlsSession* tls, const std::string& out, size_t n,
                           int64_t timeout_us, bool* lost, std::string* last_text,
                           size_t* error_at = nullptr) {
  st::RespDecoder dec;
  std::string error;
  size_t got = 0;
  *lost = !exchange(fd, tls, out, timeout_us, [&](std::string_view bytes, bool* failed) {
    if (!dec.feed(bytes)) {
      *failed = true;
      return false;
    }
    st::RespReply r;
    for (;;) {
      st::ReadStatus s = dec.next(&r);
      if (s == st::ReadStatus::need_more) return false;
      if (s == st::ReadStatus::protocol_error) {
        *failed = true;
        return false;
      }
      if (r.kind == st::RespKind::error && error.empty()) {
        error = std::string(r.text.empty() ? std::string_view("ERR") : r.text);
        if (error_at) *error_at = got;
      }
      if (last_text) *last_text = std::string(r.text);
      if (++got == n) {
        // More than was asked for: the connection is out of step (not a store to trust).
        *failed = dec.buffered() > 0;
        return !*failed;
      }
    }
  });
  return error;
}

}  // namespace

size_t append_handshake(const TargetSpec& spec, std::string& out) {
  if (spec.protocol != Protocol::redis) return 0;
  size_t n = 0;
  if (!spec.password.empty()) {
    st::resp::append_auth(out, spec.user, spec.password);
    ++n;
  }
  if (spec.db != 0) {
    st::resp::append_select(out, static_cast<uint32_t>(spec.db));
    ++n;
  }
  if (spec.read_from_replica) {  // a replica serves reads of its master's slots after READONLY
    st::resp::append_array_header(out, 1);
    st::resp::append_bulk(out, "READONLY");
    ++n;
  }
  return n;
}

std::vector<std::unique_ptr<EventClient>> connect_event_clients(const TargetSpec& spec, size_t n,
                                                                const ClientOptions& opts) {
  std::vector<std::unique_ptr<EventClient>> clients;
  std::shared_ptr<const st::TlsContext> tls;
  if (spec.tls.enabled) tls = std::make_shared<const st::TlsContext>(spec.tls);
  std::shared_ptr<const st::SlotMap> slots;
  if (spec.cluster) {  // one CLUSTER SLOTS for every client of the target
    auto map = std::make_shared<st::SlotMap>(spec.read_from_replica);
    map->assign(st::fetch_cluster_slots(spec.servers, spec, tls.get(), opts.timeout_us));
    if (map->covered_slots() != st::kClusterSlots)
      throw std::runtime_error(spec.display + ": the cluster serves " +
                               std::to_string(map->covered_slots()) + " of " +
                               std::to_string(st::kClusterSlots) + " slots");
    if (const int by_master = map->slots_read_by_masters(); spec.read_from_replica && by_master > 0)
      log_warn() << spec.display << ": " << by_master << " of " << st::kClusterSlots
                 << " slots have no replica CLUSTER SLOTS lists (it lists one once it has "
                    "replicated something): their gets go to the master";
    slots = std::move(map);
  }
  for (size_t i = 0; i < n; ++i) {
    auto c = std::make_unique<EventClient>(spec, opts, tls, slots);
    if (auto r = c->connect(); !r.ok()) throw std::runtime_error(r.error().message);
    clients.push_back(std::move(c));
  }
  return clients;
}

namespace {
TargetSpec with_servers(TargetSpec spec, const st::SlotMap* slots) {
  if (slots) spec.servers = slots->nodes();
  return spec;
}
}  // namespace

EventClient::EventClient(TargetSpec spec, ClientOptions opts,
                         std::shared_ptr<const st::TlsContext> tls,
                         std::shared_ptr<const st::SlotMap> slots)
    : spec_(with_servers(std::move(spec), slots.get())),
      opts_(opts),
      fds_(spec_.servers.size(), -1),
      tls_ctx_(std::move(tls)),
      tls_(spec_.servers.size()),
      addresses_(spec_.servers.size()),
      slots_(std::move(slots)) {
  if (spec_.cluster && !slots_)
    throw UsageError(spec_.display + ": a cluster client needs its slot map");
  if (spec_.tls.enabled && !tls_ctx_) tls_ctx_ = std::make_shared<const st::TlsContext>(spec_.tls);
  if (spec_.protocol == Protocol::memcached && spec_.servers.size() > 1)
    ring_ = std::make_unique<MemcachedRing>(spec_);
}

EventClient::~EventClient() {
  tls_.clear();  // the sessions before their sockets
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

int EventClient::take_fd(size_t i) {
  int fd = fds_[i];
  fds_[i] = -1;
  return fd;
}

void EventClient::give_fd(size_t i, int fd) {
  tls_[i].reset();
  if (fds_[i] >= 0) ::close(fds_[i]);
  fds_[i] = fd;
}

std::unique_ptr<st::TlsSession> EventClient::take_tls(size_t i) { return std::move(tls_[i]); }

std::vector<std::string> EventClient::pool_servers() const {
  std::vector<std::string> out;
  if (!is_pool()) return out;
  for (const HostPort& s : spec_.servers) out.push_back(host_port(s));
  return out;
}

size_t EventClient::server_for(std::string_view key) const {
  if (ring_) return ring_->server_for(key);
  if (slots_) return static_cast<size_t>(std::max(0, slots_->node_of_key(key)));
  return 0;
}

size_t EventClient::server_index(const HostPort& node) {
  for (size_t i = 0; i < spec_.servers.size(); ++i)
    if (spec_.servers[i].host == node.host && spec_.servers[i].port == node.port) return i;
  spec_.servers.push_back(node);
  fds_.push_back(-1);
  tls_.emplace_back();
  addresses_.push_back(resolve(node));
  return spec_.servers.size() - 1;
}

void EventClient::give_tls(size_t i, std::unique_ptr<st::TlsSession> s) { tls_[i] = std::move(s); }

Result<void> EventClient::connect() {
  for (size_t i = 0; i < spec_.servers.size(); ++i) {
    give_fd(i, -1);
    const HostPort& server = spec_.servers[i];
    const std::string where = where_of(spec_, server);
    std::string why;
    int fd = open_socket(server, opts_.timeout_us, spec_.tcp_nodelay, &addresses_[i], &why);
    if (fd < 0) return Error{"cannot connect to " + where + ": " + why};
    give_fd(i, fd);
    if (tls_ctx_) {
      auto s = std::make_unique<st::TlsSession>(*tls_ctx_, fd, server.host);
      if (!s->handshake_until(steady_us() + opts_.timeout_us))
        return Error{"cannot connect to " + where + ": " + s->error()};
      tls_[i] = std::move(s);
    }
    if (spec_.protocol == Protocol::redis) {
      std::string out;
      const size_t n = append_handshake(spec_, out);
      if (n == 0) continue;
      bool lost = false;
      size_t error_at = 0;
      std::string err =
          redis_commands(fd, tls_[i].get(), out, n, opts_.timeout_us, &lost, nullptr, &error_at);
      if (lost) return Error{where + ": the handshake (AUTH / SELECT) got no answer"};
      // The store's whole message, less anything that echoes the password.
      if (!err.empty()) {
        const bool auth = !spec_.password.empty() && error_at == 0;
        return Error{where + ": " +
                     (auth ? std::string("AUTH") : "SELECT " + std::to_string(spec_.db)) +
                     " failed: " + st::shown_error(err, spec_.password)};
      }
      continue;
    }
    // memcached: ask for the version, as libmemcached's connect does, to know it is there.
    std::string out;
    if (spec_.binary_protocol) {
      st::mc::append_binary_version(out, 0);
      st::mc::BinaryDecoder dec;
      bool ok =
          exchange(fd, tls_[i].get(), out, opts_.timeout_us, [&](std::string_view b, bool* failed) {
            dec.feed(b);
            st::mc::BinaryReply r;
            st::ReadStatus s = dec.next(&r);
            *failed = s == st::ReadStatus::protocol_error;
            return s == st::ReadStatus::reply;
          });
      if (!ok)
        return Error{"cannot connect to memcached " + spec_.display + ": no answer to a " +
                     "binary-protocol version request from " + where +
                     " (the server may not speak the binary protocol: try without "
                     "?protocol=binary)"};
    } else {
      st::mc::append_text_version(out);
      st::mc::TextDecoder dec;
      bool ok =
          exchange(fd, tls_[i].get(), out, opts_.timeout_us, [&](std::string_view b, bool* failed) {
            dec.feed(b);
            st::mc::TextReply r;
            st::ReadStatus s = dec.next(st::mc::TextOp::version, &r);
            *failed = s == st::ReadStatus::protocol_error;
            return s == st::ReadStatus::reply;
          });
      if (!ok)
        return Error{"cannot connect to memcached " + spec_.display + ": no answer from " + where};
    }
  }
  return {};
}

std::string EventClient::server_version() {
  const int64_t timeout = std::min<int64_t>(opts_.timeout_us, 1'000'000);
  if (spec_.protocol == Protocol::redis) {
    if (fds_[0] < 0) return "";
    std::string out;
    st::resp::append_info(out, "server");
    bool lost = false;
    std::string text;
    if (!redis_commands(fds_[0], tls_[0].get(), out, 1, timeout, &lost, &text).empty() || lost) {
      if (lost) give_fd(0, -1);  // out of step or gone: the loop opens a new connection
      return "";
    }
    auto pos = text.find("redis_version:");
    if (pos == std::string::npos) return "";
    auto end = text.find_first_of("\r\n", pos);
    return "redis " + text.substr(pos + 14, end - pos - 14);
  }
  // As the classic client: what the server says to a text "version" on a connection of its
  // own (any memcached-protocol server answers it), else its binary version reply.
  SocketAddress unused;
  std::string why;
  int fd = open_socket(spec_.servers.front(), timeout, true, &unused, &why);
  std::unique_ptr<st::TlsSession> tls;
  if (fd >= 0 && tls_ctx_) {
    tls = std::make_unique<st::TlsSession>(*tls_ctx_, fd, spec_.servers.front().host);
    if (!tls->handshake_until(steady_us() + timeout)) {
      tls.reset();
      ::close(fd);
      fd = -1;
    }
  }
  if (fd >= 0) {
    std::string reply;
    exchange(fd, tls.get(), "version\r\n", timeout, [&](std::string_view b, bool* failed) {
      reply.append(b);
      *failed = reply.size() > 4096;
      return reply.find('\n') != std::string::npos;
    });
    tls.reset();
    ::close(fd);
    reply.resize(std::min(reply.find_first_of("\r\n"), reply.size()));
    std::string shown;
    for (char c : reply) shown += (c >= ' ' && c < 0x7f) ? c : '?';
    if (!shown.empty()) return "memcached protocol: " + shown;
  }
  if (!spec_.binary_protocol || fds_[0] < 0) return "";
  std::string out;
  st::mc::append_binary_version(out, 0);
  st::mc::BinaryDecoder dec;
  std::string version;
  exchange(fds_[0], tls_[0].get(), out, timeout, [&](std::string_view b, bool* failed) {
    dec.feed(b);
    st::mc::BinaryReply r;
    st::ReadStatus s = dec.next(&r);
    *failed = s == st::ReadStatus::protocol_error;
    if (s == st::ReadStatus::reply) version = std::string(r.value);
    return s == st::ReadStatus::reply;
  });
  return version.empty() ? "" : "memcached protocol (binary), version " + version;
}

}  // namespace kv::drive
