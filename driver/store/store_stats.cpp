#include "store/store_stats.hpp"

#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <stdexcept>
#include <utility>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/result.hpp"
#include "kvbench/tcp_connect.hpp"
#include "store/cluster_topology.hpp"
#include "store/hiredis_ptr.hpp"
#include "store/resp_codec.hpp"
#include "store/sync_connection.hpp"
#include "store/tls_context.hpp"

namespace kv::drive {
namespace {

// ---- parsing ----

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n";
  auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

// The whole of `s` (trimmed) as a finite number; nullopt for "", "1.2M", "7.0.15", "nan", "ok".
std::optional<double> parse_number(std::string_view s) {
  s = trim(s);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Printable ASCII without spaces: what a counter name can be. Keeps garbage out of the results.
bool valid_name(std::string_view s) {
  if (s.empty() || s.size() > 200) return false;
  for (char c : s)
    if (c <= ' ' || c > '~') return false;
  return true;
}

template <typename Fn>
void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    auto nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    fn(trim(line));
  }
}

// Hex identifiers: all digits now and then, but never a quantity.
bool is_redis_identifier(std::string_view name) {
  constexpr std::array<std::string_view, 5> kIds = {"run_id", "master_replid", "master_replid2",
                                                    "redis_git_sha1", "redis_build_id"};
  for (auto id : kIds)
    if (name == id) return true;
  return false;
}

// "k=v,k=v,..." → name_k for each numeric v.
void parse_redis_list(std::string_view name, std::string_view list, std::vector<StatValue>& out) {
  while (!list.empty()) {
    auto comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    auto eq = item.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = trim(item.substr(0, eq));
    auto v = parse_number(item.substr(eq + 1));
    if (v && valid_name(key)) out.push_back({std::string(name) + "_" + std::string(key), *v});
  }
}

// memcached before 1.4 wrote rusage as "seconds:micros".
std::optional<double> parse_rusage(std::string_view s) {
  auto colon = s.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto sec = parse_number(s.substr(0, colon));
  auto us = parse_number(s.substr(colon + 1));
  if (!sec || !us) return std::nullopt;
  return *sec + *us / 1e6;
}

}  // namespace

std::vector<StatValue> parse_redis_info(std::string_view text) {
  std::vector<StatValue> out;
  for_each_line(text, [&](std::string_view line) {
    if (line.empty() || line.front() == '#') return;
    auto colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    if (!valid_name(name) || is_redis_identifier(name)) return;
    if (auto v = parse_number(value)) {
      out.push_back({std::string(name), *v});
    } else if (value.find('=') != std::string_view::npos) {
      parse_redis_list(name, value, out);
    }
  });
  return out;
}

std::vector<StatValue> parse_memcached_stats(std::string_view text) {
  std::vector<StatValue> out;
  for_each_line(text, [&](std::string_view line) {
    if (!line.starts_with("STAT ")) return;
    std::string_view rest = trim(line.substr(5));
    auto sp = rest.find_first_of(" \t");
    if (sp == std::string_view::npos) return;
    std::string_view name = rest.substr(0, sp);
    std::string_view value = rest.substr(sp + 1);
    if (!valid_name(name)) return;
    auto v = parse_number(value);
    if (!v && name.starts_with("rusage_")) v = parse_rusage(trim(value));
    if (v) out.push_back({std::string(name), *v});
  });
  return out;
}

