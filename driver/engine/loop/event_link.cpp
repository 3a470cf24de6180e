#include "engine/loop/event_link.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_loop.hpp"
#include "engine/loop/event_user.hpp"

namespace kv::drive::loop {
namespace {

OpStatus status_of(st::Verdict v, OpType op) {
  switch (v) {
    case st::Verdict::ok:  // a cas stored: its hit (memcached's cas_hits)
      return op == OpType::cas ? OpStatus::hit : OpStatus::ok;
    case st::Verdict::hit:
      return OpStatus::hit;
    case st::Verdict::miss:
      return OpStatus::miss;
    case st::Verdict::not_stored:  // add, replace, append, prepend refused: their miss
      return op_is_conditional_store(op) ? OpStatus::miss : OpStatus::error;
    default:
      return OpStatus::error;  // refused (not stored, an error reply) or out of step
  }
}

}  // namespace

Link::Link(Worker& w, EventClient& c, size_t server, size_t depth)
    : w_(w),
      client_(c),
      server_(server),
      codec_(c.spec().protocol == Protocol::redis ? Wire::resp
             : c.spec().binary_protocol           ? Wire::binary
                                                  : Wire::text,
             &w.ctx.workload.commands),
      t_(w.make_transport(c, server, *this)),
      split_(c.spec().split_writes),
      // A cluster node's link may also carry an ASKING before each redirected request.
      fifo_(c.spec().cluster ? 2 * depth + 4 : depth + 4) {
  out_.reserve(4096);
}

void Link::mark_dirty() {
  if (dirty_) return;
  dirty_ = true;
  w_.dirty(this);
}

void Link::watch() {
  if (watched_) return;
  watched_ = true;
  w_.watch(this);
}

void Link::send(User* u, const Pending& p, std::string_view key, std::string_view value,
                uint8_t redirects) {
  const size_t before = out_.size();
  const bool ok = p.op == OpType::mset ? codec_.append_mset(out_, key, u->multi_values)
                                       : codec_.append(out_, p.op, key, value, p.ttl_s, p.cas);
  if (!ok) {
    // A key the protocol cannot carry: refused before sending, as libmemcached refuses it.
    boost::asio::post(w_.io, [u, p, this] {
      record_reply(w_.ctx, p, OpStatus::error, {}, w_.now());
      count(PoolCount::failed_fast);
      u->done(w_.now());
    });
    return;
  }
  if (split_ && op_has_value(p.op)) {
    // Where the value begins: the command line (header) before it is one send(), the value
    // (with what follows it) the next.
    splits_.push_back(queued_bytes_ + codec_.set_head(p.op, out_.size() - before, key, value));
  }
  const uint64_t start = queued_bytes_;
  queued_bytes_ += out_.size() - before;
  fifo_.push(Flight{u, p, Codec::reply_kind(p.op), start, queued_bytes_, 0, redirects});
  watch();
  mark_dirty();
}

void Link::append_asking(int64_t queued_ns) {
  Flight f;  // no user: a refused ASKING fails the link, as a refused handshake
  f.p.queued_ns = queued_ns;
  f.start = queued_bytes_;
  const size_t before = out_.size();
  st::resp::append_array_header(out_, 1);
  st::resp::append_bulk(out_, "ASKING");
  queued_bytes_ += out_.size() - before;
  f.end = queued_bytes_;
  fifo_.push(f);
}

void Link::send_parked(const Parked& r) {
  if (r.asking) append_asking(r.p.queued_ns);
  Pending p = r.p;
  const std::string_view keys = r.user->request_keys(p);
  send(r.user, p, keys, value_of(w_.ctx, p), r.redirects);
}

void Link::count(PoolCount c) { w_.ctx.slot.add_pool(server_, c); }

bool Link::in_pool() const noexcept { return client_.servers() > 1 || w_.router != nullptr; }

void Link::park(User* u, const Pending& p, int64_t now) {
  parked_.push_back(Parked{u, p, false, 0});
  if (state_ == State::down) start_connect(now);
}

void Link::resend(User* u, const Pending& p, bool asking, uint8_t redirects, int64_t now) {
  const Parked r{u, p, asking, redirects};
  switch (state_) {
    case State::up:
      send_parked(r);
      return;
    case State::down:
      if (now < retry_at_) {  // its node is down and not to be retried yet
        record_reply(w_.ctx, p, OpStatus::error, {}, now);
        u->done(now);
        return;
      }
      parked_.push_back(r);
      start_connect(now);
      return;
    case State::connecting:
      parked_.push_back(r);
      return;
  }
}

void Link::flush() {
  dirty_ = false;
  if (state_ != State::up || t_->writing() || out_.empty()) return;
  if (split_) {
    flush_split();
    return;
  }
  if (t_->write(out_, false) < 0) {
    fail(OpStatus::error, w_.now());
    return;
  }
  out_.clear();
}

Flight Link::pop_flight() {
  Flight f = fifo_.front();
  fifo_.pop();
  if (sent_marked_ > 0) --sent_marked_;
  if (tx_marked_ > 0) --tx_marked_;
  return f;
}

void Link::flush_split() {
  // out_ begins at written_bytes_: nothing is being written (flush).
  const uint64_t base = written_bytes_;
  const std::string_view out = out_;
  size_t off = 0;
  while (off < out.size()) {
    while (!splits_.empty() && splits_.front() <= base + off) splits_.pop_front();
    const size_t end = !splits_.empty() && splits_.front() < base + out.size()
                           ? splits_.front() - base
                           : out.size();
    const ptrdiff_t n = t_->write(out.substr(off, end - off), true);
    if (n < 0) {
      fail(OpStatus::error, w_.now());
      return;
    }
    off += static_cast<size_t>(n);
    if (off < end) break;  // the socket's buffer is full
  }
  // The rest goes out when the socket drains (in one piece, even when split); commands queued
  // meanwhile wait in out_ for the next flush.
  if (off < out.size() && t_->write(out.substr(off), false) < 0) {
    fail(OpStatus::error, w_.now());
    return;
  }
  out_.clear();
}

// Every whole reply the codec holds, each judged for the oldest request in flight, until it
// needs more bytes or nothing is in flight.
bool Link::decode(std::string_view bytes, int64_t now, int64_t arrived) {
  if (fifo_.empty() || !codec_.feed(bytes)) {  // bytes nobody asked for: out of step
    fail(OpStatus::error, now);
    return false;
  }
  while (!fifo_.empty()) {
    const st::Op op = fifo_.front().op;
    st::Verdict v{};
    std::string_view value;
    const st::ReadStatus s = codec_.next(op, &v, &value);
    if (s == st::ReadStatus::need_more) break;
    if (s == st::ReadStatus::protocol_error) {
      fail(OpStatus::error, now);
      return false;
    }
    if (!complete(out_of_step(codec_.buffered(), v), value, now, arrived)) return false;
  }
  return true;
}

// The reply to the last request in flight, followed by bytes no request asked for: the stream
// is out of step, so this reply may not be that request's either.
st::Verdict Link::out_of_step(size_t buffered, st::Verdict v) const {
  return fifo_.size() == 1 && buffered > 0 ? st::Verdict::mismatch : v;
}

bool Link::complete(st::Verdict v, std::string_view value, int64_t now, int64_t arrived) {
  const Flight f = pop_flight();
  const bool out_of_step = v == st::Verdict::mismatch;
  if (!f.user) {  // a handshake reply: AUTH or SELECT refused, the connection is of no use
    if (v == st::Verdict::error || out_of_step) {
      fail(OpStatus::error, now);
      return false;
    }
    return true;
  }
  if (v == st::Verdict::error && w_.router) {  // a Redis Cluster's MOVED / ASK: sent again
    if (value.rfind("CLUSTERDOWN", 0) == 0 || value.rfind("TRYAGAIN", 0) == 0)
      w_.router->want_refresh();  // mid-failover: the map is changing
    const auto a = w_.router->on_error(value);
    if (a.kind != st::ClusterRouter::Action::Kind::none) {
      f.user->redirect(f.p, a.node, a.kind == st::ClusterRouter::Action::Kind::retry_asking,
                       f.redirects, now);
      return true;
    }
  }
  // The split of its time: known when it left on this link at first asking (a redirected
  // request's earlier hops are in none of the parts) and, for the wire, its reply was stamped.
  const Stamps stamps = f.redirects == 0 ? Stamps{f.sent_ns, arrived} : Stamps{};
  if (w_.ctx.workload.wire_start_kernel && f.redirects == 0)
    ++(f.kernel_sent ? w_.kernel_sent : w_.call_sent);
  const OpStatus status = status_of(v, f.p.op);
  const Codec::Multi multi = codec_.last_multi();
  record_reply(w_.ctx, f.p, status, value, now, stamps, multi.found, multi.bytes);
  if (status == OpStatus::miss && f.p.op == OpType::get && w_.ctx.workload.cache_aside)
    f.user->backfill(f.p.key);
  if (status == OpStatus::hit && f.p.op == OpType::gets)
    f.user->remember_cas(f.p.key, codec_.last_cas());
  count(PoolCount::answered);
  if (w_.router && v != st::Verdict::error && !out_of_step)
    w_.note_answer(client_.spec().servers[server_]);
  f.user->done(now, arrived);
  if (out_of_step) {
    fail(OpStatus::error, now);
    return false;
  }
  return true;
}

}  // namespace kv::drive::loop
