#include "engine/loop/event_worker.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <queue>
#include <vector>

#include "engine/loop/event_client.hpp"
#include "engine/pacer.hpp"
#include "engine/request_stream.hpp"
#include "kvbench/clock.hpp"
#include "store/memcached_codec.hpp"
#include "store/resp_codec.hpp"
#include "store/tls_session.hpp"

namespace kv::drive {
namespace {

namespace asio = boost::asio;
namespace st = store;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr int64_t kTickNs = 5'000'000;           // timeouts, stop and abort are checked this often
constexpr int64_t kFailPauseNs = 10'000'000;     // a connection whose server is down: one error per
constexpr int64_t kFirstBackoffNs = 50'000'000;  // as the classic clients' reconnect backoff
constexpr int64_t kStopGraceNs = 50'000'000;     // Ctrl-C: replies still awaited this long

class Worker;
class Link;

// One connection in the sense: an independent user of the store.
struct User {
  User(Worker& w, const WorkerContext& ctx, EventClient& c, uint64_t index, uint64_t count)
      : worker(w),
        client(c),
        picker(ctx, index, count),
        schedule(ctx, index, count),
        share(stream_share(ctx, index, count)),
        keys(ctx.workload.key_prefix) {}

  // Sends what is due while the window has room; schedules a wake-up for what is not due yet.
  void refill(int64_t now);
  // The reply to one of its requests arrived (or it failed): frees its slot.
  void done(int64_t now);
  void finish();
  // Its held request (picked while its connection was connecting) leaves now, or fails.
  void send_held(int64_t now);
  void fail_held(int64_t now);

  Worker& worker;
  EventClient& client;
  std::vector<Link*> links;  // one per server of the target
  RequestPicker picker;
  Schedule schedule;
  uint64_t share;
  KeyFormatter keys;
  uint64_t next = 0;  // requests picked so far
  size_t inflight = 0;
  bool finished = false;
  bool has_held = false;
  Pending held{};
  Link* held_link = nullptr;
  int64_t pause_until = 0;
  bool in_heap = false;
  int64_t heap_at = 0;
};

// What a request expects back, kept per socket in send order.
struct Flight {
  User* user = nullptr;  // nullptr: a handshake command (AUTH / SELECT)
  Pending p{};
  st::Op op = st::Op::other;
  uint64_t start = 0;  // where its bytes begin in the socket's output stream
};

enum class Wire { resp, text, binary };

// One socket to one server, owned by one User. The transport seam: everything that touches the
// socket is in here (adopt, start_connect, arm_read / on_readable, flush, close, release); a
// TLS stream replaces tcp::socket in these members only.
class Link {
 public:
  enum class State { up, connecting, down };

  Link(Worker& w, EventClient& c, size_t server, size_t depth);
  void adopt(int fd);
  // Appends the request to the output buffer (flushed once the current handler is done).
  void send(User* u, const Pending& p, std::string_view key, std::string_view value);
  void flush();
  void start_connect(int64_t now);
  void check(int64_t now);  // timeouts
  // Ctrl-C: every request in flight is given up; the socket is closed.
  void interrupt();
  // The phase is over: hands a clean socket back to the client (else closes it).
  void release();

  State state() const noexcept { return state_; }
  int64_t retry_at() const noexcept { return retry_at_; }
  void wait_for_connect(User* u) { waiting_.push_back(u); }

 private:
  void arm_read();
  void on_readable(const error_code& ec);
  bool decode(std::string_view bytes, int64_t now);
  bool complete(st::Verdict v, std::string_view value, int64_t now);
  st::Verdict out_of_step(size_t buffered, st::Verdict v) const;
  void on_connected(const error_code& ec);
  // TLS (a TlsSession over the socket, store/tls_session.hpp): the same steps, through it.
  void write_tls();
  void read_tls();
  void handshake_tls();
  void wait_tls(st::TlsSession::Io io, void (Link::*then)());
  void connect_failed(int64_t now);
  void fail(OpStatus status, int64_t now);
  void close_socket();
  void reset_decoders();
  void mark_dirty();

