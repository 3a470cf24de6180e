#include "store/redis_client.hpp"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "store/hiredis_ptr.hpp"
#include "store/reconnect_policy.hpp"

namespace kv::drive {
namespace {

using ContextPtr = RedisContextPtr;
using ReplyPtr = RedisReplyPtr;

timeval to_timeval(int64_t us) {
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

// Appends one RESP bulk string to `out` without allocating once `out` has grown.
void append_bulk(std::string& out, std::string_view s) {
  char num[24];
  auto end = std::to_chars(num, num + sizeof num, s.size()).ptr;
  out += '$';
  out.append(num, end);
  out += "\r\n";
  out.append(s);
  out += "\r\n";
}

class RedisClient final : public StoreClient {
 public:
  RedisClient(TargetSpec spec, ClientOptions opts) : spec_(std::move(spec)), opts_(opts) {
    cmd_.reserve(4096);
  }

  Result<void> connect() override {
    drop();
    const HostPort& s = spec_.servers.front();
    ContextPtr c(redisConnectWithTimeout(s.host.c_str(), s.port, to_timeval(opts_.timeout_us)));
    std::string where = "redis server " + s.host + ":" + std::to_string(s.port);
    if (!c) return Error{"cannot connect to " + where + ": out of memory"};
    if (c->err) return Error{"cannot connect to " + where + ": " + c->errstr};
    redisSetTimeout(c.get(), to_timeval(opts_.timeout_us));
    if (!spec_.tcp_nodelay) {
      int off = 0;
      setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &off, sizeof off);
    }
    ctx_ = std::move(c);
    sockets_.publish({ctx_->fd});  // AUTH and SELECT can stall too
    if (!spec_.password.empty()) {
      std::vector<std::string_view> args{"AUTH"};
      if (!spec_.user.empty()) args.push_back(spec_.user);
      args.push_back(spec_.password);
      auto r = command(args, true);
      if (!r.ok()) return Error{where + ": AUTH failed: " + r.error().message};
    }
    if (spec_.db != 0) {
      std::string db = std::to_string(spec_.db);
      std::string_view args[] = {"SELECT", db};
      auto r = command(args, false);
      if (!r.ok()) return Error{where + ": SELECT " + db + " failed: " + r.error().message};
    }
    return {};
  }

  OpStatus set(std::string_view key, std::string_view value, uint32_t ttl_s) override {
    if (!ready()) return interrupted() ? OpStatus::interrupted : OpStatus::error;
    format_set(key, value, ttl_s);
    redisReply* r = nullptr;
    OpStatus st = roundtrip(&r);
    if (st != OpStatus::ok) return st;
    ReplyPtr reply(r);
    return reply->type == REDIS_REPLY_STATUS ? OpStatus::ok : OpStatus::error;
  }

  bool supports_pipelining() const override { return true; }

  void send_set(std::string_view key, std::string_view value, uint32_t ttl_s) override {
    format_set(key, value, ttl_s);
    append();
  }
  void send_get(std::string_view key) override {
    format_get(key);
    append();
  }
  void flush() override {
    if (batch_failed_ || !ctx_) return;
    int done = 0;
    while (!done) {
      if (redisBufferWrite(ctx_.get(), &done) != REDIS_OK) {
        fail_batch();
        return;
      }
    }
  }
  OpStatus receive(std::string_view* value) override {
    if (pending_ == 0) return OpStatus::error;  // nothing was queued
    --pending_;
    if (!batch_failed_) {
      redisReply* r = nullptr;
      if (redisGetReply(ctx_.get(), reinterpret_cast<void**>(&r)) == REDIS_OK) {
        last_get_.reset(r);
        switch (r->type) {
          case REDIS_REPLY_STATUS:
            return OpStatus::ok;
          case REDIS_REPLY_NIL:
            return OpStatus::miss;
          case REDIS_REPLY_STRING:
            *value = std::string_view(r->str, r->len);
            return OpStatus::hit;
          default:
            return OpStatus::error;
        }
      }
      fail_batch();
    }
    if (batch_status_ == OpStatus::interrupted && !batch_unsent_) ++abandoned_;
    return batch_status_;  // every request of a failed batch shares its fate
  }

 private:
  void format_set(std::string_view key, std::string_view value, uint32_t ttl_s) {
    cmd_.clear();
    if (ttl_s == 0) {
      cmd_ += "*3\r\n";
      append_bulk(cmd_, "SET");
      append_bulk(cmd_, key);
      append_bulk(cmd_, value);
    } else {
      char num[16];
      auto end = std::to_chars(num, num + sizeof num, ttl_s).ptr;
      cmd_ += "*5\r\n";
      append_bulk(cmd_, "SET");
      append_bulk(cmd_, key);
      append_bulk(cmd_, value);
      append_bulk(cmd_, "EX");
      append_bulk(cmd_, std::string_view(num, static_cast<size_t>(end - num)));
    }
  }
  void format_get(std::string_view key) {
    cmd_.clear();
    cmd_ += "*2\r\n";
    append_bulk(cmd_, "GET");
    append_bulk(cmd_, key);
  }
  // Queues cmd_ on the connection (connecting first if needed); a failure fails the batch.
  void append() {
    if (pending_ == 0) {
      batch_failed_ = !ready();
      batch_status_ = interrupted() ? OpStatus::interrupted : OpStatus::error;
      batch_unsent_ = batch_failed_;  // nothing of it reaches the server
    }
    ++pending_;
    if (batch_failed_) return;
    if (redisAppendFormattedCommand(ctx_.get(), cmd_.data(), cmd_.size()) != REDIS_OK) fail_batch();
  }
  void fail_batch() {
    bool timed_out = ctx_ && ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    batch_status_ = interrupted() ? OpStatus::interrupted
                    : timed_out   ? OpStatus::timeout
                                  : OpStatus::error;
    batch_failed_ = true;
    drop();  // a context is never reused after an error
  }

 public:
  OpStatus get(std::string_view key, std::string_view* value) override {
    if (!ready()) return interrupted() ? OpStatus::interrupted : OpStatus::error;
    format_get(key);
    redisReply* r = nullptr;
    OpStatus st = roundtrip(&r);
    if (st != OpStatus::ok) return st;
    last_get_.reset(r);  // keeps the value's bytes alive until the next get
    if (r->type == REDIS_REPLY_NIL) return OpStatus::miss;
    if (r->type != REDIS_REPLY_STRING) return OpStatus::error;
    *value = std::string_view(r->str, r->len);
    return OpStatus::hit;
  }

  std::string server_version() override {
    if (!ready()) return "";
    std::string_view args[] = {"INFO", "server"};
    auto r = command(args, false);
    if (!r.ok()) return "";
    const std::string& text = r.value();
    auto pos = text.find("redis_version:");
    if (pos == std::string::npos) return "";
    auto end = text.find_first_of("\r\n", pos);
    return "redis " + text.substr(pos + 14, end - pos - 14);
  }

  std::vector<std::pair<std::string, std::string>> server_config() override {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string_view name :
         {"maxmemory", "maxmemory-policy", "save", "appendonly", "appendfsync", "io-threads"}) {
      if (!ready()) break;
      cmd_.clear();
      cmd_ += "*3\r\n";
      for (std::string_view a : {std::string_view("CONFIG"), std::string_view("GET"), name})
        append_bulk(cmd_, a);
      redisReply* r = nullptr;
      if (roundtrip(&r) != OpStatus::ok) break;
      ReplyPtr reply(r);
      if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
          reply->element[1]->type == REDIS_REPLY_STRING)
        out.emplace_back(std::string(name),
                         std::string(reply->element[1]->str, reply->element[1]->len));
    }
    return out;
  }

