#include "server.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <deque>
#include <map>
#include <set>
#include <stdexcept>

#include "auth_throttle.hpp"
#include "intervals.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/version.hpp"
#include "listener.hpp"

namespace kv::mon {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Bytes = std::shared_ptr<const std::string>;
using proto::Message;

Bytes encoded(const Message& m) { return std::make_shared<const std::string>(proto::encode(m)); }

constexpr int kSocketSendBufferBytes = 128 * 1024;
constexpr size_t kBackfillChunkBytes = size_t{64} * 1024;  // history is pulled in pieces this large
constexpr auto kCloseGrace = std::chrono::seconds(5);      // to flush an error reply

// Failed tokens are rate-limited per address (auth_throttle.hpp); "too many clients" refusals
// are summarised, one line per kBusyLogPeriodUs.
constexpr int64_t kBusyLogPeriodUs = 10'000'000;
constexpr int64_t kHelloTimeoutUs = 5'000'000;  // from connecting to a complete hello line

class Client;

}  // namespace

struct MonitorServer::Impl : std::enable_shared_from_this<MonitorServer::Impl> {
  Impl(asio::io_context& io_, ServerConfig c, ServerIdentity id, EventSink sink)
      : io(io_),
        config(std::move(c)),
        identity(std::move(id)),
        on_event(std::move(sink)),
        acceptor(io_),
        retry(io_),
        ring(config.history) {}
  void listen();
  void accept();
  void remove(Client* c) { clients.erase(c); }
  // Whether `address` is shut out now (a refusal is counted for the summary); the microseconds
  // left in *wait_us.
  // Logs the counts of addresses whose period has passed; forgets quiet ones.
  void log_auth_summaries(bool all);
  std::vector<std::shared_ptr<Client>> snapshot() const {
    std::vector<std::shared_ptr<Client>> out;
    for (const auto& [p, c] : clients) out.push_back(c);
    return out;
  }

  asio::io_context& io;
  ServerConfig config;
  ServerIdentity identity;
  EventSink on_event;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  HistoryRing ring;
  std::map<Client*, std::shared_ptr<Client>> clients;
  AuthThrottle auth{"client"};
  int64_t busy_refused = 0, busy_last_log_us = 0;  // "too many clients", summarised likewise
  bool stopped = false;
};

namespace {

// One connection: reads requests, answers them, streams ticks. Self-owning through the
// shared_ptr each pending handler holds; the server's map holds it while it is open.
class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(tcp::socket socket, std::shared_ptr<MonitorServer::Impl> server)
      : socket_(std::move(socket)), idle_(server->io), server_(std::move(server)) {
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    address_ = ec ? "?" : ep.address().to_string();
    peer_ = ec ? "?" : address_ + ":" + std::to_string(ep.port());
    socket_.set_option(tcp::no_delay(true), ec);  // time replies must not wait for Nagle
    // A fixed kernel buffer, so a client that stops reading shows in our queue within seconds
    // rather than after megabytes of autotuned buffer (plenty for a stream of ~100 KB/s).
    socket_.set_option(asio::socket_base::send_buffer_size(kSocketSendBufferBytes), ec);
  }
  const std::string& peer() const { return peer_; }

  void start() {
    log_debug() << "client " << peer_ << " connected";
    // Until its hello, a client holds one of --max-clients' places for a few seconds at most: a
    // silent connection must not keep kvdrive out for the whole idle timeout.
    arm_idle(std::min(server_->config.idle_timeout_us, kHelloTimeoutUs));
    do_read();
  }
  // Rejects at once: too many clients.
  void reject_busy() {
    fail(proto::kErrBusy,
         "too many clients (max " + std::to_string(server_->config.max_clients) + ")",
         true);  // logged, summarised, by the acceptor
  }
  void offer(const TickEntry& entry);
  void close();

 private:
  void do_read();
  void on_read(const boost::system::error_code& ec, size_t n);
  void handle(const std::string& line);
  void on_hello(const Message& m);
  void on_time(const Message& m);
  void on_targets();
  void on_stream(const Message& m, bool history_only);
  void fail(std::string_view code, const std::string& text, bool quiet = false);
  void arm_idle(int64_t timeout_us);
  int64_t slot(const TickEntry& e) const;
  bool due(const TickEntry& e) const;
  void enqueue_tick(const TickEntry& e);
  void pump();
  void push(Bytes bytes);
  void do_write();
  void on_write(const boost::system::error_code& ec);
  void drop_slow(const std::string& why);