namespace {

// ---- sources: one server's counters, on a connection kept between polls ----

using Values = std::vector<StatValue>;

std::string host_port(const HostPort& s) {
  bool v6 = s.host.find(':') != std::string::npos;
  return (v6 ? "[" + s.host + "]" : s.host) + ":" + std::to_string(s.port);
}

timeval to_timeval(int64_t us) {
  us = std::max<int64_t>(us, 1000);
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

class StatsSource {
 public:
  virtual ~StatsSource() = default;
  // This server's counters; the whole call takes at most about timeout_us. After an error the
  // connection is dropped and the next call connects anew.
  virtual Result<Values> poll(int64_t timeout_us) = 0;
};

using ContextPtr = RedisContextPtr;
using ReplyPtr = RedisReplyPtr;

// Redis: a blocking hiredis context whose socket timeout is set, before each command, to what
// is left of the poll's budget. "INFO everything" (Redis >= 2.8: all sections plus
// commandstats); if refused, "INFO all" + "INFO commandstats".
class RedisSource final : public StatsSource {
 public:
  // Polls `server` (default: the target's only server; a cluster node otherwise).
  explicit RedisSource(const TargetSpec& spec) : RedisSource(spec, spec.servers.front()) {}
  RedisSource(const TargetSpec& spec, HostPort server) : spec_(spec), server_(std::move(server)) {}

  Result<Values> poll(int64_t timeout_us) override {
    int64_t deadline = steady_us() + timeout_us;
    Result<std::string> text = ctx_ ? info(deadline) : connect_and_info(timeout_us, deadline);
    if (!text.ok()) {
      ctx_.reset();  // a context is never reused after an error
      return text.error();
    }
    return parse_redis_info(text.value());
  }

 private:
  Result<std::string> connect_and_info(int64_t timeout_us, int64_t deadline) {
    ContextPtr c(
        redisConnectWithTimeout(server_.host.c_str(), server_.port, to_timeval(timeout_us)));
    if (!c) return Error{"cannot connect: out of memory"};
    if (c->err) return Error{std::string("cannot connect: ") + c->errstr};
    ctx_ = std::move(c);
    if (!spec_.password.empty()) {
      std::vector<std::string> args{"AUTH"};
      if (!spec_.user.empty()) args.push_back(spec_.user);
      args.push_back(spec_.password);
      auto r = text_command(args, deadline);
      if (!r.ok()) {
        // An error reply ("WRONGPASS ..."): its code only, never anything that could echo input.
        const std::string& m = r.error().message;
        return Error{"AUTH failed: " + (ctx_->err ? m : m.substr(0, m.find(' ')))};
      }
    }
    if (spec_.db != 0) {
      auto r = text_command({"SELECT", std::to_string(spec_.db)}, deadline);
      if (!r.ok())
        return Error{"SELECT " + std::to_string(spec_.db) + " failed: " + r.error().message};
    }
    return info(deadline);
  }

  Result<std::string> info(int64_t deadline) {
    if (!fallback_) {
      auto r = text_command({"INFO", "everything"}, deadline);
      if (r.ok() || !ctx_ || ctx_->err) return r;
      fallback_ = true;  // an error reply: a server without "everything"
    }
    auto all = text_command({"INFO", "all"}, deadline);
    if (!all.ok()) return all;
    auto cmds = text_command({"INFO", "commandstats"}, deadline);
    if (!cmds.ok()) return cmds;
    return all.value() + "\r\n" + cmds.value();
  }

  // The string or status reply; an error reply or a connection error (ctx_->err set) as Error.
  Result<std::string> text_command(const std::vector<std::string>& args, int64_t deadline) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return Error{"timed out"};
    redisSetTimeout(ctx_.get(), to_timeval(left));
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.c_str());
      lens.push_back(a.size());
    }
    ReplyPtr r(static_cast<redisReply*>(
        redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data())));
    if (!r) return Error{connection_error()};
    if (r->type == REDIS_REPLY_ERROR) return Error{std::string(r->str, r->len)};
    if (r->type != REDIS_REPLY_STRING && r->type != REDIS_REPLY_STATUS)
      return Error{"unexpected reply type " + std::to_string(r->type)};
    return std::string(r->str, r->len);
  }

  std::string connection_error() const {
    // A socket timeout (SO_RCVTIMEO) surfaces as an I/O error "Resource temporarily unavailable".
    bool timed_out = errno == EAGAIN || errno == EWOULDBLOCK ||
                     std::strstr(ctx_->errstr, std::strerror(EAGAIN)) != nullptr;
    if (ctx_->err == REDIS_ERR_IO && timed_out) return "no reply within the timeout";
    return ctx_->errstr[0] ? std::string(ctx_->errstr) : std::string("connection lost");
  }

  const TargetSpec& spec_;
  const HostPort server_;
  ContextPtr ctx_;
  bool fallback_ = false;
};

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Waits until fd is ready for `events` or the deadline passes.
Result<void> wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return Error{"no reply within the timeout"};
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>((left + 999) / 1000));
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return Error{std::string("poll: ") + std::strerror(errno)};
  }
}

