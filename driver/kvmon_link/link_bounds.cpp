// What a --monitor peer may send (docs/protocol.md, "What kvdrive takes from a peer"): a
// tick's rows held until its `tick`, bounded in rows, bytes, processes and times, and the
// link's bytes held to a bucket; past a bound the peer is dropped, never reconnected.
#include <algorithm>
#include <cstdint>
#include <string>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvmon_link/monitor_link_impl.hpp"

namespace kv::drive {

using namespace link_detail;  // NOLINT(google-build-using-namespace): its constants

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

}  // namespace kv::drive
