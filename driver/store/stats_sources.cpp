// The connections the store-stats poller asks its servers' counters on: Redis (hiredis),
// either over TLS (SyncConnection); memcached's plain socket is stats_memcached.cpp's.
#include "store/stats_sources.hpp"

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
#include "kvbench/text_fields.hpp"
#include "store/cluster_topology.hpp"
#include "store/error_text.hpp"
#include "store/hiredis_ptr.hpp"
#include "store/memcached_probe.hpp"
#include "store/redis_latency.hpp"
#include "store/resp_codec.hpp"
#include "store/stats_parsers.hpp"
#include "store/sync_connection.hpp"
#include "store/tls_context.hpp"

namespace kv::drive {
namespace {

timeval to_timeval(int64_t us) {
  us = std::max<int64_t>(us, 1000);
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

using ContextPtr = RedisContextPtr;
using ReplyPtr = RedisReplyPtr;

// Redis's latency monitor: the threshold (the reply to CONFIG GET latency-monitor-threshold;
// 0 = off) and the reply to LATENCY LATEST, appended to `out` (redis_latency_values). A
// server that refused either (an error reply: a renamed command, an ACL) only lacks those
// names.
void add_latency_values(const redisReply* cfg, const redisReply* latest, Values& out) {
  std::optional<double> threshold;
  if (cfg->type == REDIS_REPLY_ARRAY && cfg->elements == 2 &&
      cfg->element[1]->type == REDIS_REPLY_STRING) {
    threshold = parse_stat_number({cfg->element[1]->str, cfg->element[1]->len});
  }
  std::vector<RedisLatencyEvent> events;
  if (latest->type == REDIS_REPLY_ARRAY) {
    for (size_t i = 0; i < latest->elements; ++i) {
      const redisReply* e = latest->element[i];
      if (e->type != REDIS_REPLY_ARRAY || e->elements < 4) continue;
      auto num = [](const redisReply* r) -> std::optional<double> {
        if (r->type == REDIS_REPLY_INTEGER) return static_cast<double>(r->integer);
        if (r->type == REDIS_REPLY_STRING) return parse_stat_number({r->str, r->len});
        return std::nullopt;
      };
      auto ts = num(e->element[1]), last = num(e->element[2]), max = num(e->element[3]);
      if (e->element[0]->type != REDIS_REPLY_STRING || !ts || !last || !max) continue;
      events.push_back({std::string(e->element[0]->str, e->element[0]->len), *ts, *last, *max});
    }
  }
  for (StatValue& v : redis_latency_values(threshold, events)) out.push_back(std::move(v));
}

// One whole RESP reply (as SyncConnection::request_resp returns it) as hiredis's reply tree,
// through hiredis's own reader; throws std::runtime_error on bytes that are not one reply.
ReplyPtr parse_reply(const std::string& raw) {
  RedisReaderPtr reader(redisReaderCreate());
  if (!reader) throw std::runtime_error("out of memory");
  void* reply = nullptr;
  if (redisReaderFeed(reader.get(), raw.data(), raw.size()) != REDIS_OK ||
      redisReaderGetReply(reader.get(), &reply) != REDIS_OK || reply == nullptr)
    throw std::runtime_error("not a RESP reply: " + raw.substr(0, raw.find('\r')));
  return ReplyPtr(static_cast<redisReply*>(reply));
}

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
    Values out = parse_redis_info(text.value());
    if (!add_latency(out, deadline) || !add_latency_histogram(out, deadline)) {
      Error e{connection_error()};  // before the reset: it reads ctx_
      ctx_.reset();
      return e;
    }
    return out;
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
        // An error reply ("WRONGPASS ..."): the store's whole message, less anything that
        // echoes the password.
        return Error{"AUTH failed: " + store::shown_error(r.error().message, spec_.password)};
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

  // Redis's latency monitor (latency_values). False on a connection error.
  bool add_latency(Values& out, int64_t deadline) {
    ReplyPtr cfg = command({"CONFIG", "GET", "latency-monitor-threshold"}, deadline);
    if (!cfg) return false;
    ReplyPtr latest = command({"LATENCY", "LATEST"}, deadline);
    if (!latest) return false;
    add_latency_values(cfg.get(), latest.get(), out);
    return true;
  }

  // Any reply (an error reply too); null on a connection error (ctx_->err set).
  // Redis 7's per-command latency histogram beside the counters; an error reply (before
  // Redis 7) and it is never asked again. False on a connection error.
  bool add_latency_histogram(Values& out, int64_t deadline) {
    if (!histogram_) return true;
    ReplyPtr h = command({"LATENCY", "HISTOGRAM"}, deadline);
    if (!h) return false;
    if (h->type == REDIS_REPLY_ERROR) {
      histogram_ = false;
      return true;
    }
    for (auto& v : parse_latency_histogram(h.get())) out.push_back(std::move(v));
    return true;
  }

  ReplyPtr command(const std::vector<std::string>& args, int64_t deadline) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return nullptr;
    redisSetTimeout(ctx_.get(), to_timeval(left));
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const auto& a : args) {
      argv.push_back(a.c_str());
      lens.push_back(a.size());
    }
    return ReplyPtr(static_cast<redisReply*>(
        redisCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(), lens.data())));
  }

  // The string or status reply; an error reply or a connection error (ctx_->err set) as Error.
  Result<std::string> text_command(const std::vector<std::string>& args, int64_t deadline) {
    if (deadline - steady_us() <= 0) return Error{"timed out"};
    ReplyPtr r = command(args, deadline);
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
  bool histogram_ = true;
};