// memcached over a plain socket: "stats\r\n" gives every counter under the server's own name,
// whatever the server version, parsed by the same function the unit tests check. libmemcached's
// memcached_stat() maps replies onto a fixed struct (newer counters are lost), and its server
// state (retry timeouts, dead-server marking) would get between a failed poll and the next
// tick's fresh connection. One deadline bounds connect, send and receive together.
class MemcachedSource final : public StatsSource {
 public:
  explicit MemcachedSource(const HostPort& server) : server_(server) {}

  Result<Values> poll(int64_t timeout_us) override {
    int64_t deadline = steady_us() + timeout_us;
    Result<std::string> reply = request(deadline);
    if (!reply.ok()) {
      fd_.reset();
      return reply.error();
    }
    return parse_memcached_stats(reply.value());
  }

 private:
  Result<std::string> request(int64_t deadline) {
    if (!fd_) {
      auto c = connect(deadline);
      if (!c.ok()) return Error{"cannot connect: " + c.error().message};
    }
    constexpr std::string_view kReq = "stats\r\n";
    auto w = wait_fd(fd_.get(), POLLOUT, deadline);
    if (!w.ok()) return w.error();
    // The request fits in any socket buffer: one send, or an error.
    if (::send(fd_.get(), kReq.data(), kReq.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(kReq.size()))
      return Error{std::string("send: ") + std::strerror(errno)};
    return receive(deadline);
  }

  Result<std::string> receive(int64_t deadline) {
    constexpr size_t kMaxReply = 4u << 20;
    std::string reply;
    char buf[16384];
    for (;;) {
      auto w = wait_fd(fd_.get(), POLLIN, deadline);
      if (!w.ok()) return w.error();
      ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
      if (n == 0) return Error{"connection closed by the server"};
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return Error{std::string("recv: ") + std::strerror(errno)};
      }
      reply.append(buf, static_cast<size_t>(n));
      if (reply == "END\r\n" || reply.ends_with("\r\nEND\r\n")) return reply;
      if (reply.ends_with("\r\n") &&
          (reply.starts_with("ERROR") || reply.starts_with("SERVER_ERROR") ||
           reply.starts_with("CLIENT_ERROR")))
        return Error{"server replied " + std::string(trim(reply.substr(0, 200)))};
      if (reply.size() > kMaxReply) return Error{"stats reply larger than 4 MiB"};
    }
  }

  Result<void> connect(int64_t deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string port = std::to_string(server_.port);
    int rc = ::getaddrinfo(server_.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0) return Error{gai_strerror(rc)};
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, ::freeaddrinfo);
    std::string why = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
      auto r = connect_one(a, deadline);
      if (r.ok()) return {};
      why = r.error().message;
    }
    return Error{why};
  }

  Result<void> connect_one(const addrinfo* a, int64_t deadline) {
    auto fd = tcp_connect_address(*a, deadline);
    if (!fd) return fd.error();
    fd_ = Fd(fd.value());
    return {};
  }

  const HostPort& server_;
  Fd fd_;
};

// A TLS target's server, through a SyncConnection: Redis (AUTH / SELECT as the target says,
// then INFO everything) or memcached ("stats").
class TlsSource final : public StatsSource {
 public:
  TlsSource(const TargetSpec& spec, HostPort server, std::shared_ptr<const store::TlsContext> tls)
      : spec_(spec), server_(std::move(server)), tls_(std::move(tls)) {}

  Result<Values> poll(int64_t timeout_us) override {
    try {
      if (!conn_) connect(timeout_us);
      if (spec_.protocol == Protocol::memcached) {
        std::string r = conn_->request(
            "stats\r\n", [](std::string_view g) { return g.ends_with("END\r\n"); }, timeout_us);
        return parse_memcached_stats(r);
      }
      std::string info;
      store::resp::append_array_header(info, 2);
      store::resp::append_bulk(info, "INFO");
      store::resp::append_bulk(info, "everything");
      std::string r = conn_->request_resp(info, timeout_us);
      if (r.empty() || r[0] != '$') throw std::runtime_error("INFO: " + r.substr(0, r.find('\r')));
      return parse_redis_info(r);
    } catch (const std::exception& e) {
      conn_.reset();  // a connection is never reused after an error
      return Error{e.what()};
    }
  }

