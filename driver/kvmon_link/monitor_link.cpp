#include "kvmon_link/monitor_link.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/usage_error.hpp"
#include "kvmon_link/clock_sync.hpp"
#include "kvmon_link/link_socket.hpp"
#include "kvmon_link/link_writer.hpp"
#include "kvmon_link/monitor_link_impl.hpp"

namespace kv::drive {

using namespace link_detail;  // NOLINT(google-build-using-namespace): its constants

void MonitorLink::Impl::run() {
  int64_t backoff = kMinBackoffUs;
  while (!stopping) {
    bool connected = false;
    const int64_t began = steady_us();
    Result<void> r = session(&connected);
    if (stopping) break;
    std::string why = r.ok() ? "link ended" : r.error().message;
    report_start(false, why);
    {
      std::lock_guard lock(mu);
      if (peer_dropped) break;  // said and recorded by take_row
    }
    // A session that served a while earns a quick reconnect; one that failed soon after its
    // hello (a peer that breaks every session the same way) keeps backing off.
    if (connected && steady_us() - began >= kHealthySessionUs) backoff = kMinBackoffUs;
    log_warn() << "monitor " << host_port << ": " << why << "; reconnecting in " << backoff / 1000
               << " ms";
    pause(backoff);
    backoff = std::min(backoff * 2, options.max_backoff_us);
  }
}

Result<Message> MonitorLink::Impl::expect(LinkSocket& sock, const char* verb) {
  auto end = steady_us() + int64_t{kReplyTimeoutMs} * 1000;
  while (!stopping && steady_us() < end) {
    const uint64_t received = sock.bytes_received();
    auto m = sock.next(kPollMs);
    if (!m) return m.error();
    if (auto r = take_bytes(sock.bytes_received() - received); !r) return r.error();
    if (!m.value()) continue;
    const Message& msg = *m.value();
    if (msg.verb == verb) return msg;
    if (msg.verb == "error") {
      return Error{"kvmon at " + host_port + " refused: " + msg.get_text("code") + ": " +
                   msg.get_text("msg")};
    }
  }
  return Error{std::string("no '") + verb + "' reply from kvmon at " + host_port};
}

Result<ClockEstimate> MonitorLink::Impl::measure(LinkSocket& sock) {
  ClockSync sync;
  for (int i = 0; i < kClockExchanges; ++i) {
    int64_t sent = now_ts_us(), sent_steady = steady_us();
    if (auto r = sock.send(Message("time").add("id", i)); !r) return r.error();
    auto reply = expect(sock, "time");
    if (!reply) return reply.error();
    int64_t rtt = steady_us() - sent_steady;
    auto server = reply.value().get_int("now_ts_us");
    if (!server) return Error{"kvmon sent a time reply without now_ts_us"};
    if (!plausible_ts_us(*server))
      return Error{"kvmon at " + host_port +
                   " sent an impossible time (now_ts_us=" + std::to_string(*server) + ")"};
    sync.add({sent, *server, now_ts_us(), rtt});
  }
  return *sync.best();
}

Result<void> MonitorLink::Impl::session(bool* connected) {
  auto sock = LinkSocket::connect(address.host, address.port, options.connect_timeout_ms);
  if (!sock) return sock.error();
  Message hello("hello");
  hello.add("v", proto::kVersion);
  if (!token.empty()) hello.add("token", token);
  if (auto r = sock.value().send(hello); !r) return r.error();
  auto reply = expect(sock.value(), "hello");
  if (!reply) return reply.error();
  auto est = measure(sock.value());
  if (!est) return est.error();
  *connected = true;
  const bool gap_said = adopt(reply.value(), est.value());
  report_start(true, "");

  Message sub("subscribe");
  if (last_tick_ts_us) sub.add("since_ts_us", *last_tick_ts_us);
  if (auto r = sock.value().send(sub); !r) return r.error();
  auto subscribed = expect(sock.value(), "subscribed");
  if (!subscribed) return subscribed.error();
  auto oldest = subscribed.value().get_int("oldest_ts_us").value_or(0);
  if (!gap_said && last_tick_ts_us && oldest > *last_tick_ts_us + remote_interval_us.load()) {
    push({LinkItem::Kind::gap,
          {},
          est.value(),
          "kvmon's history no longer reaches back to the last sample received: " +
              std::to_string((oldest - *last_tick_ts_us) / 1000) + " ms of samples are missing",
          *last_tick_ts_us + est.value().offset_us});
  }
  return stream(sock.value());
}

// Starts a new session row when kvmon is new or restarted (saying what is missing), else
// records the fresh clock estimate.
bool MonitorLink::Impl::adopt(const Message& hello, const ClockEstimate& est) {
  std::pair<int64_t, int64_t> id{hello.get_int("pid").value_or(0),
                                 hello.get_int("started_ts_us").value_or(0)};
  {
    std::lock_guard lock(mu);
    clock = est;
  }
  remote_interval_us = hello.get_int("interval_us").value_or(0);
  if (remote_id == id) {
    push({LinkItem::Kind::clock, {}, est, {}, 0});
    return false;
  }
  const bool restarted = remote_id && last_tick_ts_us;
  if (restarted) {
    int64_t oldest = hello.get_int("oldest_ts_us").value_or(0);
    std::string text = "kvmon on " + remote_host + " restarted (pid " +
                       std::to_string(remote_id->first) + ", now pid " + std::to_string(id.first) +
                       "); its history starts afresh: no samples "
                       "between " +
                       format_ts_us(*last_tick_ts_us + est.offset_us) + " and " +
                       format_ts_us(oldest + est.offset_us);
    log_warn() << "monitor " << host_port << ": " << text;
    push({LinkItem::Kind::gap, {}, est, text, *last_tick_ts_us + est.offset_us});
  }
  remote_id = id;
  remote_host = hello.get_text("host");
  instances.clear();
  push({LinkItem::Kind::session, hello, est, {}, 0});
  return restarted;
}

Result<void> MonitorLink::Impl::stream(LinkSocket& sock) {
  struct Streaming {  // for stop(until): a link that is down has nothing more to wait for
    Impl& impl;
    explicit Streaming(Impl& i) : impl(i) { set(true); }
    ~Streaming() { set(false); }
    void set(bool on) {
      std::lock_guard lock(impl.mu);
      impl.streaming = on;
      impl.cv.notify_all();
    }
  } streaming_now(*this);
  pending.clear();  // a tick cut short by the last link drop is sent again by the backfill
  pending_bytes = 0;
  new_instances_this_tick = 0;
  int64_t next_resync = steady_us() + options.resync_interval_us;
  ClockSync sync;
  bool syncing = false;
  int64_t sent = 0, sent_steady = 0;
  auto send_time = [&]() -> Result<void> {
    sent = now_ts_us();
    sent_steady = steady_us();
    return sock.send(Message("time").add("id", sync.count()));
  };
  while (!stopping) {
    if (!syncing && steady_us() >= next_resync) {
      syncing = true;
      sync.reset();
      if (auto r = send_time(); !r) return r;
    }
    const uint64_t received = sock.bytes_received();
    auto m = sock.next(kPollMs);
    if (!m) return m.error();
    if (auto r = take_bytes(sock.bytes_received() - received); !r) return r.error();
    if (!m.value()) continue;
    const Message& msg = *m.value();
    if (msg.verb == "tick") {
      const int64_t ts = msg.get_int("scheduled_ts_us").value_or(0);
      if (!plausible_ts_us(ts))
        return drop_peer("a tick at an impossible time (" + std::to_string(ts) + ")");
      commit_tick(ts);
    } else if (is_row(msg.verb)) {
      if (auto r = take_row(std::move(m).value().value()); !r) return r;
    } else if (msg.verb == "time" && syncing && msg.get_int("id") == sync.count()) {
      const int64_t server = msg.get_int("now_ts_us").value_or(0);
      if (!plausible_ts_us(server))
        return drop_peer("an impossible time (now_ts_us=" + std::to_string(server) + ")");
      sync.add({sent, server, now_ts_us(), steady_us() - sent_steady});
      if (!sync.done()) {
        if (auto r = send_time(); !r) return r;
        continue;
      }
      syncing = false;
      next_resync = steady_us() + options.resync_interval_us;
      std::lock_guard lock(mu);
      clock = *sync.best();
      queue.push_back({LinkItem::Kind::clock, {}, *clock, {}, 0});
    } else if (msg.verb == "error") {
      return Error{"kvmon: " + msg.get_text("code") + ": " + msg.get_text("msg")};
    }  // anything else: a newer kvmon's message, ignored
  }
  return {};
}

void MonitorLink::Impl::push(LinkItem item) {
  std::lock_guard lock(mu);
  queue.push_back(std::move(item));
}

void MonitorLink::Impl::report_start(bool ok, const std::string& error) {
  std::lock_guard lock(mu);
  if (start_state != Start::pending) return;
  start_state = ok ? Start::ok : Start::failed;
  start_error = error;
  cv.notify_all();
}

void MonitorLink::Impl::pause(int64_t us) {
  std::unique_lock lock(mu);
  cv.wait_for(lock, std::chrono::microseconds(us), [&] { return stopping.load(); });
}

MonitorLink::MonitorLink(std::string host_port, std::string token, bool optional,
                         MonitorLinkOptions options)
    : impl_(std::make_unique<Impl>(std::move(host_port), std::move(token), optional, options)) {}

MonitorLink::~MonitorLink() { stop(); }

void MonitorLink::start() {
  impl_->thread = std::thread([this] { impl_->run(); });
  std::unique_lock lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->start_state != Impl::Start::pending; });
  if (impl_->start_state == Impl::Start::ok) return;
  std::string error = impl_->start_error;
  lock.unlock();
  if (impl_->optional) {
    log_warn() << "monitor " << impl_->host_port << ": " << error
               << " (--monitor-optional: going on without it, retrying in the background)";
    return;
  }
  stop();
  throw std::runtime_error("--monitor " + impl_->host_port + ": " + error);
}