  enum class Mode { idle, history, live };
  tcp::socket socket_;
  asio::steady_timer idle_;
  std::shared_ptr<MonitorServer::Impl> server_;
  std::string peer_;
  std::string address_;  // without the port: what failed authentication is counted by
  proto::LineFramer framer_{proto::kMaxRequestBytes};
  std::array<char, 4096> rbuf_{};
  std::deque<Bytes> queue_;
  size_t queued_bytes_ = 0;
  bool writing_ = false;
  std::chrono::steady_clock::time_point write_started_;
  bool closed_ = false;
  bool closing_ = false;  // an error reply is queued; close once it is sent
  bool hello_ = false;
  Mode mode_ = Mode::idle;
  bool backfilling_ = false;
  int64_t interval_us_ = 0;
  int64_t cursor_ts_us_ = 0;               // the latest tick considered for this client
  std::optional<int64_t> last_sent_slot_;  // of interval_us_ since the session started
  std::set<ProcessKey> announced_;
};

void Client::do_read() {
  socket_.async_read_some(asio::buffer(rbuf_),
                          [self = shared_from_this()](const boost::system::error_code& ec,
                                                      size_t n) { self->on_read(ec, n); });
}

void Client::on_read(const boost::system::error_code& ec, size_t n) {
  if (closed_ || closing_) return;
  if (ec) {
    log_debug() << "client " << peer_ << " disconnected: " << ec.message();
    return close();
  }
  framer_.feed(std::string_view(rbuf_.data(), n));
  std::string line;
  while (!closed_ && !closing_) {
    auto st = framer_.next(&line);
    if (st == proto::LineFramer::Status::need_more) break;
    if (st == proto::LineFramer::Status::too_long) {
      return fail(proto::kErrTooLong,
                  "request longer than " + std::to_string(proto::kMaxRequestBytes) + " bytes");
    }
    handle(line);
  }
  if (!closed_ && !closing_) do_read();
}

void Client::handle(const std::string& line) {
  auto parsed = proto::parse_message(line);
  if (!parsed) return fail(proto::kErrBadRequest, parsed.error().message);
  const Message& m = parsed.value();
  if (mode_ != Mode::live) arm_idle(server_->config.idle_timeout_us);
  if (!hello_) {
    if (m.verb != "hello") return fail(proto::kErrAuth, "send hello first");
    return on_hello(m);
  }
  if (m.verb == "time") return on_time(m);
  if (m.verb == "targets") return on_targets();
  if (m.verb == "subscribe") return on_stream(m, false);
  if (m.verb == "history") return on_stream(m, true);
  if (m.verb == "hello") return fail(proto::kErrBadRequest, "hello sent twice");
  fail(proto::kErrUnknown, "unknown verb '" + m.verb + "'");
}