  Worker& w_;
  EventClient& client_;
  size_t server_;
  Wire wire_;
  tcp::socket sock_;
  std::unique_ptr<st::TlsSession> tls_;  // null: plain TCP
  size_t tls_sent_ = 0;                  // of sending_, taken by the TLS session
  State state_ = State::down;
  uint64_t gen_ = 0;  // bumped whenever the socket is closed: stale handlers do nothing
  int64_t retry_at_ = 0;
  int64_t backoff_ns_ = 0;
  int64_t connect_started_ = 0;
  std::string out_, sending_;
  bool writing_ = false;
  bool dirty_ = false;
  // Bytes ever appended to out_ / written to the socket: a request whose first byte is below
  // written_bytes_ reached the store (in part at least).
  uint64_t queued_bytes_ = 0, written_bytes_ = 0;
  st::ExpectFifo<Flight> fifo_;
  std::unique_ptr<st::RespDecoder> resp_;
  std::optional<st::mc::TextDecoder> text_;
  std::optional<st::mc::BinaryDecoder> binary_;
  uint32_t opaque_ = 0;
  std::vector<User*> waiting_, waking_;

  friend class Worker;
};

class Worker {
 public:
  explicit Worker(const WorkerContext& context)
      : ctx(context),
        end_ns(phase_end_ns(context)),
        timer_(io),
        guard_(asio::make_work_guard(io)) {}

  void run();
  void schedule_wake(User* u, int64_t at) {
    if (u->in_heap && u->heap_at <= at) return;
    u->in_heap = true;
    u->heap_at = at;
    heap_.emplace(at, u);
  }
  void dirty(Link* l) { dirty_.push_back(l); }
  // No new request: Ctrl-C, or the phase is over (see stop_sending: in rate mode the requests
  // due before end_ns still go out when the collector's abort is the duration's end).
  bool stopping(int64_t now) const { return stop_sending(ctx, end_ns, now); }

  const WorkerContext& ctx;
  const int64_t end_ns;
  asio::io_context io{1};
  std::array<char, 16384> rbuf{};  // every socket's reads land here, then in its decoder
  size_t unfinished = 0;           // users not finished
  size_t busy = 0;                 // requests in flight or held, over every user
  bool waits_for_end = false;      // a rate-mode user's next send lies past the phase's end

 private:
  void flush_dirty() {
    // By index, not a range: should a flush mark a link dirty, the vector may grow under it.
    // NOLINTNEXTLINE(modernize-loop-convert)
    for (size_t i = 0; i < dirty_.size(); ++i) dirty_[i]->flush();
    dirty_.clear();
  }
  void arm(int64_t at);

