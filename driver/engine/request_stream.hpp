// What the event loop (loop/event_worker.cpp) asks of a request stream: which op and key
// request i of a stream is, how many requests a stream sends, its rate-mode send times, and how
// a finished request is recorded. A "stream" is one connection: index / count place it among
// every stream of the phase, over every process of a --processes group.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "engine/pacer.hpp"
#include "engine/worker.hpp"
#include "workload/key_chooser.hpp"

namespace kv::drive {

inline constexpr int64_t kLateNs = 1'000'000;  // a send more than 1 ms behind schedule is late

// Decides the op and key of request i of one stream.
class RequestPicker {
 public:
  RequestPicker(const WorkerContext& ctx, uint64_t index, uint64_t count)
      : w_(ctx.workload),
        kind_(ctx.plan.kind),
        key_begin_(w_.keys * index / count),
        key_end_(w_.keys * (index + 1) / count),
        rate_mode_(ctx.plan.rate > 0 && ctx.plan.kind != PhaseKind::load),
        first_(rate_mode_ ? index : ctx.plan.requests * index / count),
        stride_(rate_mode_ ? count : 1),
        chooser_(w_.pattern, w_.keys, key_begin_, key_end_, w_.hit_rate, w_.seed * 7919 + index) {
    chooser_of_.fill(-1);
    if (kind_ != PhaseKind::mixed) return;
    for (const MixEntry& e : w_.op_mix()) {
      if (e.weight == 0) continue;
      cycle_ += e.weight;
      mix_[mix_size_++] = {e.op, cycle_};
    }
    // An op with a key pattern of its own (--mix-key-pattern, --command-key-pattern) picks its
    // keys apart (a --command's with hit rate 1: its keys are the written ones); an mget's are
    // its get's.
    size_t own = 0;
    for (const CommandTemplate& c : w_.commands) own += c.pattern_given;
    for (const auto& pattern : w_.mix_patterns) own += pattern.has_value();
    choosers_.reserve(own);
    const uint64_t seed = w_.seed * 7919 + index;
    for (size_t i = 0; i < w_.commands.size(); ++i)
      if (w_.commands[i].pattern_given)
        add_chooser(command_op(i), w_.commands[i].pattern, 1.0,
                    seed ^ ((i + 1) * 0x9e3779b97f4a7c15));
    for (size_t i = 0; i < kBuiltinOps; ++i)
      if (const auto& pattern = w_.mix_patterns[i])
        add_chooser(static_cast<OpType>(i), *pattern, w_.hit_rate,
                    seed ^ ((kMaxCommands + 1 + i) * 0x9e3779b97f4a7c15));
    if (const int8_t g = chooser_of_[static_cast<size_t>(OpType::get)]; g >= 0)
      chooser_of_[static_cast<size_t>(OpType::mget)] = g;
  }
  explicit RequestPicker(const WorkerContext& ctx) : RequestPicker(ctx, ctx.index, ctx.count) {}

  // False when a load phase has set all of this stream's keys (and counter keys).
  bool pick(uint64_t i, OpType* op, uint64_t* key) {
    if (kind_ == PhaseKind::load) {
      *op = OpType::set;
      const uint64_t n = key_end_ - key_begin_;
      if (i < n) {
        *key = key_begin_ + i;
        return true;
      }
      *key = (key_begin_ + i - n) | kCounterKey;
      return w_.uses_counters() && i < 2 * n;
    }
    if (kind_ == PhaseKind::read) {
      *op = w_.get_op();
      *key = chooser_.next_get();
      return true;
    }
    // The op by the request's place in the whole phase (see stream_share), not in this
    // stream: the phase's count of each is exact however many streams share it.
    const uint64_t at = (first_ + i * stride_) % cycle_;
    size_t k = 0;
    while (at >= mix_[k].end) ++k;
    *op = mix_[k].op;
    KeyChooser& c = chooser_for(*op);
    if (*op == OpType::get || *op == OpType::mget)
      *key = c.next_get();
    else
      *key = op_on_counter(*op) ? c.next_set() | kCounterKey : c.next_set();
    return true;
  }
  // An mget's further keys (its first is pick's): each a get's, as its key pattern and the hit
  // rate choose them.
  uint64_t next_get_key() {
    return kind_ == PhaseKind::mixed ? chooser_for(OpType::mget).next_get() : chooser_.next_get();
  }
  // An mset's further keys: each a set's.
  uint64_t next_set_key() { return chooser_for(OpType::mset).next_set(); }

