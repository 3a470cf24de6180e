// Per-operation counters and latency, recorded by one worker and handed to the collector once
// per second through a double buffer (the only shared state on the request path: one
// uncontended lock per request).
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/histogram.hpp"
#include "kvbench/op_type.hpp"
#include "store/op_status.hpp"

namespace kv::drive {

using kv::command_op;
using kv::kOpTypes;
using kv::op_name;
using kv::OpType;

// The operations (kvbench/op_type.hpp), each with its own OpStats.
inline constexpr std::array<OpType, kOpTypes> kAllOps = {
    OpType::set,      OpType::get,     OpType::del,    OpType::incr,    OpType::decr,
    OpType::add,      OpType::replace, OpType::append, OpType::prepend, OpType::touch,
    OpType::backfill, OpType::gets,    OpType::cas,    OpType::mget,    OpType::mset,
    command_op(0),    command_op(1),   command_op(2),  command_op(3),   command_op(4),
    command_op(5),    command_op(6),   command_op(7)};

// One completed request, as a worker measured it.
struct RequestRecord {
  OpStatus status;
  uint64_t latency_ns;       // from the intended send time in rate mode, else from the send
  uint64_t sent_latency_ns;  // from the actual send (equal to latency_ns outside rate mode)
  uint64_t bytes_out;
  uint64_t bytes_in;
  bool wrong;        // a get whose value differed from what was written
  bool late;         // rate mode: sent more than 1 ms behind its schedule
  uint64_t slip_ns;  // rate mode: actual send - intended send (schedule slip); else 0
  // Its latency's parts (engine/request_stream.hpp split_latency): client_send (and queue, in
  // rate mode) when it is known when it left; wire and client_recv when its reply's arrival
  // was stamped by the kernel.
  static constexpr uint8_t kSendKnown = 1, kArrivalKnown = 2;
  uint8_t parts = 0;
  uint64_t queue_ns = 0, client_send_ns = 0, wire_ns = 0, client_recv_ns = 0;
  // An answered mget: the keys it asked for and those found (its hits and misses count keys,
  // as the stores' get_hits / keyspace_hits do); 0 for every other request.
  uint32_t keys = 0, key_hits = 0;
};

// Where the time went, by latency: the requests whose every part is known, in bins of their
// end-to-end latency (half powers of two: 1.41x wide), each bin holding the count and the sums
// of each part. The mean parts of the bin that holds a percentile add up to the latency there:
// "of the p99's 926 ms, 925 ms were kvdrive's". Small (76 bins, 3 KB) and exact to merge.
struct PartBins {
  static constexpr int kBins = 76;
  struct Bin {
    uint64_t count = 0;
    uint64_t latency_ns = 0, queue_ns = 0, client_send_ns = 0, wire_ns = 0, client_recv_ns = 0;
  };
  std::array<Bin, kBins> bins{};

  // The bin of a latency: 2 per power of two (the bit below the top one), 0 for 0 ns.
  static int bin_of(uint64_t ns) noexcept {
    if (ns < 2) return static_cast<int>(ns);
    const int top = 63 - __builtin_clzll(ns);
    const int half = static_cast<int>((ns >> (top - 1)) & 1);
    const int b = 2 * top + half;
    return b < kBins ? b : kBins - 1;
  }
  // The largest latency of bin b (the upper bound of the values bin_of puts there).
  static uint64_t bin_upper_ns(int b) noexcept;
  void record(uint64_t latency_ns, uint64_t queue, uint64_t send, uint64_t wire,
              uint64_t recv) noexcept {
    Bin& x = bins[static_cast<size_t>(bin_of(latency_ns))];
    ++x.count;
    x.latency_ns += latency_ns;
    x.queue_ns += queue;
    x.client_send_ns += send;
    x.wire_ns += wire;
    x.client_recv_ns += recv;
  }
  void merge(const PartBins& o) noexcept;
  uint64_t count() const noexcept;
  // The bin holding rank ceil(q * count) (q in (0, 1]); nullptr when empty.
  const Bin* at_quantile(double q) const noexcept;
};

struct OpStats {
  uint64_t ops = 0;
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  uint64_t hits = 0;  // requests (an mget's: keys) that found / did not find their key
  uint64_t misses = 0;
  uint64_t errors = 0;
  uint64_t timeouts = 0;
  uint64_t wrong = 0;
  uint64_t late = 0;
  // Rate mode: requests due before the phase's end that never left (engine/loop User::drop_due):
  // not in ops; ops + dropped = the requests due.
  uint64_t dropped = 0;
  LatencyHistogram latency;       // every completed request, whatever its outcome
  LatencyHistogram sent_latency;  // rate mode only: from the actual send time
  LatencyHistogram slip;          // rate mode only: intended -> actual send of each request
  // The parts of `latency` (RequestRecord), of the answered requests whose parts are known:
  // queue (rate mode only) and client_send when known when it left, wire and client_recv when
  // its reply's arrival was stamped. `unsplit` answered requests had no arrival stamp.
  LatencyHistogram queue, client_send, wire, client_recv;
  uint64_t unsplit = 0;
  PartBins part_bins;  // the fully split requests, by latency