  asio::steady_timer timer_;
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  bool armed_ = false;
  int64_t armed_at_ = 0;
  uint64_t timer_gen_ = 0;
  std::vector<Link*> dirty_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<User>> users_;
  using Due = std::pair<int64_t, User*>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> heap_;
  SpinMargin margin_;
};

OpStatus status_of(st::Verdict v) {
  switch (v) {
    case st::Verdict::ok:
      return OpStatus::ok;
    case st::Verdict::hit:
      return OpStatus::hit;
    case st::Verdict::miss:
      return OpStatus::miss;
    default:
      return OpStatus::error;  // refused (not stored, an error reply) or out of step
  }
}

// ---- User ----

void User::finish() {
  if (finished) return;
  finished = true;
  --worker.unfinished;
}

void User::refill(int64_t now) {
  const WorkerContext& ctx = worker.ctx;
  const WorkloadSpec& w = ctx.workload;
  while (!finished && !has_held && inflight < static_cast<size_t>(w.pipeline)) {
    if (worker.stopping(now) || next >= share) {
      finish();
      return;
    }
    if (now < pause_until) {
      worker.schedule_wake(this, pause_until);
      return;
    }
    const int64_t intended = schedule.at(next);
    if (schedule.on()) {
      if (intended >= worker.end_ns) {
        worker.waits_for_end = true;
        finish();
        return;
      }
      if (intended > now) {
        now = steady_ns();
        if (intended > now) {
          worker.schedule_wake(this, intended);
          return;
        }
      }
    } else if (now >= worker.end_ns) {
      finish();
      return;
    }
    Pending p{};
    if (!picker.pick(next, &p.is_set, &p.key)) {
      finish();
      return;
    }
    ++next;
    p.intended_ns = intended;
    p.queued_ns = schedule.on() ? steady_ns() : now;
    std::string_view key = keys.format(p.key);
    std::string_view value;
    if (p.is_set) value = ctx.values.value_for(p.key, w.values.size_for(p.key));
    p.bytes_out = key.size() + value.size();
    Link& l = *links[client.server_for(key)];
    switch (l.state()) {
      case Link::State::up:
        l.send(this, p, key, value);
        ++inflight;
        ++worker.busy;
        break;
      case Link::State::down:
        if (p.queued_ns < l.retry_at()) {
          // Its server is down and not to be retried yet: the request fails at once, and the
          // next one waits 10 ms (a dead store is not spun on).
          record_reply(ctx, p, OpStatus::error, {}, p.queued_ns);
          pause_until = p.queued_ns + kFailPauseNs;
          break;
        }
        has_held = true;
        held = p;
        held_link = &l;
        ++worker.busy;
        l.wait_for_connect(this);
        l.start_connect(p.queued_ns);
        return;
      case Link::State::connecting:
        has_held = true;
        held = p;
        held_link = &l;
        ++worker.busy;
        l.wait_for_connect(this);
        return;
    }
  }
}

void User::done(int64_t now) {
  --inflight;
  --worker.busy;
  refill(now);
}

void User::send_held(int64_t /*now*/) {
  has_held = false;
  if (worker.ctx.stop.load(std::memory_order_relaxed)) {  // Ctrl-C came first: never sent
    --worker.busy;
    return;
  }
  const WorkloadSpec& w = worker.ctx.workload;
  std::string_view key = keys.format(held.key);
  std::string_view value;
  if (held.is_set) value = worker.ctx.values.value_for(held.key, w.values.size_for(held.key));
  held_link->send(this, held, key, value);
  ++inflight;  // busy was counted when it was held
}

void User::fail_held(int64_t now) {
  has_held = false;
  --worker.busy;
  record_reply(worker.ctx, held, OpStatus::error, {}, now);
  pause_until = now + kFailPauseNs;
}

// ---- Link ----

Link::Link(Worker& w, EventClient& c, size_t server, size_t depth)
    : w_(w),
      client_(c),
      server_(server),
      wire_(c.spec().protocol == Protocol::redis ? Wire::resp
            : c.spec().binary_protocol           ? Wire::binary
                                                 : Wire::text),
      sock_(w.io),
      fifo_(depth + 4) {
  out_.reserve(4096);
  sending_.reserve(4096);
  reset_decoders();
}

void Link::reset_decoders() {
  switch (wire_) {
    case Wire::resp:
      resp_ = std::make_unique<st::RespDecoder>(size_t{64} << 10);
      break;
    case Wire::text:
      text_.emplace();
      break;
    case Wire::binary:
      binary_.emplace();
      break;
  }
}

void Link::adopt(int fd) {
  if (fd < 0) return;  // down: connected on first use
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  error_code ec;
  sock_.assign(a.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }
  sock_.non_blocking(true, ec);
  tls_ = client_.take_tls(server_);
  state_ = State::up;
  arm_read();
}

void Link::mark_dirty() {
  if (dirty_) return;
  dirty_ = true;
  w_.dirty(this);
}

void Link::send(User* u, const Pending& p, std::string_view key, std::string_view value) {
  const uint32_t ttl = w_.ctx.workload.ttl_s;
  const size_t before = out_.size();
  bool ok = true;
  switch (wire_) {
    case Wire::resp:
      if (p.is_set)
        st::resp::append_set(out_, key, value, uint64_t{ttl} * 1000);
      else
        st::resp::append_get(out_, key);
      break;
    case Wire::text:
      ok = p.is_set ? st::mc::append_text_set(out_, key, value, 0, ttl)
                    : st::mc::append_text_get(out_, key);
      break;
    case Wire::binary:
      ok = p.is_set ? st::mc::append_binary_set(out_, key, value, opaque_++, 0, ttl)
                    : st::mc::append_binary_get(out_, key, opaque_++);
      break;
  }
  if (!ok) {
    // A key the protocol cannot carry: refused before sending, as libmemcached refuses it.
    asio::post(w_.io, [u, p, this] {
      record_reply(w_.ctx, p, OpStatus::error, {}, steady_ns());
      u->done(steady_ns());
    });
    return;
  }
  fifo_.push(Flight{u, p, p.is_set ? st::Op::set : st::Op::get, queued_bytes_});
  queued_bytes_ += out_.size() - before;
  mark_dirty();
}

void Link::flush() {
  dirty_ = false;
  if (state_ != State::up || writing_ || out_.empty()) return;
  if (tls_) {
    sending_.swap(out_);
    out_.clear();
    tls_sent_ = 0;
    writing_ = true;
    write_tls();
    return;
  }
  error_code ec;
  size_t n = sock_.write_some(asio::buffer(out_), ec);
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) {
    fail(OpStatus::error, steady_ns());
    return;
  }
  written_bytes_ += n;
  if (n == out_.size()) {
    out_.clear();
    return;
  }
  // The socket's buffer is full: the rest goes out when it drains; commands queued meanwhile
  // wait in out_ for the next flush.
  sending_.assign(out_, n);
  out_.clear();
  writing_ = true;
  asio::async_write(sock_, asio::buffer(sending_), [this, g = gen_](const error_code& e, size_t k) {
    if (g != gen_) return;
    written_bytes_ += k;
    writing_ = false;
    sending_.clear();
    if (e) {
      fail(OpStatus::error, steady_ns());
      return;
    }
    flush();
  });
}

// TLS writes go from sending_ (a retry offers the same bytes again); out_ gathers what is
// queued meanwhile, flushed once sending_ is out.
void Link::write_tls() {
  while (tls_sent_ < sending_.size()) {
    size_t n = 0;
    auto io = tls_->write(sending_.data() + tls_sent_, sending_.size() - tls_sent_, &n);
    if (io != st::TlsSession::Io::done) {
      wait_tls(io, &Link::write_tls);
      return;
    }
    tls_sent_ += n;
    written_bytes_ += n;
  }
  writing_ = false;
  sending_.clear();
  tls_sent_ = 0;
  flush();
}

// Until OpenSSL has nothing decrypted left (want_read): it may hold whole replies the socket
// no longer signals.
void Link::read_tls() {
  for (;;) {
    size_t n = 0;
    auto io = tls_->read(w_.rbuf.data(), w_.rbuf.size(), &n);
    if (io == st::TlsSession::Io::want_read) break;
    if (io != st::TlsSession::Io::done) {
      wait_tls(io, &Link::read_tls);
      return;
    }
    if (!decode(std::string_view(w_.rbuf.data(), n), steady_ns())) return;
  }
  arm_read();
}

// Waits for what the session asked (then calls `then`); fails the link on closed / error.
void Link::wait_tls(st::TlsSession::Io io, void (Link::*then)()) {
  if (io != st::TlsSession::Io::want_read && io != st::TlsSession::Io::want_write) {
    if (state_ == State::connecting)
      connect_failed(steady_ns());
    else
      fail(OpStatus::error, steady_ns());
    return;
  }
  auto what =
      io == st::TlsSession::Io::want_read ? tcp::socket::wait_read : tcp::socket::wait_write;
  sock_.async_wait(what, [this, then, g = gen_](const error_code& e) {
    if (g != gen_) return;
    if (e) {
      wait_tls(st::TlsSession::Io::error, then);
      return;
    }
    (this->*then)();
  });
}

void Link::handshake_tls() {
  auto io = tls_->handshake();
  if (io == st::TlsSession::Io::done) {
    on_connected(error_code{});
    return;
  }
  wait_tls(io, &Link::handshake_tls);
}

void Link::arm_read() {
  sock_.async_wait(tcp::socket::wait_read, [this, g = gen_](const error_code& ec) {
    if (g != gen_) return;
    on_readable(ec);
  });
}

void Link::on_readable(const error_code& ec) {
  if (ec) {
    fail(OpStatus::error, steady_ns());
    return;
  }
  if (tls_) {
    read_tls();
    return;
  }
  for (;;) {
    error_code rec;
    size_t n = sock_.read_some(asio::buffer(w_.rbuf), rec);
    if (rec == asio::error::would_block || rec == asio::error::try_again) break;
    if (rec || n == 0) {
      fail(OpStatus::error, steady_ns());
      return;
    }
    // Replies are timed when they arrive: every reply of this read arrived now.
    if (!decode(std::string_view(w_.rbuf.data(), n), steady_ns())) return;
    // A short read emptied the socket (a later arrival is a new readiness edge).
    if (n < w_.rbuf.size()) break;
  }
  arm_read();
}

bool Link::decode(std::string_view bytes, int64_t now) {
  if (fifo_.empty()) {  // bytes nobody asked for: out of step
    fail(OpStatus::error, now);
    return false;
  }
  switch (wire_) {
    case Wire::resp: {
      if (!resp_->feed(bytes)) {
        fail(OpStatus::error, now);
        return false;
      }
      st::RespReply r;
      while (!fifo_.empty()) {
        st::ReadStatus s = resp_->next(&r);
        if (s == st::ReadStatus::need_more) break;
        if (s == st::ReadStatus::protocol_error) {
          fail(OpStatus::error, now);
          return false;
        }
        if (!complete(out_of_step(resp_->buffered(), st::resp_verdict(fifo_.front().op, r)), r.text,
                      now))
          return false;
      }
      return true;
    }
    case Wire::text: {
      text_->feed(bytes);
      st::mc::TextReply r;
      while (!fifo_.empty()) {
        const st::mc::TextOp op =
            fifo_.front().op == st::Op::set ? st::mc::TextOp::storage : st::mc::TextOp::get;
        st::ReadStatus s = text_->next(op, &r);
        if (s == st::ReadStatus::need_more) break;
        if (s == st::ReadStatus::protocol_error) {
          fail(OpStatus::error, now);
          return false;
        }
        if (!complete(out_of_step(text_->buffered(), st::mc::text_verdict(op, r)), r.value, now))
          return false;
      }
      return true;
    }
    case Wire::binary: {
      binary_->feed(bytes);
      st::mc::BinaryReply r;
      while (!fifo_.empty()) {
        st::ReadStatus s = binary_->next(&r);
        if (s == st::ReadStatus::need_more) break;
        if (s == st::ReadStatus::protocol_error) {
          fail(OpStatus::error, now);
          return false;
        }
        if (!complete(out_of_step(binary_->buffered(), st::mc::binary_verdict(fifo_.front().op, r)),
                      r.value, now))
          return false;
      }
      return true;
    }
  }
  return true;
}

// The reply to the last request in flight, followed by bytes no request asked for: the stream
// is out of step, so this reply may not be that request's either.
st::Verdict Link::out_of_step(size_t buffered, st::Verdict v) const {
  return fifo_.size() == 1 && buffered > 0 ? st::Verdict::mismatch : v;
}

bool Link::complete(st::Verdict v, std::string_view value, int64_t now) {
  Flight f = fifo_.front();
  fifo_.pop();
  const bool out_of_step = v == st::Verdict::mismatch;
  if (!f.user) {  // a handshake reply: AUTH or SELECT refused, the connection is of no use
    if (v == st::Verdict::error || out_of_step) {
      fail(OpStatus::error, now);
      return false;
    }
    return true;
  }
  record_reply(w_.ctx, f.p, status_of(v), value, now);
  f.user->done(now);
  if (out_of_step) {
    fail(OpStatus::error, now);
    return false;
  }
  return true;
}

void Link::close_socket() {
  ++gen_;
  tls_.reset();
  tls_sent_ = 0;
  error_code ec;
  sock_.close(ec);
  writing_ = false;
  out_.clear();
  sending_.clear();
  queued_bytes_ = written_bytes_;  // what was not written is dropped
}

void Link::fail(OpStatus status, int64_t now) {
  const uint64_t written = written_bytes_;
  close_socket();
  reset_decoders();
  state_ = State::down;
  retry_at_ = now;  // a lost connection is reopened at once; failed connects back off
  const bool stopping = w_.ctx.stop.load(std::memory_order_relaxed);
  while (!fifo_.empty()) {
    Flight f = fifo_.front();
    fifo_.pop();
    if (!f.user) continue;
    if (stopping) {
      if (f.start < written) f.user->client.count_abandoned(1);
      --f.user->inflight;
      --w_.busy;
      continue;
    }
    record_reply(w_.ctx, f.p, status, {}, now);
    f.user->done(now);
  }
}

void Link::start_connect(int64_t now) {
  close_socket();
  reset_decoders();
  state_ = State::connecting;
  connect_started_ = now;
  const SocketAddress& a = client_.address(server_);
  tcp::endpoint ep;
  error_code ec;
  if (a.len == 0 || a.len > ep.capacity()) {
    ec = asio::error::host_not_found;
  } else {
    std::memcpy(ep.data(), &a.addr, a.len);
    ep.resize(a.len);
    sock_.open(ep.protocol(), ec);
  }
  if (!ec) sock_.set_option(tcp::no_delay(client_.spec().tcp_nodelay), ec);
  if (ec) {  // reported from the loop, not from inside the caller's refill
    asio::post(w_.io, [this, g = gen_] {
      if (g == gen_) connect_failed(steady_ns());
    });
    return;
  }
  sock_.async_connect(ep, [this, g = gen_](const error_code& e) {
    if (g != gen_) return;
    on_connected(e);
  });
}

void Link::on_connected(const error_code& ec) {
  const int64_t now = steady_ns();
  if (ec) {
    connect_failed(now);
    return;
  }
  error_code ig;
  sock_.non_blocking(true, ig);
  if (client_.tls_context() && !tls_) {  // a TLS target: the handshake, then up
    tls_ = std::make_unique<st::TlsSession>(*client_.tls_context(), sock_.native_handle(),
                                            client_.spec().servers[server_].host);
    handshake_tls();
    return;
  }
  state_ = State::up;
  backoff_ns_ = 0;
  const size_t n = append_handshake(client_.spec(), out_);
  queued_bytes_ += out_.size();
  for (size_t i = 0; i < n; ++i) {
    Flight f;
    f.p.queued_ns = now;
    f.start = queued_bytes_;
    fifo_.push(f);
  }
  arm_read();
  mark_dirty();
  waking_.swap(waiting_);
  for (User* u : waking_) u->send_held(now);
  for (User* u : waking_) u->refill(now);
  waking_.clear();
}

void Link::connect_failed(int64_t now) {
  close_socket();
  state_ = State::down;
  const int64_t max_ns = client_.options().reconnect_backoff_max_us * 1000;
  backoff_ns_ = backoff_ns_ == 0 ? kFirstBackoffNs : std::min(backoff_ns_ * 2, max_ns);
  retry_at_ = now + backoff_ns_;
  waking_.swap(waiting_);
  for (User* u : waking_) u->fail_held(now);
  for (User* u : waking_) u->refill(now);
  waking_.clear();
}

void Link::check(int64_t now) {
  const int64_t timeout_ns = client_.options().timeout_us * 1000;
  if (state_ == State::up && !fifo_.empty() && now - fifo_.front().p.queued_ns > timeout_ns) {
    fail(OpStatus::timeout, now);
  } else if (state_ == State::connecting && now - connect_started_ > timeout_ns) {
    connect_failed(now);
  }
}

void Link::interrupt() {
  // Abandoned: the requests that (partly) left; those still in out_ never reached the store.
  while (!fifo_.empty()) {
    const Flight& f = fifo_.front();
    if (f.user && f.start < written_bytes_) f.user->client.count_abandoned(1);
    fifo_.pop();
  }
  // Shut down (a FIN after what was written), not closed: as the classic clients at Ctrl-C, so
  // a stopped store still executes what reached it once it runs again (a close with replies
  // unread would reset the connection and drop them). The client closes the socket later.
  ++gen_;
  error_code ec;
  int fd = -1;
  if (state_ == State::up || state_ == State::connecting) {
    sock_.shutdown(tcp::socket::shutdown_both, ec);
    fd = sock_.release(ec);
    if (ec) fd = -1;
  }
  close_socket();
  state_ = State::down;
  client_.give_fd(server_, fd);
}

void Link::release() {
  if (state_ == State::up && fifo_.empty() && !writing_ && out_.empty()) {
    ++gen_;
    error_code ec;
    int fd = sock_.release(ec);
    client_.give_fd(server_, ec ? -1 : fd);
    if (!ec) client_.give_tls(server_, std::move(tls_));
    tls_.reset();
    return;
  }
  close_socket();
  client_.give_fd(server_, -1);
}

// ---- Worker ----

void Worker::arm(int64_t at) {
  if (armed_ && armed_at_ <= at) return;
  armed_ = true;
  armed_at_ = at;
  timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(at)));
  timer_.async_wait([this, g = ++timer_gen_](const error_code& ec) {
    if (g != timer_gen_ || ec) return;
    armed_ = false;
    if (ctx.plan.rate > 0) margin_.observe(steady_ns() - armed_at_);
  });
}