void Client::on_hello(const Message& m) {
  auto v = m.get_int("v");
  if (!v || *v < 1) {
    return fail(proto::kErrVersion, "this kvmon speaks protocol version " +
                                        std::to_string(proto::kVersion) + "; send hello v=N");
  }
  const std::string& token = server_->config.token;
  if (!token.empty()) {
    int64_t wait_us = 0;
    if (server_->auth.blocked(address_, &wait_us)) {  // not even compared: no guess is made
      return fail(proto::kErrAuth,
                  "too many failed attempts from " + address_ + "; retry in " +
                      std::to_string((wait_us + 999'999) / 1'000'000) + " s",
                  true);
    }
    const std::string* given = m.find("token");
    if (!given || !proto::constant_time_equal(*given, token)) {
      server_->auth.failed(address_, peer_);
      return fail(proto::kErrAuth, "wrong or missing token", true);
    }
    server_->auth.succeeded(address_);
  }
  hello_ = true;
  const ServerIdentity& id = server_->identity;
  Message r("hello");
  r.add("v", proto::kVersion).add("kvmon", version()).add("host", id.host).add("pid", id.pid);
  r.add("started_ts_us", id.started_ts_us).add("interval_us", id.interval_us);
  r.add("host_interval_us", id.host_interval_us).add("command_line", id.command_line);
  r.add("oldest_ts_us", server_->ring.oldest_ts_us())
      .add("newest_ts_us", server_->ring.newest_ts_us());
  push(encoded(r));
}

void Client::on_time(const Message& m) {
  Message r("time");
  if (const std::string* id = m.find("id")) r.add("id", *id);
  r.add("now_ts_us", now_ts_us());
  push(encoded(r));
}

void Client::on_targets() {
  for (const std::string& s : server_->identity.selectors) {
    push(encoded(Message("target").add("selector", s)));
  }
  for (const Bytes& line : server_->ring.instance_lines()) push(line);
  push(encoded(Message("targets_end")));
}

void Client::on_stream(const Message& m, bool history_only) {
  if (mode_ != Mode::idle) return fail(proto::kErrBadRequest, "already streaming");
  const int64_t base = server_->identity.interval_us;
  auto interval = m.has("interval_us") ? m.get_int("interval_us") : base;
  if (!interval || *interval > kMaxIntervalUs) {
    return fail(proto::kErrBadRequest, "interval_us must be an integer up to 1 h");
  }
  auto since = m.has("since_ts_us") ? m.get_int("since_ts_us")
                                    : std::optional<int64_t>(server_->ring.newest_ts_us());
  if (!since || (history_only && !m.has("since_ts_us"))) {
    return fail(proto::kErrBadRequest, "since_ts_us must be an integer (required by history)");
  }
  interval_us_ = std::max(*interval, base);  // a tick is the finest grain there is
  // Nothing queued or being written: the first chunk of history is queued now, behind the reply
  // that names its oldest tick. Pulled only once the reply was written, a tick added meanwhile
  // could evict that oldest tick, and the history would begin one tick later than it said (seen
  // under TSan in CI: KvmonServer.HistoryOptionBoundsTheBackfill).
  const bool idle = !writing_ && queue_.empty();
  Message r(history_only ? "history_begin" : "subscribed");
  r.add("interval_us", interval_us_).add("since_ts_us", *since);
  r.add("oldest_ts_us", server_->ring.oldest_ts_us())
      .add("newest_ts_us", server_->ring.newest_ts_us());
  push(encoded(r));
  mode_ = history_only ? Mode::history : Mode::live;
  cursor_ts_us_ = *since;
  backfilling_ = true;
  if (idle) pump();
}

// The first tick of each slot of the client's interval, counted from the session's start:
// the grid kvmon samples the host on, so a client whose interval is a multiple of the host
// interval gets every host sample, and one whose interval divides it gets them all too.
int64_t Client::slot(const TickEntry& e) const {
  int64_t since_start = e.scheduled_ts_us - server_->identity.started_ts_us;
  return since_start >= 0 ? since_start / interval_us_ : -1;
}

bool Client::due(const TickEntry& e) const {
  if (last_sent_slot_) return slot(e) != *last_sent_slot_;
  // The first tick sent opens a slot, so that the next one comes a whole interval later.
  const int64_t since_start = e.scheduled_ts_us - server_->identity.started_ts_us;
  return since_start < 0 || since_start % interval_us_ < server_->identity.interval_us;
}

void Client::enqueue_tick(const TickEntry& e) {
  for (const ProcessKey& key : e.instances) {
    if (!announced_.insert(key).second) continue;
    if (Bytes line = server_->ring.instance_line(key)) push(line);
  }
  last_sent_slot_ = slot(e);
  push(e.lines);
}

// Pulls history into the (empty) queue a chunk at a time, so backfill never overflows it.
void Client::pump() {
  while (backfilling_ && !closed_ && queued_bytes_ < kBackfillChunkBytes) {
    const TickEntry* e = server_->ring.after(cursor_ts_us_);
    if (!e) {
      backfilling_ = false;
      if (mode_ == Mode::history) {
        mode_ = Mode::idle;
        push(encoded(Message("history_end").add("last_ts_us", cursor_ts_us_)));
      }
      break;
    }
    cursor_ts_us_ = e->scheduled_ts_us;
    if (due(*e)) enqueue_tick(*e);
  }
}

void Client::offer(const TickEntry& entry) {
  if (closed_ || closing_) return;
  auto stalled = std::chrono::steady_clock::now() - write_started_;
  if (writing_ && stalled > std::chrono::microseconds(server_->config.idle_timeout_us)) {
    return drop_slow("a write made no progress for longer than the idle timeout");
  }
  if (mode_ != Mode::live || backfilling_) return;
  cursor_ts_us_ = entry.scheduled_ts_us;
  if (due(entry)) enqueue_tick(entry);
}

void Client::push(Bytes bytes) {
  if (closed_) return;
  queued_bytes_ += bytes->size();
  queue_.push_back(std::move(bytes));
  if (queued_bytes_ > server_->config.client_queue_bytes && !closing_) {
    return drop_slow(std::to_string(queued_bytes_) + " bytes unsent (limit " +
                     std::to_string(server_->config.client_queue_bytes) + ")");
  }
  if (!writing_) do_write();
}

void Client::do_write() {
  writing_ = true;
  write_started_ = std::chrono::steady_clock::now();
  Bytes front = queue_.front();
  asio::async_write(socket_, asio::buffer(*front),
                    [self = shared_from_this(), front](const boost::system::error_code& ec,
                                                       size_t) { self->on_write(ec); });
}

void Client::on_write(const boost::system::error_code& ec) {
  writing_ = false;
  if (closed_) return;
  if (ec) {
    log_debug() << "client " << peer_ << ": write failed: " << ec.message();
    return close();
  }
  queued_bytes_ -= queue_.front()->size();
  queue_.pop_front();
  if (!queue_.empty()) return do_write();
  if (closing_) return close();
  pump();
}

void Client::drop_slow(const std::string& why) {
  std::string msg = "client " + peer_ + " dropped: " + why + ": it does not read fast enough";
  log_warn() << msg;
  if (server_->on_event) server_->on_event(EventRecord{now_ts_us(), "client_dropped", msg, {}});
  close();
}

void Client::fail(std::string_view code, const std::string& text, bool quiet) {
  if (closed_ || closing_) return;
  // Rate-limited per address, as wrong tokens are: no client floods the log.
  if (!quiet) server_->auth.refused(address_, peer_, std::string(code) + ": " + text);
  mode_ = Mode::idle;
  backfilling_ = false;
  closing_ = true;
  push(encoded(proto::error_message(code, text)));
  arm_idle(std::chrono::duration_cast<std::chrono::microseconds>(kCloseGrace).count());
}

void Client::arm_idle(int64_t timeout_us) {
  idle_.expires_after(std::chrono::microseconds(timeout_us));
  idle_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec || self->closed_) return;
    if (self->closing_) return self->close();  // the error reply could not be sent in time
    if (self->mode_ == Mode::live) return;
    if (!self->hello_) return self->fail(proto::kErrIdle, "no hello within 5 s of connecting");
    self->fail(proto::kErrIdle, "no request within the idle timeout");
  });
}