 private:
  const WorkloadSpec& w_;
  PhaseKind kind_;
  uint64_t key_begin_, key_end_;
  // Mixed phases: request `at` of each cycle_ is the first op whose end exceeds it.
  struct Slice {
    OpType op;
    uint64_t end;
  };
  std::array<Slice, kOpTypes> mix_{};
  size_t mix_size_ = 0;
  uint64_t cycle_ = 0;
  bool rate_mode_;
  uint64_t first_, stride_;  // request i of this stream is request first_ + i * stride_
  KeyChooser chooser_;
  // The ops with key choosers of their own: op → its index in choosers_ (-1: chooser_'s).
  std::vector<KeyChooser> choosers_;  // reserved once: never reallocated
  std::array<int8_t, kOpTypes> chooser_of_;
  void add_chooser(OpType op, const KeyPattern& pattern, double hit_rate, uint64_t seed) {
    chooser_of_[static_cast<size_t>(op)] = static_cast<int8_t>(choosers_.size());
    choosers_.emplace_back(pattern, w_.keys, key_begin_, key_end_, hit_rate, seed);
  }
  KeyChooser& chooser_for(OpType op) {
    const int8_t i = chooser_of_[static_cast<size_t>(op)];
    return i < 0 ? chooser_ : choosers_[static_cast<size_t>(i)];
  }
};

// What a stream needs to finish a request after its reply arrived.
struct Pending {
  uint64_t key;
  uint64_t bytes_out;
  int64_t queued_ns;    // when it was handed to the client: where its latency starts
  int64_t intended_ns;  // rate mode: its send time on the schedule; else 0
  // Rate mode: of intended -> queued, the time its connection's --pipeline window was full
  // (waiting for the store's replies, whichever request was at the head then); else 0.
  int64_t queue_ns;
  uint32_t value_size;  // of a request that carries a value: the workload's size for the key,
  uint32_t ttl_s;       // and its TTL (a replay: the recorded ones)
  OpType op;
  uint8_t key_size;  // a replay: the recorded key size (0: the workload's, KeyFormatter's)
  // cas: the unique a gets of this connection returned for `key`, or kNoCasUnique
  uint64_t cas;
  uint16_t key_count;  // an mget, an mset: the keys it carries (`key` the first), set as it leaves
};
// A cas with no gets of its key to take a unique from: no item ever has it (memcached numbers
// them from 1), so the store answers EXISTS (or NOT_FOUND), as to a client whose unique is stale.
inline constexpr uint64_t kNoCasUnique = UINT64_MAX;

// The value a request of `p` carries: none (get, delete, incr, decr, touch), "0" for a counter
// key (set by a load phase; a replay's append to one adds nothing, keeping it a number: Redis's
// INCR refuses "00"), else the key's value (a --command's where it has __data__).
inline std::string_view value_of(const WorkerContext& ctx, const Pending& p) {
  if (op_is_command(p.op))  // its __data__ placeholders' value
    return ctx.workload.commands[command_index(p.op)].uses_data
               ? ctx.values.value_for(p.key, p.value_size)
               : std::string_view();
  if (!op_has_value(p.op)) return {};
  if (p.key & kCounterKey)
    return p.op == OpType::append || p.op == OpType::prepend ? std::string_view() : "0";
  return ctx.values.value_for(p.key, p.value_size);
}

// Where a request was on its way, beside its Pending's times (0: not known).
struct Stamps {
  int64_t sent_ns = 0;     // the send call that took its last byte began
  int64_t arrived_ns = 0;  // the kernel received the last segment of the read with its reply
};

// The parts of one request's latency (each >= 0; they add up to latency_ns when all known):
//   queue        of due -> sent, the time its connection's --pipeline window was full (the
//                store's: the replies that would free a slot had not come), rate mode only
//   client_send  the rest of due -> sent: kvdrive's own delay before its send call (waking
//                late, a descheduled thread, batching)
//   wire         sent -> arrived: the kernel's send path, the network both ways, the store's
//                queueing and execution
//   client_recv  arrived -> read: kvdrive's receive path (waking, the read, decoding)
// where due is the intended send time in rate mode, else when the request was queued.
inline void split_latency(const Pending& p, const Stamps& s, int64_t done_ns, RequestRecord* r) {
  if (s.sent_ns == 0) return;
  const int64_t due = p.intended_ns != 0 ? p.intended_ns : p.queued_ns;
  const int64_t sent = std::max(s.sent_ns, due);
  const int64_t queue = std::clamp<int64_t>(p.queue_ns, 0, sent - due);
  r->parts |= RequestRecord::kSendKnown;
  r->client_send_ns = static_cast<uint64_t>(sent - due - queue);
  if (p.intended_ns != 0) r->queue_ns = static_cast<uint64_t>(queue);
  if (s.arrived_ns == 0) return;
  const int64_t arrived = std::clamp(s.arrived_ns, sent, std::max(done_ns, sent));
  r->parts |= RequestRecord::kArrivalKnown;
  r->wire_ns = static_cast<uint64_t>(arrived - sent);
  r->client_recv_ns = static_cast<uint64_t>(std::max(done_ns, sent) - arrived);
}

// Latency runs from the moment the request was queued for sending (its intended send time in
// rate mode) to its reply, in every mode: pipelined requests count the time their batch waited
// to be flushed and the replies ahead of theirs, so --pipeline 16 compares with --pipeline 1.
// An mget's answer: `found` of its keys (values of `bytes` in all).
inline void record_reply(const WorkerContext& ctx, const Pending& p, OpStatus st,
                         std::string_view value, int64_t done_ns, const Stamps& stamps = {},
                         uint32_t found = 0, uint64_t bytes = 0) {
  if (st == OpStatus::interrupted) return;  // given up at Ctrl-C: not a completed request
  RequestRecord r{};
  r.status = st;
  r.bytes_out = p.bytes_out;
  if (p.op == OpType::mget && (st == OpStatus::hit || st == OpStatus::miss)) {
    r.status = OpStatus::ok;  // its hits and misses are its keys'
    r.keys = p.key_count;
    r.key_hits = std::min(found, r.keys);
    r.bytes_in = bytes;
  }
  if ((p.op == OpType::get || p.op == OpType::gets) && st == OpStatus::hit) {
    r.bytes_in = value.size();
    if (ctx.workload.verify)
      r.wrong = value != ctx.values.value_for(p.key, ctx.workload.values.size_for(p.key));
  }
  r.sent_latency_ns = static_cast<uint64_t>(done_ns - p.queued_ns);
  if (p.intended_ns != 0) {
    const int64_t slip = std::max<int64_t>(p.queued_ns - p.intended_ns, 0);
    r.slip_ns = static_cast<uint64_t>(slip);
    r.latency_ns = static_cast<uint64_t>(done_ns - p.intended_ns);
    r.late = slip > kLateNs;
  } else {
    r.latency_ns = r.sent_latency_ns;
  }
  if (st != OpStatus::timeout && st != OpStatus::error) split_latency(p, stamps, done_ns, &r);
  ctx.slot.record(p.op, r);
}

inline bool should_stop(const WorkerContext& ctx) {
  return ctx.stop.load(std::memory_order_relaxed) || ctx.abort.load(std::memory_order_relaxed);
}

// No new request at `now`: Ctrl-C, or the phase is over — except that an abort which may be
// the duration's end of a rate-mode phase (abort_may_be_duration_end) lets the requests due
// before end_ns still go out, up to `late_ns` past it, so the phase sends its whole schedule.
inline bool stop_sending(const WorkerContext& ctx, int64_t end_ns, int64_t now,
                         int64_t late_ns = kEndGraceNs) {
  if (ctx.stop.load(std::memory_order_relaxed)) return true;
  if (!ctx.abort.load(std::memory_order_relaxed)) return false;
  return !abort_may_be_duration_end(ctx.plan.open_loop(), end_ns, now, late_ns);
}

// A stream's number of requests. Load phases: exactly its key range. Rate mode: request g of
// the phase (over every stream of every process) is due at g / rate and stream s sends
// g = s, s + count, ..., so a phase with fewer requests than streams still keeps the rate.
inline uint64_t stream_share(const WorkerContext& ctx, uint64_t index, uint64_t count) {
  const uint64_t total = ctx.plan.requests;
  if (total == 0) return UINT64_MAX;  // the phase ends by duration
  if (ctx.plan.rate > 0 && ctx.plan.kind != PhaseKind::load)
    return index < total ? (total - index - 1) / count + 1 : 0;
  if (ctx.plan.kind == PhaseKind::load) {
    // Its keys (and as many counter keys when the phase sets those too): RequestPicker's range.
    const uint64_t keys = ctx.workload.keys;
    return (ctx.workload.uses_counters() ? 2 : 1) *
           (keys * (index + 1) / count - keys * index / count);
  }
  return total * (index + 1) / count - total * index / count;
}

inline int64_t phase_end_ns(const WorkerContext& ctx) {
  return ctx.plan.duration_us > 0 ? ctx.start_ns + ctx.plan.duration_us * 1000 : INT64_MAX;
}

// Rate mode: a stream's send times, one period (count / rate) apart, offset by its index
// within the period so that the streams do not send in lockstep; 0 outside rate mode.
class Schedule {
 public:
  Schedule(const WorkerContext& ctx, uint64_t index, uint64_t count)
      : start_ns_(ctx.start_ns),
        period_ns_(ctx.plan.rate > 0 ? 1e9 * static_cast<double>(count) / ctx.plan.rate : 0),
        offset_ns_(period_ns_ * static_cast<double>(index) / static_cast<double>(count)) {}
  explicit Schedule(const WorkerContext& ctx) : Schedule(ctx, ctx.index, ctx.count) {}
  bool on() const noexcept { return period_ns_ > 0; }
  int64_t at(uint64_t i) const noexcept {
    return on() ? start_ns_ + static_cast<int64_t>(offset_ns_ + static_cast<double>(i) * period_ns_)
                : 0;
  }

 private:
  int64_t start_ns_;
  double period_ns_, offset_ns_;
};

}  // namespace kv::drive