 private:
  void connect(int64_t timeout_us) {
    auto c = std::make_unique<store::SyncConnection>(server_, tls_.get(), timeout_us);
    if (spec_.protocol == Protocol::redis && !spec_.password.empty()) {
      std::string auth;
      store::resp::append_auth(auth, spec_.user, spec_.password);
      std::string r = c->request_resp(auth, timeout_us);
      // The error's code only (WRONGPASS): never anything that could echo input.
      if (r.empty() || r[0] != '+')
        throw std::runtime_error("AUTH failed: " + r.substr(1, r.find_first_of(" \r") - 1));
    }
    if (spec_.protocol == Protocol::redis && spec_.db != 0) {
      std::string sel;
      store::resp::append_select(sel, static_cast<uint32_t>(spec_.db));
      std::string r = c->request_resp(sel, timeout_us);
      if (r.empty() || r[0] != '+')
        throw std::runtime_error("SELECT " + std::to_string(spec_.db) +
                                 " failed: " + r.substr(1, r.find('\r') - 1));
    }
    conn_ = std::move(c);
  }

  const TargetSpec& spec_;
  const HostPort server_;
  std::shared_ptr<const store::TlsContext> tls_;
  std::unique_ptr<store::SyncConnection> conn_;
};

// One server of the target, with what the poller knows about it.
struct Server {
  std::unique_ptr<StatsSource> source;
  std::string label;   // "redis 127.0.0.1:6379", for log lines
  std::string prefix;  // "host:port/" in a pool of several, else empty
  bool down = false;   // the last poll failed (and that was logged)
};

// A cluster's masters, from CLUSTER SLOTS of the first seed that answers; the seeds when none
// does (their polls then fail and say why, once per outage).
std::vector<HostPort> cluster_nodes(const TargetSpec& t, const store::TlsContext* tls,
                                    int64_t timeout_us) {
  try {
    return store::cluster_masters(store::fetch_cluster_slots(t.servers, t, tls, timeout_us));
  } catch (const std::exception& e) {
    log_warn() << "store stats: " << t.display << ": " << e.what() << " (polling the seeds)";
    return t.servers;
  }
}

std::vector<Server> make_servers(const TargetSpec& t, int64_t timeout_us) {
  std::vector<Server> out;
  std::shared_ptr<const store::TlsContext> tls;
  if (t.tls.enabled) tls = std::make_shared<const store::TlsContext>(t.tls);
  if (t.cluster) {
    for (const auto& node : cluster_nodes(t, tls.get(), timeout_us)) {
      std::unique_ptr<StatsSource> src;
      if (tls)
        src = std::make_unique<TlsSource>(t, node, tls);
      else
        src = std::make_unique<RedisSource>(t, node);
      out.push_back(
          {std::move(src), "redis cluster node " + host_port(node), host_port(node) + "/", false});
    }
    return out;
  }
  if (tls) {
    for (const auto& s : t.servers) {
      std::string prefix = t.servers.size() > 1 ? host_port(s) + "/" : "";
      out.push_back({std::make_unique<TlsSource>(t, s, tls),
                     std::string(protocol_name(t.protocol)) + " " + host_port(s) + " (TLS)", prefix,
                     false});
    }
    return out;
  }
  if (t.protocol == Protocol::redis) {
    out.push_back(
        {std::make_unique<RedisSource>(t), "redis " + host_port(t.servers.front()), "", false});
    return out;
  }
  for (const auto& s : t.servers) {
    std::string prefix = t.servers.size() > 1 ? host_port(s) + "/" : "";
    out.push_back(
        {std::make_unique<MemcachedSource>(s), "memcached " + host_port(s), prefix, false});
  }
  return out;
}

Result<Values> poll_guarded(StatsSource& src, int64_t timeout_us) {
  try {
    return src.poll(timeout_us);
  } catch (const std::exception& e) {
    return Error{e.what()};
  } catch (...) {
    return Error{"unknown exception"};
  }
}