void Client::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_.cancel();
  queue_.clear();
  queued_bytes_ = 0;
  server_->remove(this);
}

}  // namespace

void MonitorServer::Impl::log_auth_summaries(bool all) {
  auth.log_summaries(all);
  const int64_t now = steady_us();
  if (busy_refused > 0 && (all || now - busy_last_log_us >= kBusyLogPeriodUs)) {
    log_warn() << busy_refused << " more clients refused: too many clients (max "
               << config.max_clients << ")";
    busy_refused = 0;
    busy_last_log_us = now;
  }
}

void MonitorServer::Impl::listen() {
  open_listener(acceptor, config.address, config.port, "--listen");
}

void MonitorServer::Impl::accept() {
  acceptor.async_accept(
      [this, self = shared_from_this()](const boost::system::error_code& ec, tcp::socket socket) {
        if (stopped || ec == asio::error::operation_aborted) return;
        if (ec) {  // e.g. out of file descriptors: try again a little later, do not spin
          log_warn() << "accept failed: " << ec.message();
          retry.expires_after(std::chrono::milliseconds(100));
          retry.async_wait([this, self](const boost::system::error_code& e) {
            if (!e && !stopped) accept();
          });
          return;
        }
        auto client = std::make_shared<Client>(std::move(socket), self);
        if (clients.size() >= static_cast<size_t>(config.max_clients)) {
          const int64_t now = steady_us();
          if (busy_last_log_us == 0 || now - busy_last_log_us >= kBusyLogPeriodUs) {
            log_warn() << "client " << client->peer() << " refused: too many clients"
                       << (busy_refused ? " (and " + std::to_string(busy_refused) +
                                              " more since "
                                              "the last such line)"
                                        : std::string());
            busy_refused = 0;
            busy_last_log_us = now;
          } else {
            ++busy_refused;
          }
          client->reject_busy();
        } else {
          clients.emplace(client.get(), client);
          client->start();
        }
        accept();
      });
}

MonitorServer::MonitorServer(asio::io_context& io, ServerConfig config, ServerIdentity identity,
                             EventSink on_event)
    : impl_(
          std::make_shared<Impl>(io, std::move(config), std::move(identity), std::move(on_event))) {
  impl_->listen();
  log_info() << "serving samples on " << impl_->config.address << ":" << port()
             << (impl_->config.token.empty() ? " (no token)" : " (token required)");
  impl_->accept();
}

MonitorServer::~MonitorServer() {
  try {
    stop();
  } catch (...) {
    // Closing sockets and a last log line: nothing is left to report a failure to.
  }
}

void MonitorServer::publish(const Batch& batch) {
  if (impl_->stopped) return;
  if (impl_->auth.addresses() > 0 || impl_->busy_refused > 0) impl_->log_auth_summaries(false);
  // The wall clock went back (a clock_stepped event): the ring's ticks, kept in time order for
  // backfill, are dropped; clients already streaming go on with the new ones.
  if (!impl_->ring.empty() && batch.scheduled_ts_us <= impl_->ring.newest_ts_us())
    impl_->ring.drop_ticks();
  const TickEntry& entry = impl_->ring.add(batch);
  for (const auto& client : impl_->snapshot()) client->offer(entry);
}

void MonitorServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->log_auth_summaries(true);
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->retry.cancel();
  for (const auto& client : impl_->snapshot()) client->close();
}

int MonitorServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

size_t MonitorServer::clients() const { return impl_->clients.size(); }

}  // namespace kv::mon
