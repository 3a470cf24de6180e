// The capacity search (`kvdrive run --search`): steps of offered rate, each judged against the
// objective, the client's limits and the server's distress; geometric growth until a step
// fails, then bisection to a precision. Pure logic: what runs a step (today the phase runner's
// rate mode, per thread open loop) is a callback, so a new engine drops in without touching it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/histogram.hpp"
#include "stats/interval_stats.hpp"
#include "store/redis_latency.hpp"
#include "workload/search_options.hpp"

namespace kv::drive {

// What kvmon saw of the store's host and process during a step; nullopt where unknown (no
// kvmon, or no sample in the window).
struct ServerSigns {
  std::optional<double> swap_in_pages_per_s;  // host pswpin
  std::optional<double> major_faults_per_s;   // the store process
  std::optional<double> psi_memory_full_pct;  // host, highest avg10 in the step
  std::optional<double> store_cpu_cores;      // the store process's CPU, in cores
  std::optional<double> store_cores;          // cores its threads can use (1 for Redis)
  // The store's cgroup (kvmon's cg_* columns), counts within the step: memory.events high and
  // max (v1: memory.failcnt), OOM (v2 oom/oom_kill, v1 oom_kill or under_oom); and the CPU
  // quota: the fraction of the step's enforcement periods throttled, throttled time per second.
  std::optional<double> cg_memory_high_events;
  std::optional<double> cg_memory_max_events;
  std::optional<double> cg_oom_events;
  std::optional<double> cg_cpu_throttled_fraction;
  std::optional<double> cg_cpu_throttled_ms_per_s;
  std::optional<double> cg_psi_memory_full_pct;  // its v2 memory.pressure full, highest avg10
  // The memory reclaim cannot drop without swap (anon + shmem) as a fraction of memory.max,
  // highest in the step: near 1, hitting the limit presses on the store's own memory; far
  // below, it is page cache being reclaimed.
  std::optional<double> cg_anon_of_max;
  // Its CPU quota in cores (quota / period); nullopt when it has none or it is unknown.
  std::optional<double> cg_cpu_quota_cores;
  // The store's own latency over the step (Redis 7 LATENCY HISTOGRAM, polled with the store's
  // counters): command execution only, not the wait to be read. nullopt: not Redis 7, no calls.
  std::optional<ServerLatency> latency;
};

// One step's figures, from after its warm-up to its end.
struct StepMeasure {
  double offered_rate = 0;
  double seconds = 0;               // measured window
  uint64_t ops = 0;                 // requests completed (any outcome)
  uint64_t failed = 0;              // errors + timeouts
  LatencyHistogram latency;         // from each request's intended send time (CO-corrected)
  double sent_latency_mean_us = 0;  // from the actual send
  double slip_p50_us = 0, slip_p99_us = 0;
  double busiest_thread_cpu = 0;  // highest of any second, fraction of a core (spin left out)
  // Highest of any second: a thread's time on a CPU or runnable waiting for one (0: unknown).
  double busiest_thread_wanted = 0;
  // Highest of any second: the longest a worker waited for a CPU (runnable, not running), µs;
  // -1 unknown.
  int64_t run_delay_max_us = -1;
  uint64_t in_flight_slots = 0;  // threads x connections x pipeline (0: unknown)
  // Where the time went (schema/README.md "Whose time is it"): the fully split requests by
  // latency, so a percentile's share of kvdrive's own time is known; empty when unknown (TLS,
  // or a --processes group's step).
  PartBins part_bins;
  ServerSigns server;

  uint64_t ok() const { return ops - failed; }
  double achieved_rate() const { return seconds > 0 ? static_cast<double>(ok()) / seconds : 0; }
};

enum class Verdict { pass, fail, invalid };
const char* verdict_name(Verdict v);

struct StepVerdict {
  Verdict verdict = Verdict::pass;
  std::string limit;   // what decided it: "p99", "achieved", "errors", "client-cpu", "slip",
                       // "samples", "server: swap-in" ...; empty for a pass
  std::string reason;  // every limit passed, for people: "p99 12.3 ms > 1 ms; server: swap-in"
  std::string server;  // the distress part alone ("swap-in 35 pages/s"), empty when none
  // kvdrive's own share (client send + client recv) of the first latency bound's percentile,
  // % (the requests around it: PartBins); nullopt when unknown.
  std::optional<double> client_share_pct;
  // The first latency bound the step failed: its percentile (µs) and where most of its time
  // was: "kvdrive (...)" (its client send + recv are half of it or more), "the store's
  // execution" (the store's own histogram says so) or "the wire (...)" (the network, both
  // kernels and the store's queueing); nullopt / empty when no latency bound failed.
  std::optional<double> latency_us;
  std::string latency_owner;
};

// Judges one step. Invalid (the client was the limit, or too few requests for a percentile of
// the objective) comes first; otherwise it fails on any objective bound or any distress limit.
// A latency bound missed only because of kvdrive's own time (the percentile's requests less
// their client send + client recv would meet it) is client-bound ("client-latency"), not a
// failure: a latency floor of the client is not the store's capacity.
StepVerdict judge_step(const SearchOptions& s, const StepMeasure& m);

// How long a step at `rate` runs after its warm-up: the step duration, or long enough for the
// minimum request count and for ten requests beyond the objective's highest percentile.
int64_t step_duration_us(const SearchOptions& s, double rate);

// The sequence of rates: x growth from the start until a step fails (or /growth until one
// passes), then bisection until the failing and passing rates are `precision` apart; the
// failing step that limits the result is run twice (a failure below a passing rate was noise
// and is overruled, and the search goes on above). Not thread-safe.
class RateSearch {
 public:
  struct Step {
    double rate;
    StepVerdict verdict;
  };
  struct Outcome {
    std::optional<double> max_compliant;    // highest passing rate, if any passed
    std::optional<size_t> limiting_step;    // the lowest failing step above it
    std::optional<double> client_bound_at;  // the first invalid step's rate
    // A latency floor: the lower of two failing steps (no step passed yet) whose failed
    // latency bound did not come down with the rate (kFloorRatio), so halving again would find
    // a rate that passes only by chance, or none.
    std::optional<size_t> floor_step;
    std::string stopped;  // why the search ended: "precision reached", "--search-max", ...
  };

  // Halving the rate left the failed percentile at this fraction of what it was, or more: a
  // floor, not a queue that a lower rate drains.
  static constexpr double kFloorRatio = 0.75;

  explicit RateSearch(const SearchOptions& s) : s_(s) {}
  // The next rate to step at; nullopt when the search is over.
  std::optional<double> next() const;
  void record(double rate, StepVerdict v);
  Outcome outcome() const;
  const std::vector<Step>& steps() const { return steps_; }

 private:
  std::optional<Verdict> latest(double rate) const;
  std::optional<double> highest_pass() const;
  std::optional<double> lowest_fail() const;
  int times_run(double rate) const;
  std::optional<size_t> floor_step() const;

  const SearchOptions& s_;
  std::vector<Step> steps_;
};

// "maximum compliant rate: 2,000 req/s (limited by p99 at 2,150 req/s: 12.3 ms > 1 ms)" and, when
// the client was the limit, "client-bound at X req/s: add threads or processes".
std::string describe_outcome(const RateSearch& search);

}  // namespace kv::drive
