// `kvdrive run --search`: what a capacity search looks for (the latency objective, the client's
// and the server's limits) and how it steps (start rate, growth, precision, step length), with
// the parsers for their command-line forms. Plain values; the search itself is search/search.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kv::drive {

// One latency bound of the objective: the quantile's latency (intended-time, CO-corrected) at
// most max_us.
struct LatencyBound {
  std::string name;  // "p99", "p99.9" as typed
  double quantile;   // 0.99, 0.999
  double max_us;
};

// A step passes when every bound holds, achieved >= min_achieved x offered, and failed
// requests <= max_error_rate x requests.
struct Objective {
  std::vector<LatencyBound> latency;
  double min_achieved = 0.95;
  double max_error_rate = 0.001;
};

// A step whose client was the limit is invalid (neither pass nor fail): a worker thread above
// max_thread_cpu of a core (spinning left out) in a second after the warm-up, or send slip p99
// over the step above max_slip_p99_us while a thread was busy (half that CPU limit).
struct ClientLimits {
  double max_thread_cpu = 0.9;
  double max_slip_p99_us = 5'000;
};

// Server distress, read from kvmon's samples of the store's host and process during a step (the
// step fails with the first limit hit). A negative limit is off.
inline constexpr double kAnonNearMemoryMax = 0.9;  // --distress cgroup-max-anon default

struct DistressLimits {
  double swap_in_pages_per_s = 1;   // host pswpin: more than this per second
  double major_faults_per_s = 100;  // the store process's major faults per second
  double psi_memory_full_pct = 10;  // host memory PSI full avg10 above this
  // The store's CPU at this fraction of its threads' cores, or of its cgroup's CPU quota (in
  // cores) when that is fewer.
  double store_cpu_fraction = 0.95;
  // The store's cgroup: more than this many memory.high / memory.max (v1 failcnt) / OOM events
  // in a step, or more than this fraction of its CPU quota periods throttled. memory.max events
  // count only while anon + shmem is at cgroup_max_anon_fraction of the limit or above (or
  // unknown): below, the limit was met by page cache, which the kernel reclaims (a store
  // writing its AOF through a cgroup full of cache hits it thousands of times a second).
  double cgroup_high_events = 0;
  double cgroup_max_events = 0;
  double cgroup_oom_events = 0;
  double cpu_throttled_fraction = 0.1;
  double cgroup_psi_full_pct = 10;  // the store's cgroup (v2) memory PSI full avg10 above this
  // --distress cgroup-max-anon: see cgroup_max_events (0 or off: every event counts).
  double cgroup_max_anon_fraction = kAnonNearMemoryMax;
};

struct SearchOptions {
  bool enabled = false;
  std::vector<double> rates;  // --rates: these steps instead of the search, in this order
  double start_rate = 1'000;  // first step of the search
  double growth = 2;          // each step x growth until one fails
  double precision = 0.02;    // bisection stops when (fail - pass) <= precision x pass
  double max_rate = 1e9;      // the search never offers more
  int max_steps = 40;
  int64_t step_duration_us = 5'000'000;  // each step at least this long (warm-up excluded) ...
  uint64_t step_min_requests = 1'000;    // ... and long enough for this many requests
  int64_t step_warmup_us = 1'000'000;    // leading time of each step left out of its verdict
  Objective objective;
  ClientLimits client;
  DistressLimits distress;
};

// "p99=1ms,p99.9=5ms": p50, p90, p99, p99.9 or p99.99 (or any pNN.N below 100), each with a
// duration (parse_duration_us). Throws UsageError naming --slo and the element.
std::vector<LatencyBound> parse_slo(std::string_view text);
// "1000,2000,5k": request rates above 0 (counts with k/M suffixes). Throws, naming --rates.
std::vector<double> parse_rate_list(std::string_view text);
// "swap-in=1,major-faults=100,psi-full=10,store-cpu=0.95,cgroup-high=0,cgroup-max=0,
// cgroup-oom=0,cpu-throttled=0.1,cgroup-psi-full=10"; a value "off" turns a limit off. Unnamed
// limits keep their defaults. Throws, naming --distress.
DistressLimits parse_distress(std::string_view text, DistressLimits base = {});
// A number in [lo, hi] for option `name` ("--min-achieved"). Throws UsageError.
double parse_search_number(std::string_view name, std::string_view text, double lo, double hi);
// Checks how the options combine (precision vs growth, start vs max). Throws.
void check_search_options(const SearchOptions& s);
// The run's parameters (runs.parameters) for a search: `workload_json` (a JSON object) with a
// "search" object added when `s.enabled`: slo ([{name, quantile, max_us}]), min_achieved,
// max_error_rate, rates (or start_rate, growth, precision, max_rate, max_steps),
// step_duration_us, step_min_requests, step_warmup_us, max_client_cpu, max_slip_p99_us and
// distress (a limit that is off is null). `workload_json` unchanged otherwise.
std::string search_parameters_json(const std::string& workload_json, const SearchOptions& s);

}  // namespace kv::drive
