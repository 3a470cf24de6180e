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

namespace kv::drive {
namespace {

using proto::Message;

constexpr int kReplyTimeoutMs = 5000;
constexpr int kPollMs = 200;  // how often the thread looks at the stop flag
constexpr size_t kItemsPerTransaction = 2000;
constexpr int64_t kMinBackoffUs = 100'000;
constexpr int64_t kHealthySessionUs = 10'000'000;
// An `event` row's text: kvmon's are a line; a longer one is a hostile peer's (250 KB event
// lines filled a results file at ~95 MB/s).
constexpr size_t kMaxEventTextBytes = 4096;
// What the link holds for the Database's owner: past either bound (the results file was not
// written for long, or a peer floods), a tick's rows are dropped with a monitor_gap event. A
// real kvmon sends tens of rows (about 1 KB each) a tick.
constexpr size_t kMaxQueuedItems = 100'000;
constexpr size_t kMaxQueuedBytes = 64u << 20;
// A peer that passes one of these is not a kvmon following a few stores: it is dropped, with a
// monitor_dropped event, and not reconnected (the run goes on without it).
constexpr size_t kMaxPendingRows = 10'000;  // rows of one tick before its `tick`
constexpr size_t kMaxPendingBytes = 16u << 20;
constexpr size_t kMaxNewInstancesPerTick = 256;
// Bytes a peer may send, as a token bucket over the whole link (every session): a real kvmon
// sends ~120 KB/s at its fastest (`--interval 10ms`, one target, measured) and, after an outage,
// a backfill of the ticks missed, at most its history (64 MiB of lines: the bucket holds 80). A
// peer beyond these is not a kvmon: what it sent would fill the results file (~95 MB/s was seen).
constexpr double kMaxBytesPerSecond = 4u << 20;
constexpr double kMaxBurstBytes = 80u << 20;
constexpr size_t kMaxInstancesPerSession = 10'000;

// About what a message holds in memory (its strings and their headers).
size_t approx_bytes(const Message& m) {
  size_t n = sizeof(Message) + m.verb.size();
  for (const proto::Field& f : m.fields) n += sizeof(proto::Field) + f.key.size() + f.value.size();
  return n;
}

bool is_row(const std::string& verb) {
  return verb == "instance" || verb == "proc" || verb == "host" || verb == "disk" ||
         verb == "event";
}

}  // namespace

struct MonitorLink::Impl {
  Impl(std::string hp, std::string tok, bool opt, MonitorLinkOptions o)
      : host_port(std::move(hp)),
        token(std::move(tok)),
        optional(opt),
        options(o),
        writer(host_port) {
    auto parsed = proto::split_host_port(host_port);
    if (!parsed) throw UsageError("--monitor " + host_port + ": " + parsed.error().message);
    address = parsed.value();
  }

  void run();
  Result<void> session(bool* connected);
  Result<Message> expect(LinkSocket& sock, const char* verb);
  Result<ClockEstimate> measure(LinkSocket& sock);
  Result<void> stream(LinkSocket& sock);
  void commit_tick(int64_t scheduled_ts_us);
  // True when it recorded a restart's gap (the history check after subscribe then says no more).
  bool adopt(const Message& hello, const ClockEstimate& clock);
  void push(LinkItem item);
  Result<void> take_row(Message msg);
  // Takes n bytes the peer sent from the bucket (refilled at kMaxBytesPerSecond up to
  // kMaxBurstBytes); drops the peer when it is empty.
  Result<void> take_bytes(uint64_t n);
  // Ends the session for good: the peer sent `why` (an unbounded or impossible thing); a
  // monitor_dropped event, and it is not reconnected.
  Result<void> drop_peer(const std::string& why);
  void report_start(bool ok, const std::string& error);
  void pause(int64_t us);

  // Fixed at construction.
  std::string host_port;
  proto::HostPort address;
  std::string token;
  bool optional;
  MonitorLinkOptions options;

  // Shared between the network thread and the others, under mu.
  std::mutex mu;
  std::condition_variable cv;
  std::deque<LinkItem> queue;
  size_t queued_bytes = 0;  // approx_bytes of the queue's rows
  size_t dropped_rows = 0;
  bool peer_dropped = false;  // a bound was passed: the link is over
  enum class Start { pending, ok, failed } start_state = Start::pending;
  std::string start_error;
  std::optional<ClockEstimate> clock;
  std::atomic<bool> stopping{false};
  std::thread thread;

  // The network thread's own state.
  std::optional<std::pair<int64_t, int64_t>> remote_id;  // kvmon's (pid, started_ts_us)
  std::string remote_host;
  std::atomic<int64_t> remote_interval_us{0};  // read by stop(until)
  std::optional<int64_t> last_tick_ts_us;  // kvmon's time of the last complete tick (set under mu)
  std::vector<Message> pending;            // rows of the tick being received
  size_t pending_bytes = 0;
  size_t new_instances_this_tick = 0;
  double byte_tokens = kMaxBurstBytes;  // what the peer may still send now (the bucket)
  int64_t tokens_at_us = 0;             // when the bucket was last filled (steady; 0: never)
  std::set<std::pair<int64_t, int64_t>> instances;  // (pid, start_ticks) of this remote session
  bool streaming = false;                           // subscribed and receiving ticks (under mu)