  // Requests that got an answer (ok, hit or miss): what req/s counts.
  uint64_t ok() const noexcept { return ops - errors - timeouts; }
  uint64_t failed() const noexcept { return errors + timeouts; }

  void record(const RequestRecord& r, bool rate_mode) noexcept {
    ++ops;
    bytes_out += r.bytes_out;
    bytes_in += r.bytes_in;
    wrong += r.wrong;
    late += r.late;
    if (r.keys > 0) {  // an mget's keys
      hits += r.key_hits;
      misses += r.keys - r.key_hits;
    }
    switch (r.status) {
      case OpStatus::hit:
        ++hits;
        break;
      case OpStatus::miss:
        ++misses;
        break;
      case OpStatus::error:
        ++errors;
        break;
      case OpStatus::timeout:
        ++timeouts;
        break;
      case OpStatus::ok:
        break;
      case OpStatus::interrupted:
        break;  // never recorded (record_reply drops them)
    }
    latency.record(r.latency_ns);
    if (rate_mode) {
      sent_latency.record(r.sent_latency_ns);
      slip.record(r.slip_ns);
    }
    record_parts(r, rate_mode);
  }
  void record_parts(const RequestRecord& r, bool rate_mode) noexcept {
    if (r.status == OpStatus::error || r.status == OpStatus::timeout) return;
    if (r.parts & RequestRecord::kSendKnown) {
      client_send.record(r.client_send_ns);
      if (rate_mode) queue.record(r.queue_ns);
    }
    if (r.parts & RequestRecord::kArrivalKnown) {
      wire.record(r.wire_ns);
      client_recv.record(r.client_recv_ns);
      if (r.parts & RequestRecord::kSendKnown)
        part_bins.record(r.latency_ns, r.queue_ns, r.client_send_ns, r.wire_ns, r.client_recv_ns);
    } else {
      ++unsplit;
    }
  }
  void merge(const OpStats& o) noexcept;
  void reset() noexcept { *this = OpStats(); }
  // Nothing recorded (merging or resetting it is a no-op: the hot path's cost per second stays
  // that of the ops a phase sends, not of every op there is).
  bool empty() const noexcept { return ops == 0 && dropped == 0; }
};

// One OpStats per operation, each allocated when first used (an OpStats is ~250 KB: all ten
// would put 2.5 MB on a stack). Reading an op never used gives an empty OpStats. A worker's
// slot prepares the ops its phase sends before it starts (StatsSlot::prepare), so recording
// never allocates; merge and reset touch only the ops that recorded something.
class IntervalStats {
 public:
  IntervalStats() = default;
  IntervalStats(const IntervalStats& o) { *this = o; }
  IntervalStats& operator=(const IntervalStats& o);
  IntervalStats(IntervalStats&&) noexcept = default;
  IntervalStats& operator=(IntervalStats&&) noexcept = default;
  ~IntervalStats() = default;

  OpStats& operator[](OpType op) {
    auto& p = by_op_[static_cast<size_t>(op)];
    if (!p) p = std::make_unique<OpStats>();
    return *p;
  }
  const OpStats& operator[](OpType op) const {
    const auto& p = by_op_[static_cast<size_t>(op)];
    return p ? *p : empty_op();
  }
  void prepare(OpType op) { (void)(*this)[op]; }
  void merge(const IntervalStats& o);
  void reset() noexcept;