void Worker::run() {
  const bool rate_mode = ctx.plan.rate > 0;
  if (rate_mode) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // as the Pacer: wake on time
  const size_t n = ctx.clients.size();
  const auto depth = static_cast<size_t>(ctx.workload.pipeline);
  for (size_t c = 0; c < n; ++c) {
    auto& client = static_cast<EventClient&>(*ctx.clients[c]);
    // Each connection is a stream of its own among every connection of the phase.
    users_.push_back(std::make_unique<User>(*this, ctx, client, ctx.index * n + c, ctx.count * n));
    for (size_t s = 0; s < client.servers(); ++s) {
      links_.push_back(std::make_unique<Link>(*this, client, s, depth));
      links_.back()->adopt(client.take_fd(s));
      users_.back()->links.push_back(links_.back().get());
    }
  }
  unfinished = users_.size();
  int64_t now = steady_ns();
  for (auto& u : users_) u->refill(now);
  flush_dirty();
  int64_t last_tick = now;
  bool interrupted = false;
  int64_t stopped_at = 0;
  for (;;) {
    now = steady_ns();
    if (ctx.stop.load(std::memory_order_relaxed)) {
      // Ctrl-C: nothing new is sent; what is in flight has kStopGraceNs to be answered (as the
      // classic worker finishes its request before the run's watcher shuts its sockets down),
      // then is given up (interrupted, counted abandoned).
      if (stopped_at == 0) {
        stopped_at = now;
        for (auto& u : users_) u->finish();
      }
      if (busy == 0 || now - stopped_at >= kStopGraceNs) {
        interrupted = true;
        break;
      }
    }
    while (!heap_.empty() && heap_.top().first <= now) {
      auto [at, u] = heap_.top();
      heap_.pop();
      if (!u->in_heap || u->heap_at != at) continue;  // superseded
      u->in_heap = false;
      u->refill(now);
    }
    flush_dirty();
    if (now - last_tick >= kTickNs) {
      last_tick = now;
      for (auto& l : links_) l->check(now);
      if (stopping(now)) {
        for (auto& u : users_) {
          if (!u->has_held) u->finish();
        }
      }
      flush_dirty();
    }
    if (unfinished == 0 && busy == 0 && (!waits_for_end || now >= end_ns || should_stop(ctx)))
      break;
    int64_t wake = last_tick + kTickNs;
    if (!heap_.empty()) {
      const int64_t due = heap_.top().first;
      if (due - margin_.margin_ns() <= now) {
        // Close to a send time: spin (serving whatever I/O is ready) rather than sleep past it.
        if (io.poll() == 0) ctx.slot.add_spin(static_cast<uint64_t>(steady_ns() - now));
        flush_dirty();
        continue;
      }
      wake = std::min(wake, due - margin_.margin_ns());
    }
    if (waits_for_end && unfinished == 0 && busy == 0) wake = std::min(wake, end_ns);
    if (stopped_at != 0) wake = std::min(wake, stopped_at + kStopGraceNs);
    arm(wake);
    io.run_one();
    flush_dirty();
  }
  for (auto& l : links_) {
    if (interrupted)
      l->interrupt();
    else
      l->release();
  }
}

}  // namespace

void run_event_worker(const WorkerContext& ctx) {
  Worker w(ctx);
  w.run();
}

}  // namespace kv::drive
