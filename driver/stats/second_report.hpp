// One row of a phase's timeline: what the collector hands to the writer for each second on the
// common time base (a partial second at each end of the phase). A plain value: the collector
// computes it from the workers' stats and queues it, so a slow or locked results file delays
// when rows are written, never how time is cut into rows.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/client_stall.hpp"
#include "stats/interval_stats.hpp"

namespace kv::drive {

// A latency histogram's non-empty buckets, ascending (a few hundred bytes where the full
// histogram is 30 KB): what a second carries to the writer and the HdrHistogram log.
struct SparseHistogram {
  std::vector<std::pair<int, uint64_t>> buckets;  // (LatencyHistogram bucket index, count)
  uint64_t max_ns = 0;                            // the largest value recorded; 0 when empty

  static SparseHistogram of(const LatencyHistogram& h);
  uint64_t count() const;
  bool empty() const { return buckets.empty(); }
  // The histogram again: the same bucket counts (each bucket's values counted at its upper
  // bound, the top one at max_ns), so percentiles and the largest value are the original's.
  LatencyHistogram dense() const;
};

struct OpSecond {
  bool sent = false;  // the phase sends this op: it gets a row even when nothing completed
  uint64_t ops = 0;   // completed requests, any outcome (what the server counted)
  uint64_t ok = 0;    // answered: ok, hit or miss (what req/s counts)
  uint64_t bytes_out = 0, bytes_in = 0, hits = 0, misses = 0, errors = 0, timeouts = 0;
  uint64_t wrong = 0, late = 0;
  uint64_t dropped = 0;  // rate mode: due before the phase's end, never sent (not in ops)
  // Latency (µs) of the completed requests; meaningful only when ops > 0 (else stored NULL).
  // From the intended send time in rate mode, else from the moment the request was queued.
  double lat_mean_us = 0, lat_p50_us = 0, lat_p90_us = 0, lat_p99_us = 0, lat_p999_us = 0;
  double lat_max_us = 0;
  double sent_p50_us = 0, sent_p99_us = 0, sent_max_us = 0;  // rate mode: from the actual send
  double slip_p50_us = 0, slip_p99_us = 0, slip_max_us = 0;  // rate mode: actual - intended send
  // The second's histograms: `latency` as the lat_* figures; `sent_latency` rate mode only.
  SparseHistogram latency, sent_latency;
  // The parts of `latency` (OpStats): queue in rate mode only; wire and client_recv of the
  // answered requests whose reply's arrival was stamped (`unsplit` were not).
  SparseHistogram queue, client_send, wire, client_recv;
  uint64_t unsplit = 0;
  // The requests around this second's p99 (the PartBins bin holding it): their mean latency
  // and mean time in kvdrive (client send + client recv), µs; 0 when none was fully split.
  double p99_bin_latency_us = 0, p99_client_us = 0;
  double p99_client_send_us = 0, p99_client_recv_us = 0;
};

// Figures of one op's stats for a row.
OpSecond summarize(const OpStats& s, bool sent);

// A second whose p99 was mostly kvdrive's own time (kvbench/client_stall.hpp).
inline bool is_client_stall(const OpSecond& s) {
  return kv::is_client_stall(s.p99_client_us, s.p99_bin_latency_us);
}

struct SecondReport {
  int64_t ts_us = 0;        // start of the row on the common time base
  int64_t interval_us = 0;  // its length: up to the next whole second, or to the phase's end
  bool warmup = false;      // inside the phase's warm-up: not part of its totals
  std::array<OpSecond, kOpTypes> by_op{};
  double cpu_user_s = 0;  // kvdrive's CPU time in the interval, all threads
  double cpu_system_s = 0;
  double busiest_thread_cpu = 0;  // the busiest worker's CPU less its spinning, fraction of a core
  // The busiest worker's time on a CPU or runnable waiting for one, less its spinning (fraction
  // of the interval; 0 when the kernel does not say): above ~0.9 the client could not keep up.
  double busiest_thread_wanted = 0;
  // The longest any worker waited for a CPU in this interval (runnable, not running: schedstat's
  // run delay), µs; -1 when it could not be read (stored NULL).
  int64_t run_delay_us = -1;
  int64_t spin_us = 0;          // CPU the workers spent spinning for send times (rate mode)
  int64_t clock_offset_us = 0;  // wall - monotonic at the collection (its change = slew)
  // Redis Cluster redirects followed in the interval (StatsSlot::add_redirect); nullopt when
  // the target is not a cluster.
  std::optional<int64_t> moved, asked;
  // A memcached pool: each server (HOST:PORT) and what became of the requests it got in the
  // interval, indexed by PoolCount (StatsSlot::add_pool); empty for any other target.
  struct PoolSecond {
    std::string server;
    std::array<int64_t, kPoolCounts> n{};
  };
  std::vector<PoolSecond> pool;
  // What the workers noted in the interval (StatsSlot::add_note), each once: recorded as events.
  std::vector<WorkerNote> notes;

  const OpSecond& operator[](OpType op) const { return by_op[static_cast<size_t>(op)]; }
  uint64_t ops() const {
    uint64_t n = 0;
    for (const OpSecond& s : by_op) n += s.ops;
    return n;
  }
  uint64_t ok() const {
    uint64_t n = 0;
    for (const OpSecond& s : by_op) n += s.ok;
    return n;
  }
  uint64_t failed() const { return ops() - ok(); }
};

}  // namespace kv::drive
