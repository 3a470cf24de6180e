// MonitorLink's insides, shared by monitor_link.cpp (the sessions: connect, clock, subscribe,
// stream, flush) and link_bounds.cpp (what a peer may send: rows per tick, processes, bytes,
// times; past a bound it is dropped). Internal to kvmon_link/.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kvbench/protocol.hpp"
#include "kvbench/result.hpp"
#include "kvbench/usage_error.hpp"
#include "kvmon_link/clock_sync.hpp"
#include "kvmon_link/link_socket.hpp"
#include "kvmon_link/link_writer.hpp"
#include "kvmon_link/monitor_link.hpp"

namespace kv::drive {
namespace link_detail {

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
inline size_t approx_bytes(const proto::Message& m) {
  size_t n = sizeof(proto::Message) + m.verb.size();
  for (const proto::Field& f : m.fields) n += sizeof(proto::Field) + f.key.size() + f.value.size();
  return n;
}

inline bool is_row(const std::string& verb) {
  return verb == "instance" || verb == "proc" || verb == "host" || verb == "disk" ||
         verb == "event";
}

}  // namespace link_detail

using proto::Message;

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
  double byte_tokens =
      link_detail::kMaxBurstBytes;  // what the peer may still send now (the bucket)
  int64_t tokens_at_us = 0;         // when the bucket was last filled (steady; 0: never)
  std::set<std::pair<int64_t, int64_t>> instances;  // (pid, start_ticks) of this remote session
  bool streaming = false;                           // subscribed and receiving ticks (under mu)

  // The flushing thread's own state.
  LinkWriter writer;
};

}  // namespace kv::drive