void MonitorLink::stop(std::optional<int64_t> until_ts_us) {
  if (!impl_->thread.joinable()) return;
  {
    std::unique_lock lock(impl_->mu);
    // The first tick at or after any moment is due within one interval; a second more for
    // its sampling, the network and clock error. Not for a kvmon sampling slower than 4 s.
    const int64_t wait_us = impl_->remote_interval_us + 1'000'000;
    if (until_ts_us && impl_->remote_interval_us > 0 && wait_us <= 5'000'000) {
      auto covered = [&] {
        if (!impl_->streaming || !impl_->clock) return true;  // down: nothing will come
        return impl_->last_tick_ts_us &&
               *impl_->last_tick_ts_us + impl_->clock->offset_us >= *until_ts_us;
      };
      if (!impl_->cv.wait_for(lock, std::chrono::microseconds(wait_us), covered)) {
        log_warn() << "monitor " << impl_->host_port << ": no sample after the end of the run "
                   << "within " << wait_us / 1000 << " ms; stopping without it";
      }
    }
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  impl_->thread.join();
  impl_->push({LinkItem::Kind::end, {}, {}, {}, 0});
}

std::vector<MonitorLink::Latest> MonitorLink::flush_into(kv::Database& db, size_t max_items) {
  std::deque<LinkItem> items;
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->queue.size() <= max_items) {
      items.swap(impl_->queue);
      impl_->queued_bytes = 0;
    } else {  // the rest waits for the next call: one call's work stays bounded
      for (size_t i = 0; i < max_items; ++i) {
        if (impl_->queue.front().kind == LinkItem::Kind::row) {
          impl_->queued_bytes -=
              std::min(impl_->queued_bytes, approx_bytes(impl_->queue.front().msg));
        }
        items.push_back(std::move(impl_->queue.front()));
        impl_->queue.pop_front();
      }
    }
  }
  while (!items.empty()) {
    size_t n = std::min(items.size(), kItemsPerTransaction);
    std::vector<LinkItem> chunk(std::make_move_iterator(items.begin()),
                                std::make_move_iterator(items.begin() + static_cast<long>(n)));
    try {
      impl_->writer.write(db, chunk);
    } catch (...) {
      // Put them back in order, before anything that arrived meanwhile.
      std::deque<LinkItem> back(std::make_move_iterator(chunk.begin()),
                                std::make_move_iterator(chunk.end()));
      for (size_t i = n; i < items.size(); ++i) back.push_back(std::move(items[i]));
      std::lock_guard lock(impl_->mu);
      for (LinkItem& item : impl_->queue) back.push_back(std::move(item));
      impl_->queue.swap(back);
      impl_->queued_bytes = 0;
      for (const LinkItem& item : impl_->queue) {
        if (item.kind == LinkItem::Kind::row) impl_->queued_bytes += approx_bytes(item.msg);
      }
      throw;
    }
    items.erase(items.begin(), items.begin() + static_cast<long>(n));
  }
  std::vector<Latest> out;
  for (auto& l : impl_->writer.latest()) out.push_back({l.name, l.rss_kib, l.swap_kib});
  return out;
}

const std::string& MonitorLink::host_port() const { return impl_->host_port; }

std::optional<MonitorLink::Clock> MonitorLink::clock() const {
  std::lock_guard lock(impl_->mu);
  if (!impl_->clock) return std::nullopt;
  return Clock{impl_->clock->offset_us, impl_->clock->uncertainty_us, impl_->clock->rtt_us};
}

}  // namespace kv::drive