// Polls every server; a sample if at least one answered. Logs each outage's start and end.
std::optional<StoreStatsSample> poll_all(std::vector<Server>& servers, int64_t interval_us,
                                         int64_t timeout_us) {
  std::optional<StoreStatsSample> sample;
  for (auto& s : servers) {
    Result<Values> r = poll_guarded(*s.source, timeout_us);
    if (!r.ok()) {
      if (!s.down)
        log_warn() << "store stats: cannot poll " << s.label << ": " << r.error().message
                   << " (retrying every " << interval_us / 1000 << " ms; logged once per outage)";
      s.down = true;
      continue;
    }
    if (s.down) log_info() << "store stats: " << s.label << " answers again";
    s.down = false;
    if (!sample) sample.emplace();
    sample->ts_us = now_ts_us();
    for (auto& v : r.value())
      sample->values.push_back({s.prefix.empty() ? std::move(v.name) : s.prefix + v.name, v.value});
  }
  return sample;
}

}  // namespace

StoreStatsPoller::StoreStatsPoller(TargetSpec target, int64_t interval_us, int64_t timeout_us)
    : target_(std::move(target)), interval_us_(interval_us), timeout_us_(timeout_us) {
  if (target_.servers.empty())
    throw std::invalid_argument("store stats: target " + target_.display + " has no server");
  if (interval_us_ <= 0 || timeout_us_ <= 0)
    throw std::invalid_argument("store stats: interval and timeout must be positive");
}

StoreStatsPoller::~StoreStatsPoller() { stop(); }

void StoreStatsPoller::start() {
  if (thread_.joinable()) return;
  {
    std::lock_guard lock(mu_);
    stopping_ = false;
  }
  thread_ = std::thread(&StoreStatsPoller::run, this);
}

void StoreStatsPoller::stop(bool last_poll) {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    last_poll_ = last_poll;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<StoreStatsSample> StoreStatsPoller::drain() {
  std::lock_guard lock(mu_);
  std::vector<StoreStatsSample> out(std::make_move_iterator(queue_.begin()),
                                    std::make_move_iterator(queue_.end()));
  queue_.clear();
  return out;
}

std::optional<double> StoreStatsPoller::latest(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = latest_.find(name);
  if (it == latest_.end()) return std::nullopt;
  return it->second;
}

void StoreStatsPoller::publish(StoreStatsSample sample) {
  bool warn = false;
  {
    std::lock_guard lock(mu_);
    for (const auto& v : sample.values) latest_[v.name] = v.value;
    queue_.push_back(std::move(sample));
    if (queue_.size() > kMaxQueued) {
      queue_.pop_front();
      warn = !std::exchange(dropped_warned_, true);
    }
  }
  if (warn)
    log_warn() << "store stats: " << target_.display << ": more than " << kMaxQueued
               << " samples not drained; dropping the oldest";
}

void StoreStatsPoller::run() {
  using Clock = std::chrono::steady_clock;
  const auto interval = std::chrono::microseconds(interval_us_);
  try {
    std::vector<Server> servers = make_servers(target_, timeout_us_);
    auto next = Clock::now();
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      if (auto sample = poll_all(servers, interval_us_, timeout_us_)) publish(std::move(*sample));
      lock.lock();
      // Absolute deadlines; ticks missed by a slow poll are skipped rather than run back to back.
      next += interval;
      auto now = Clock::now();
      if (next <= now) next += ((now - next) / interval + 1) * interval;
      wake_.wait_until(lock, next, [this] { return stopping_; });
    }
    // One last poll, so the samples cover the end of what was measured (a short phase may end
    // between two ticks).
    bool last = last_poll_;
    lock.unlock();
    if (!last) return;
    if (auto sample = poll_all(servers, interval_us_, timeout_us_)) publish(std::move(*sample));
  } catch (const std::exception& e) {
    log_error() << "store stats: " << target_.display << ": poller stopped: " << e.what();
  } catch (...) {
    log_error() << "store stats: " << target_.display << ": poller stopped";
  }
}

}  // namespace kv::drive