  // The flushing thread's own state.
  LinkWriter writer;
};

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

// A tick is complete: its rows go to the writer together, with the offset now in force.
void MonitorLink::Impl::commit_tick(int64_t scheduled_ts_us) {
  std::lock_guard lock(mu);
  last_tick_ts_us = scheduled_ts_us;
  new_instances_this_tick = 0;
  if (queue.size() > kMaxQueuedItems || queued_bytes > kMaxQueuedBytes) {
    dropped_rows += pending.size();
  } else {
    if (dropped_rows > 0) {
      queue.push_back({LinkItem::Kind::gap,
                       {},
                       *clock,
                       std::to_string(dropped_rows) +
                           " monitor rows dropped: the results file "
                           "was not written for too long or kvmon sent more than it can take",
                       now_ts_us()});
      dropped_rows = 0;
    }
    queued_bytes += pending_bytes;
    for (Message& m : pending) queue.push_back({LinkItem::Kind::row, std::move(m), *clock, {}, 0});
  }
  pending.clear();
  pending_bytes = 0;
  cv.notify_all();  // stop(until) may be waiting for this tick
}

// Keeps a row for its tick, or drops the peer (an error ends the session, and run() does not
// reconnect) when it passes a bound: rows without a tick, or instances beyond what any kvmon
// follows. Memory stays bounded and the run is never held up by it.
Result<void> MonitorLink::Impl::take_row(Message msg) {
  std::string why;
  if (msg.verb == "event") {
    for (const auto& f : msg.fields)
      if (f.value.size() > kMaxEventTextBytes)
        why = "an event whose " + f.key + " is " + std::to_string(f.value.size() >> 10) +
              " KiB (limit " + std::to_string(kMaxEventTextBytes) + " bytes)";
  }
  for (const char* field : {"ts_us", "scheduled_ts_us", "started_ts_us", "first_seen_ts_us"}) {
    if (!msg.has(field)) continue;
    const auto ts = msg.get_int(field);
    if (!ts || !plausible_ts_us(*ts)) {
      why = "a " + msg.verb + " row with an impossible " + field + " (" + msg.get_text(field) + ")";
      break;
    }
  }
  if (msg.verb == "instance") {
    auto pid = msg.get_int("pid"), ticks = msg.get_int("start_ticks");
    if (pid && ticks && instances.emplace(*pid, *ticks).second) {
      if (++new_instances_this_tick > kMaxNewInstancesPerTick) {
        why = "more than " + std::to_string(kMaxNewInstancesPerTick) + " new processes in one tick";
      } else if (instances.size() > kMaxInstancesPerSession) {
        why = "more than " + std::to_string(kMaxInstancesPerSession) + " processes in one session";
      }
    }
  }
  pending_bytes += approx_bytes(msg);
  pending.push_back(std::move(msg));
  if (why.empty() && (pending.size() > kMaxPendingRows || pending_bytes > kMaxPendingBytes)) {
    why = std::to_string(pending.size()) + " rows (" + std::to_string(pending_bytes >> 10) +
          " KiB) without a tick (limit " + std::to_string(kMaxPendingRows) + " rows, " +
          std::to_string(kMaxPendingBytes >> 20) + " MiB)";
  }
  if (why.empty()) return {};
  return drop_peer(why);
}

Result<void> MonitorLink::Impl::take_bytes(uint64_t n) {
  if (n == 0) return {};
  const int64_t now = steady_us();
  const double refill = kMaxBytesPerSecond * static_cast<double>(now - tokens_at_us) / 1e6;
  if (tokens_at_us != 0) byte_tokens = std::min(kMaxBurstBytes, byte_tokens + refill);
  tokens_at_us = now;
  byte_tokens -= static_cast<double>(n);
  if (byte_tokens >= 0) return {};
  std::string why = "more than ";
  why += std::to_string(static_cast<int64_t>(kMaxBurstBytes) >> 20);
  why += " MiB at once or ";
  why += std::to_string(static_cast<int64_t>(kMaxBytesPerSecond) >> 20);
  why += " MiB/s for long";
  return drop_peer(why);
}

Result<void> MonitorLink::Impl::drop_peer(const std::string& why) {
  std::string text = "kvmon at " + host_port + " dropped: it sent " + why +
                     "; its samples from here on are missing and it is not reconnected";
  log_warn() << "monitor " << host_port << ": " << text;
  pending.clear();
  pending.shrink_to_fit();
  pending_bytes = 0;
  std::lock_guard lock(mu);
  peer_dropped = true;
  queue.push_back(
      {LinkItem::Kind::dropped, {}, clock.value_or(ClockEstimate{}), text, now_ts_us()});
  return Error{text};
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