 private:
  // Connected, or reconnected after an earlier error (attempts spaced by the one reconnect
  // policy, store/reconnect_policy.hpp, so a dead server is not hammered). False while
  // disconnected, and once interrupted.
  bool ready() {
    if (interrupted()) return false;  // nothing new is sent after an interrupt
    if (ctx_) return true;
    if (!reconnect_.may_connect()) return false;
    if (connect().ok()) {
      reconnect_.connected();
      return true;
    }
    drop();
    reconnect_.connect_failed();
    return false;
  }

  OpStatus roundtrip(redisReply** r) {
    if (redisAppendFormattedCommand(ctx_.get(), cmd_.data(), cmd_.size()) != REDIS_OK ||
        redisGetReply(ctx_.get(), reinterpret_cast<void**>(r)) != REDIS_OK) {
      bool timed_out = ctx_->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
      drop();  // a context is never reused after an error
      return failed_as(timed_out ? OpStatus::timeout : OpStatus::error);
    }
    return OpStatus::ok;
  }

  // A setup command; its status or string reply, or the error.
  Result<std::string> command(std::span<const std::string_view> args, bool secret) {
    cmd_.clear();
    cmd_ += '*' + std::to_string(args.size()) + "\r\n";
    for (auto a : args) append_bulk(cmd_, a);
    redisReply* r = nullptr;
    if (roundtrip(&r) != OpStatus::ok) return Error{"connection lost"};
    ReplyPtr reply(r);
    if (reply->type == REDIS_REPLY_ERROR) {
      std::string msg(reply->str, reply->len);
      if (!secret) return Error{msg};
      return Error{msg.substr(0, msg.find(' ', 4))};  // "WRONGPASS ..." without echoing input
    }
    if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS)
      return std::string(reply->str, reply->len);
    return std::string();
  }

  // Closes the connection, withdrawing its socket from interrupt() first.
  void drop() {
    if (!ctx_) return;
    sockets_.withdraw();
    ctx_.reset();
  }

  TargetSpec spec_;
  ClientOptions opts_;
  ContextPtr ctx_;
  ReplyPtr last_get_;
  int pending_ = 0;                          // requests queued and not yet received
  bool batch_failed_ = false;                // the current batch lost its connection
  bool batch_unsent_ = false;                // ... before any of it was sent
  OpStatus batch_status_ = OpStatus::error;  // what the failed batch's requests report
  std::string cmd_;
  ReconnectPolicy reconnect_{opts_.reconnect_backoff_max_us};
};

}  // namespace

std::unique_ptr<StoreClient> make_redis_client(const TargetSpec& spec, const ClientOptions& opts) {
  return std::make_unique<RedisClient>(spec, opts);
}

}  // namespace kv::drive