 private:
  static const OpStats& empty_op();
  std::array<std::unique_ptr<OpStats>, kOpTypes> by_op_;
};

// What became of a request a memcached pool's server got (schema: pool_server_seconds), and the
// probe connects that looked for a server backing off.
enum class PoolCount : uint8_t { answered = 0, failed, failed_fast, probes, rehashed };
constexpr size_t kPoolCounts = 5;

// What a worker noted (StatsSlot::add_note): an events row of `kind` (cluster_topology,
// pool_topology, trace_error) saying `text`. A trace_error (a replay's line that did not parse)
// also fails the phase.
inline constexpr const char* kTraceErrorNote = "trace_error";
struct WorkerNote {
  const char* kind;
  std::string text;
  bool operator==(const WorkerNote& o) const { return text == o.text; }
};

// One worker's stats: the worker records into the active buffer; the collector swaps buffers
// and reads the retired one.
class StatsSlot {
 public:
  explicit StatsSlot(bool rate_mode = false) : rate_mode_(rate_mode) {}
  // Before the worker starts: the ops it will record, so that recording never allocates.
  void prepare(OpType op) {
    a_.prepare(op);
    b_.prepare(op);
  }
  void record(OpType op, const RequestRecord& r) {
    std::lock_guard<std::mutex> lock(mu_);
    (*active_)[op].record(r, rate_mode_);
  }
  // Time the worker spent spinning for a send time (rate mode): CPU the client-bound rule
  // leaves out, since the thread had nothing else to do. A running total, read per worker.
  void add_spin(uint64_t ns) { spin_ns_.fetch_add(ns, std::memory_order_relaxed); }
  uint64_t spin_ns_total() const { return spin_ns_.load(std::memory_order_relaxed); }
  // A Redis Cluster redirect the worker followed (MOVED, or ASK when `ask`): running totals,
  // read per worker for the per-second row, as the spin time.
  void add_redirect(bool ask) { (ask ? asked_ : moved_).fetch_add(1, std::memory_order_relaxed); }
  uint64_t moved_total() const { return moved_.load(std::memory_order_relaxed); }
  uint64_t asked_total() const { return asked_.load(std::memory_order_relaxed); }
  // A memcached pool of `servers` servers: running totals per server and PoolCount, read per
  // worker for the per-second rows, as the redirects. Called before the worker starts.
  void set_pool_servers(size_t servers);
  size_t pool_servers() const { return pool_servers_; }
  void add_pool(size_t server, PoolCount c) {
    if (server < pool_servers_)
      pool_[server * kPoolCounts + static_cast<size_t>(c)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t pool_total(size_t server, PoolCount c) const {
    return pool_[server * kPoolCounts + static_cast<size_t>(c)].load(std::memory_order_relaxed);
  }
  // Rate mode: n requests of `op` due before the phase's end that never left (dropped).
  void add_dropped(OpType op, uint64_t n) {
    std::lock_guard<std::mutex> lock(mu_);
    (*active_)[op].dropped += n;
  }
  // A change in what the worker talks to (a Redis Cluster node lost, the slot map changed, a
  // pool's server down), for the collector to record as an event of `kind`. Rare: a lock and a
  // string.
  void add_note(const char* kind, std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    notes_.push_back({kind, std::move(text)});
  }
  std::vector<WorkerNote> take_notes() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(notes_, {});
  }
  // Collector only: swaps buffers and merges what the worker recorded since the last call into
  // `into`.
  void drain_into(IntervalStats& into);

 private:
  std::mutex mu_;
  IntervalStats a_, b_;
  IntervalStats* active_ = &a_;
  bool rate_mode_;
  std::atomic<uint64_t> spin_ns_{0};
  std::atomic<uint64_t> moved_{0}, asked_{0};
  std::unique_ptr<std::atomic<uint64_t>[]> pool_;
  size_t pool_servers_ = 0;
  std::vector<WorkerNote> notes_;
};

}  // namespace kv::drive