// A connection to `server` of target `spec` through a SyncConnection (over TLS when `tls` is
// set), with Redis's AUTH / SELECT done as the target says. Throws std::runtime_error (one
// line; an AUTH error names only its code, never anything that could echo the password).
std::unique_ptr<store::SyncConnection> open_sync(const TargetSpec& spec, const HostPort& server,
                                                 const store::TlsContext* tls, int64_t timeout_us) {
  auto c = std::make_unique<store::SyncConnection>(server, tls, timeout_us);
  if (spec.protocol == Protocol::redis && !spec.password.empty()) {
    std::string auth;
    store::resp::append_auth(auth, spec.user, spec.password);
    std::string r = c->request_resp(auth, timeout_us);
    if (r.empty() || r[0] != '+')
      throw std::runtime_error(
          "AUTH failed: " +
          (r.empty() ? std::string("no answer") : store::shown_error(r.substr(1), spec.password)));
  }
  if (spec.protocol == Protocol::redis && spec.db != 0) {
    std::string sel;
    store::resp::append_select(sel, static_cast<uint32_t>(spec.db));
    std::string r = c->request_resp(sel, timeout_us);
    if (r.empty() || r[0] != '+')
      throw std::runtime_error("SELECT " + std::to_string(spec.db) +
                               " failed: " + r.substr(1, r.find('\r') - 1));
  }
  return c;
}

std::string resp_command(std::initializer_list<std::string_view> args) {
  std::string out;
  store::resp::append_array_header(out, args.size());
  for (auto a : args) store::resp::append_bulk(out, a);
  return out;
}

// One command within what is left of `deadline`; its reply (an error reply too).
ReplyPtr ask_sync(store::SyncConnection& conn, std::initializer_list<std::string_view> args,
                  int64_t deadline) {
  const int64_t left = deadline - steady_us();
  if (left <= 0) throw std::runtime_error("no reply within the timeout");
  return parse_reply(conn.request_resp(resp_command(args), left));
}

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
      const int64_t deadline = steady_us() + timeout_us;
      std::string r = conn_->request_resp(resp_command({"INFO", "everything"}), timeout_us);
      if (r.empty() || r[0] != '$') throw std::runtime_error("INFO: " + r.substr(0, r.find('\r')));
      Values out = parse_redis_info(r);
      // The latency monitor and Redis 7's per-command histogram, as over plain TCP. A failure
      // here (the poll's time used up by INFO) keeps INFO's values; the connection, left with
      // a reply unread, is made anew next time.
      try {
        ReplyPtr cfg = ask({"CONFIG", "GET", "latency-monitor-threshold"}, deadline);
        ReplyPtr latest = ask({"LATENCY", "LATEST"}, deadline);
        add_latency_values(cfg.get(), latest.get(), out);
        if (histogram_) {
          ReplyPtr h = ask({"LATENCY", "HISTOGRAM"}, deadline);
          if (h->type == REDIS_REPLY_ERROR)
            histogram_ = false;  // before Redis 7: never asked again
          else
            for (auto& v : parse_latency_histogram(h.get())) out.push_back(std::move(v));
        }
      } catch (const std::exception& e) {
        log_debug() << "store stats over TLS: latency not read (" << e.what() << ")";
        conn_.reset();
      }
      return out;
    } catch (const std::exception& e) {
      conn_.reset();  // a connection is never reused after an error
      return Error{e.what()};
    }
  }

 private:
  void connect(int64_t timeout_us) { conn_ = open_sync(spec_, server_, tls_.get(), timeout_us); }

  ReplyPtr ask(std::initializer_list<std::string_view> args, int64_t deadline) {
    return ask_sync(*conn_, args, deadline);
  }

  const TargetSpec& spec_;
  const HostPort server_;
  std::shared_ptr<const store::TlsContext> tls_;
  std::unique_ptr<store::SyncConnection> conn_;
  bool histogram_ = true;
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

}  // namespace

std::vector<std::pair<std::string, std::string>> read_store_settings(const TargetSpec& t,
                                                                     int64_t timeout_us) {
  if (t.protocol == Protocol::memcached && !t.tls.enabled)
    return read_memcached_settings(t, timeout_us);
  std::shared_ptr<const store::TlsContext> tls;
  if (t.tls.enabled) tls = std::make_shared<const store::TlsContext>(t.tls);
  const int64_t deadline = steady_us() + timeout_us;
  auto conn = open_sync(t, t.servers.front(), tls.get(), timeout_us);
  if (t.protocol == Protocol::memcached)
    return parse_memcached_settings(conn->request(
        "stats settings\r\n",
        [](std::string_view r) { return r.ends_with("END\r\n") || r.ends_with("ERROR\r\n"); },
        timeout_us));
  std::vector<std::pair<std::string, std::string>> out;
  for (std::string_view name :
       {"maxmemory", "maxmemory-policy", "save", "appendonly", "appendfsync", "io-threads"}) {
    ReplyPtr r = ask_sync(*conn, {"CONFIG", "GET", name}, deadline);
    if (r->type == REDIS_REPLY_ERROR) break;  // CONFIG refused or renamed: nothing more to ask
    if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
        r->element[1]->type == REDIS_REPLY_STRING)
      out.emplace_back(std::string(name), std::string(r->element[1]->str, r->element[1]->len));
  }
  return out;
}

std::vector<StatsServer> make_stats_servers(const TargetSpec& t, int64_t timeout_us) {
  std::vector<StatsServer> out;
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
    out.push_back({memcached_stats_source(s), "memcached " + host_port(s), prefix, false});
  }
  return out;
}

}  // namespace kv::drive
