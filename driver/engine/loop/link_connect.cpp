// A link's connection over its life: connect (and its failure, with the backoff a pool server
// shares), the handshake's queueing once up, a lost connection failing what was in flight,
// timeouts, Ctrl-C and the hand-back at a phase's end. Apart from event_link.cpp, which keeps
// the requests' way out and their replies' way in.
#include <algorithm>
#include <cstdint>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_link.hpp"
#include "engine/loop/event_loop.hpp"
#include "engine/loop/event_user.hpp"

namespace kv::drive::loop {
namespace {

constexpr int64_t kFirstBackoffNs = 50'000'000;  // the first reconnect wait, doubling

// The wait after one more failed connect: the first, or twice the last, up to `max_ns`.
int64_t next_backoff(int64_t last_ns, int64_t max_ns) {
  return last_ns == 0 ? kFirstBackoffNs : std::min(last_ns * 2, max_ns);
}

}  // namespace

void Link::adopt(int fd) {
  if (fd < 0) return;  // down: connected on first use
  if (!t_->adopt(fd, client_.take_tls(server_))) return;
  enable_tx_stamps();  // the handshake is answered: nothing unacknowledged in flight
  state_ = State::up;
  t_->start_reading();
}

void Link::close_socket() {
  t_->close();
  out_.clear();
  splits_.clear();
  queued_bytes_ = written_bytes_;  // what was not written is dropped
}

void Link::fail(OpStatus status, int64_t now) {
  if (w_.router) {  // a lost node: has a replica taken its slots?
    w_.router->want_refresh();
    std::string note = "node ";  // appended piece by piece (GCC 12 -O3 -Wrestrict)
    note += host_port(client_.spec().servers[server_]);
    note += status == OpStatus::timeout ? " lost (a request timed out)"
                                        : " lost (its connection failed)";
    w_.ctx.slot.add_note("cluster_topology", std::move(note));
  }
  const uint64_t written = written_bytes_;
  close_socket();
  codec_.reset();
  state_ = State::down;
  retry_at_ = now;  // a lost connection is reopened at once; failed connects back off
  const bool stopping = w_.ctx.stop.load(std::memory_order_relaxed);
  while (!fifo_.empty()) {
    const Flight f = pop_flight();
    if (!f.user) continue;
    if (stopping) {
      if (f.start < written) f.user->client.count_abandoned(1);
      --f.user->inflight;
      --w_.busy;
      continue;
    }
    record_reply(w_.ctx, f.p, status, {}, now);
    count(PoolCount::failed);
    f.user->done(now);
  }
}

void Link::start_connect(int64_t now) {
  close_socket();
  codec_.reset();
  state_ = State::connecting;
  connect_started_ = now;
  watch();
  t_->connect(client_.address(server_), client_.spec().tcp_nodelay);
}

// Connected (and a TLS target's handshake done): the handshake's commands and what waited.
void Link::on_connected(int64_t now) {
  state_ = State::up;
  backoff_ns_ = 0;
  if (in_pool()) {  // it answers: every link may connect again
    const bool was_down = w_.pool_server(server_).backoff_ns != 0;
    w_.pool_server(server_) = {};
    if (was_down && client_.is_pool()) w_.pool_server_back(client_, server_);
  }
  enable_tx_stamps();
  const size_t n = append_handshake(client_.spec(), out_);
  queued_bytes_ += out_.size();
  for (size_t i = 0; i < n; ++i) {
    Flight f;
    f.p.queued_ns = now;
    f.start = queued_bytes_;
    f.end = queued_bytes_;
    fifo_.push(f);
  }
  if (n > 0) watch();
  t_->start_reading();
  mark_dirty();
  parking_.swap(parked_);
  const bool stopping = w_.ctx.stop.load(std::memory_order_relaxed);
  for (const Parked& r : parking_) {
    if (!stopping) {
      send_parked(r);
      continue;
    }
    --r.user->inflight;  // Ctrl-C came first: never sent again
    --w_.busy;
  }
  parking_.clear();
  waking_.swap(waiting_);
  for (User* u : waking_) u->send_held(now);
  for (User* u : waking_) u->refill(now);
  waking_.clear();
}

void Link::connect_failed(int64_t now) {
  close_socket();
  state_ = State::down;
  const int64_t max_ns = client_.options().reconnect_backoff_max_us * 1000;
  backoff_ns_ = next_backoff(backoff_ns_, max_ns);
  retry_at_ = now + backoff_ns_;
  if (w_.router) w_.router->want_refresh();  // a failed-over master's address is dead
  if (in_pool()) {  // the server, not only this socket, backs off: for every link of the worker
    Worker::PoolServer& s = w_.pool_server(server_);
    const bool was_up = s.backoff_ns == 0;
    s.probing = false;
    s.backoff_ns = next_backoff(s.backoff_ns, max_ns);
    s.retry_at = now + s.backoff_ns;
    if (was_up && client_.is_pool()) w_.pool_server_lost(client_, server_);
  }
  parking_.swap(parked_);
  for (const Parked& r : parking_) {
    record_reply(w_.ctx, r.p, OpStatus::error, {}, now);
    count(PoolCount::failed);
    r.user->done(now);
  }
  parking_.clear();
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
  parked_.clear();  // redirected, never sent again
  // Abandoned: the requests that (partly) left; those still in out_ never reached the store.
  while (!fifo_.empty()) {
    const Flight f = pop_flight();
    if (f.user && f.start < written_bytes_) f.user->client.count_abandoned(1);
  }
  // Shut down (a FIN after what was written), not closed: at Ctrl-C, a stopped store still
  // executes what reached it once it runs again (a close with replies unread would reset the
  // connection and drop them). The client closes the socket later.
  Handoff h;
  if (state_ == State::up || state_ == State::connecting) h = t_->release(true);
  close_socket();
  state_ = State::down;
  client_.give_fd(server_, h.fd);
}

void Link::release() {
  if (state_ == State::up && fifo_.empty() && !t_->writing() && out_.empty()) {
    Handoff h = t_->release(false);
    client_.give_fd(server_, h.fd);
    if (h.fd >= 0) client_.give_tls(server_, std::move(h.tls));
    return;
  }
  close_socket();
  client_.give_fd(server_, -1);
}

}  // namespace kv::drive::loop
