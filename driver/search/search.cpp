#include "search/search.hpp"

#include <algorithm>
#include <cmath>

#include "kvbench/units.hpp"

namespace kv::drive {
namespace {

std::string ms_text(double us) { return fmt_fixed(us / 1e3, us < 10'000 ? 3 : 1) + " ms"; }

std::string rate_text(double rate) { return fmt_int(rate) + " req/s"; }

// A thread running or runnable this fraction of the client CPU limit was busy, not waiting on
// replies (a thread on a loaded machine waits for a CPU at every wake-up: 58 % of the time at
// 1,000 req/s and load average 12 on the 2-core dev VM, with 3 % on a CPU).
constexpr double kBusyThreadForSlip = 0.8;

// Rates are whole requests per second.
double whole(double rate) { return std::max(1.0, std::round(rate)); }

// The store's own execution time beside the client's latency at quantile q: which side the
// time was spent on. Redis's histogram times a command's execution, not its wait to be read
// (a saturated store's queue is on the client's side of it); its buckets are powers of two.
// The store's own percentile nearest above q (its histogram has p50, p90, p99, p99.9).
double server_percentile_us(const ServerLatency& server, double q) {
  return q <= 0.5    ? server.p50_us
         : q <= 0.9  ? server.p90_us
         : q <= 0.99 ? server.p99_us
                     : server.p999_us;
}

std::string where_the_latency_is(const std::optional<ServerLatency>& server, double q,
                                 double client_us) {
  if (!server) return "";
  const double us = server_percentile_us(*server, q);
  const std::string name = q <= 0.5 ? "p50" : q <= 0.9 ? "p90" : q <= 0.99 ? "p99" : "p99.9";
  std::string text = ", the server's own " + name + " <= " + ms_text(us) + ": ";
  if (2 * us >= client_us) return text + "the latency is in the server's execution";
  return text +
         "the latency is in queueing before the store reads a request, the network or "
         "the client";
}

}  // namespace

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    case Verdict::invalid:
      return "invalid";
  }
  return "?";
}

namespace {

// A step's verdict as it is built: the first failure names the limit (an invalid one takes over
// from a failure); every reason is said.
struct Verdicts {
  StepVerdict v;
  void add(Verdict kind, std::string limit, const std::string& why) {
    if (v.verdict == Verdict::pass || (kind == Verdict::invalid && v.verdict != Verdict::invalid)) {
      v.verdict = kind;
      v.limit = std::move(limit);
    }
    v.reason += (v.reason.empty() ? "" : "; ") + why;
  }
};

// The client first: a step it could not send says nothing about the store.
void judge_client(const SearchOptions& s, const StepMeasure& m, Verdicts& out) {
  // The client first: a step it could not send says nothing about the store. Its thread was
  // the limit when it computed all the time, or ran and waited for a CPU all the time (a
  // machine too loaded to run kvdrive's threads).
  const double wanted = std::max(m.busiest_thread_cpu, m.busiest_thread_wanted);
  if (m.busiest_thread_cpu > s.client.max_thread_cpu)
    out.add(Verdict::invalid, "client-cpu",
            "a kvdrive thread at " + fmt_int(m.busiest_thread_cpu * 100) + " % of a core");
  else if (wanted > s.client.max_thread_cpu)
    out.add(Verdict::invalid, "client-cpu",
            "a kvdrive thread running or waiting for a CPU " + fmt_int(wanted * 100) +
                " % of the time (" + fmt_int(m.busiest_thread_cpu * 100) + " % on one)");
  // Late sends from a busy thread: kvdrive itself could not keep the schedule. A worker waits
  // for each reply before its next send on that connection (per-thread open loop), so sends
  // late behind slow replies from a thread that mostly waited are the store's pace: their
  // delay is in the intended-time latency judged below, not a client limit.
  if (m.slip_p99_us > s.client.max_slip_p99_us &&
      wanted > kBusyThreadForSlip * s.client.max_thread_cpu)
    out.add(Verdict::invalid, "slip",
            "schedule slip p99 " + ms_text(m.slip_p99_us) + " > " +
                ms_text(s.client.max_slip_p99_us) + " with a kvdrive thread busy " +
                fmt_int(wanted * 100) + " % of the time");
}

// Each latency bound: met, missed by the store, or missed only by kvdrive's own time.
void judge_latency(const SearchOptions& s, const StepMeasure& m, Verdicts& out) {
  for (const auto& b : s.objective.latency) {
    const double us = static_cast<double>(m.latency.percentile_ns(b.quantile)) / 1e3;
    // kvdrive's own share of the requests around this percentile (their mean parts).
    std::optional<double> client_share;
    if (const PartBins::Bin* bin = m.part_bins.at_quantile(b.quantile)) {
      const double latency = static_cast<double>(bin->latency_ns);
      if (latency > 0)
        client_share = static_cast<double>(bin->client_send_ns + bin->client_recv_ns) / latency;
    }
    if (!out.v.client_share_pct && client_share) out.v.client_share_pct = *client_share * 100;
    if (us <= b.max_us) continue;
    const std::string missed = b.name + " " + ms_text(us) + " > " + ms_text(b.max_us);
    if (client_share && us * (1 - *client_share) <= b.max_us) {
      out.add(Verdict::invalid, "client-latency",
              missed + ", of which " + ms_text(us * *client_share) +
                  " in kvdrive (client send + recv): the client's floor, not the store's");
      continue;
    }
    out.add(Verdict::fail, b.name, missed + where_the_latency_is(m.server.latency, b.quantile, us));
    if (!out.v.latency_us) {
      out.v.latency_us = us;
      // Whose is most of it: kvdrive's own share, the store's own execution, or the rest.
      if (client_share && *client_share >= 0.5)
        out.v.latency_owner = "kvdrive (client send + recv " + fmt_int(*client_share * 100) +
                              " %: a busy machine, or too few threads)";
      else if (m.server.latency && 2 * server_percentile_us(*m.server.latency, b.quantile) >= us)
        out.v.latency_owner = "the store's execution";
      else
        out.v.latency_owner = "the wire (the network, both kernels, the store's queueing)";
    }
  }
}

// The server's distress, from kvmon's samples.
void judge_server(const SearchOptions& s, const StepMeasure& m, Verdicts& out) {
  const DistressLimits& d = s.distress;
  const ServerSigns& sv = m.server;
  auto distress = [&](const std::string& what, const std::string& figure) {
    out.v.server += (out.v.server.empty() ? "" : ", ") + what + " " + figure;
    out.add(Verdict::fail, "server: " + what, "server: " + what + " " + figure);
  };
  if (d.swap_in_pages_per_s >= 0 && sv.swap_in_pages_per_s &&
      *sv.swap_in_pages_per_s > d.swap_in_pages_per_s)
    distress("swap-in", fmt_int(*sv.swap_in_pages_per_s) + " pages/s");
  if (d.major_faults_per_s >= 0 && sv.major_faults_per_s &&
      *sv.major_faults_per_s > d.major_faults_per_s)
    distress("major faults", fmt_int(*sv.major_faults_per_s) + "/s");
  if (d.psi_memory_full_pct >= 0 && sv.psi_memory_full_pct &&
      *sv.psi_memory_full_pct > d.psi_memory_full_pct)
    distress("memory PSI full", fmt_fixed(*sv.psi_memory_full_pct, 1) + " %");
  auto events = [&](double limit, const std::optional<double>& count, const std::string& what,
                    const std::string& more = "") {
    if (limit >= 0 && count && *count > limit)
      distress(what, fmt_int(*count) + (*count == 1 ? " event" : " events") + more);
  };
  events(d.cgroup_oom_events, sv.cg_oom_events, "cgroup OOM");
  // memory.max met by page cache is reclaim of cache, not the store's memory at its limit.
  if (!sv.cg_anon_of_max)
    events(d.cgroup_max_events, sv.cg_memory_max_events, "cgroup memory.max");
  else if (*sv.cg_anon_of_max >= d.cgroup_max_anon_fraction)
    events(d.cgroup_max_events, sv.cg_memory_max_events, "cgroup memory.max",
           " (anon + shmem " + fmt_int(*sv.cg_anon_of_max * 100) + " % of it)");
  events(d.cgroup_high_events, sv.cg_memory_high_events, "cgroup memory.high");
  if (d.cgroup_psi_full_pct >= 0 && sv.cg_psi_memory_full_pct &&
      *sv.cg_psi_memory_full_pct > d.cgroup_psi_full_pct)
    distress("cgroup memory PSI full", fmt_fixed(*sv.cg_psi_memory_full_pct, 1) + " %");
  if (d.cpu_throttled_fraction >= 0 && sv.cg_cpu_throttled_fraction &&
      *sv.cg_cpu_throttled_fraction > d.cpu_throttled_fraction)
    distress("cgroup CPU quota",
             "throttled in " + fmt_int(*sv.cg_cpu_throttled_fraction * 100) + " % of periods" +
                 (sv.cg_cpu_throttled_ms_per_s
                      ? " (" + fmt_fixed(*sv.cg_cpu_throttled_ms_per_s, 0) + " ms/s)"
                      : std::string()));
  // The cores the store can use: its threads', or its cgroup's CPU quota when that is fewer (a
  // store held to half a core saturates at 50 %). After the quota's throttling, the more
  // direct sign of the same limit.
  std::optional<double> usable = sv.store_cores;
  bool by_quota = false;
  if (sv.cg_cpu_quota_cores && *sv.cg_cpu_quota_cores > 0 &&
      (!usable || *sv.cg_cpu_quota_cores < *usable)) {
    usable = sv.cg_cpu_quota_cores;
    by_quota = true;
  }
  if (d.store_cpu_fraction >= 0 && sv.store_cpu_cores && usable && *usable > 0 &&
      *sv.store_cpu_cores >= d.store_cpu_fraction * *usable)
    distress("store CPU", fmt_int(*sv.store_cpu_cores * 100) + " % of " +
                              (by_quota ? "its cgroup's CPU quota of " + fmt_fixed(*usable, 2) +
                                              (*usable == 1 ? " core" : " cores")
                                        : fmt_int(*usable) + (*usable == 1 ? " core" : " cores")));
}

}  // namespace

StepVerdict judge_step(const SearchOptions& s, const StepMeasure& m) {
  Verdicts out;
  judge_client(s, m, out);
  if (out.v.verdict == Verdict::invalid) return out.v;
  // A step that could not be sent fails (the store did not keep up with the schedule).
  if (m.offered_rate > 0 && m.achieved_rate() < s.objective.min_achieved * m.offered_rate)
    out.add(Verdict::fail, "achieved",
            "achieved " + rate_text(m.achieved_rate()) + " < " +
                fmt_int(s.objective.min_achieved * 100) + " % of " + rate_text(m.offered_rate));
  if (out.v.verdict == Verdict::pass) {
    for (const auto& b : s.objective.latency) {
      // A percentile needs at least one request beyond it to be more than the maximum.
      if (static_cast<double>(m.latency.count()) * (1 - b.quantile) < 1)
        out.add(Verdict::invalid, "samples",
                b.name + " n/a: " + fmt_int(static_cast<double>(m.latency.count())) +
                    " requests (longer steps: --duration)");
    }
    if (out.v.verdict == Verdict::invalid) return out.v;
  }
  judge_latency(s, m, out);
  if (m.ops > 0 &&
      static_cast<double>(m.failed) > s.objective.max_error_rate * static_cast<double>(m.ops))
    out.add(Verdict::fail, "errors",
            "errors " +
                fmt_fixed(100.0 * static_cast<double>(m.failed) / static_cast<double>(m.ops), 2) +
                " % > " + fmt_fixed(s.objective.max_error_rate * 100, 2) + " %");

  // Every connection busy all the time: the store set the pace, or the client had too few
  // requests in flight to offer the rate (per-thread open loop waits for each reply). Said, not
  // judged: which of the two it was needs the store's side.
  const double in_flight = m.achieved_rate() * m.sent_latency_mean_us / 1e6;
  if (out.v.verdict == Verdict::fail && m.in_flight_slots > 0 &&
      in_flight >= 0.9 * static_cast<double>(m.in_flight_slots))
    out.v.reason += "; all " + fmt_int(static_cast<double>(m.in_flight_slots)) +
                    " connections x pipeline were busy: the store's pace, or too few --connections";
  judge_server(s, m, out);
  return out.v;
}

int64_t step_duration_us(const SearchOptions& s, double rate) {
  double q = 0;
  for (const auto& b : s.objective.latency) q = std::max(q, b.quantile);
  const double wanted =
      std::max(static_cast<double>(s.step_min_requests), q > 0 ? 10 / (1 - q) : 0);
  const double seconds = rate > 0 ? std::ceil(wanted / rate - 1e-9) : 0;  // 1/(1-q) is inexact
  return std::max<int64_t>(s.step_duration_us, static_cast<int64_t>(seconds) * 1'000'000);
}

// A rate's verdict is that of its latest step (a repeated step overrules the first).
std::optional<Verdict> RateSearch::latest(double rate) const {
  std::optional<Verdict> v;
  for (const auto& st : steps_)
    if (st.rate == rate) v = st.verdict.verdict;
  return v;
}

std::optional<double> RateSearch::highest_pass() const {
  std::optional<double> r;
  for (const auto& st : steps_)
    if (latest(st.rate) == Verdict::pass && (!r || st.rate > *r)) r = st.rate;
  return r;
}

// The lowest failing rate above the highest pass: a failure below a pass was noise (a stall
// of a loaded machine), overruled.
std::optional<double> RateSearch::lowest_fail() const {
  const auto pass = highest_pass();
  std::optional<double> r;
  for (const auto& st : steps_)
    if (latest(st.rate) == Verdict::fail && (!pass || st.rate > *pass) && (!r || st.rate < *r))
      r = st.rate;
  return r;
}

int RateSearch::times_run(double rate) const {
  int n = 0;
  for (const auto& st : steps_) n += st.rate == rate;
  return n;
}

void RateSearch::record(double rate, StepVerdict v) { steps_.push_back({rate, std::move(v)}); }

std::optional<double> RateSearch::next() const {
  if (!s_.rates.empty()) {
    if (steps_.size() >= s_.rates.size()) return std::nullopt;
    return s_.rates[steps_.size()];
  }
  if (static_cast<int>(steps_.size()) >= s_.max_steps) return std::nullopt;
  if (steps_.empty()) return whole(std::min(s_.start_rate, s_.max_rate));
  // A step the client could not send ends the search: higher rates would not be sent either.
  for (const auto& st : steps_)
    if (st.verdict.verdict == Verdict::invalid) return std::nullopt;
  const auto pass = highest_pass();
  const auto fail = lowest_fail();
  if (!fail) {  // growing
    if (*pass >= s_.max_rate) return std::nullopt;
    return whole(std::min(*pass * s_.growth, s_.max_rate));
  }
  if (!pass) {  // even the first step failed: shrink until one passes, or a floor shows
    if (floor_step()) return std::nullopt;
    const double lower = whole(*fail / s_.growth);
    if (lower >= *fail) return std::nullopt;  // 1 req/s failed
    return lower;
  }
  if (*fail - *pass <= s_.precision * *pass) {
    // The step that limits the result is run a second time: its failure must repeat (else the
    // search goes on above it).
    if (times_run(*fail) < 2) return *fail;
    return std::nullopt;
  }
  const double mid = whole((*pass + *fail) / 2);
  if (mid <= *pass || mid >= *fail)
    return times_run(*fail) < 2 ? std::optional(*fail) : std::nullopt;
  return mid;
}

std::optional<size_t> RateSearch::floor_step() const {
  if (steps_.size() < 2 || highest_pass()) return std::nullopt;
  const Step& lower = steps_.back();
  const Step& higher = steps_[steps_.size() - 2];
  const auto failed_latency = [](const Step& st) {
    return st.verdict.verdict == Verdict::fail && st.verdict.latency_us.has_value();
  };
  if (!failed_latency(lower) || !failed_latency(higher) || lower.rate >= higher.rate ||
      lower.verdict.limit != higher.verdict.limit)
    return std::nullopt;
  if (*lower.verdict.latency_us < kFloorRatio * *higher.verdict.latency_us) return std::nullopt;
  return steps_.size() - 1;
}

RateSearch::Outcome RateSearch::outcome() const {
  Outcome o;
  o.max_compliant = highest_pass();
  o.floor_step = floor_step();
  const auto fail = lowest_fail();
  for (size_t i = 0; i < steps_.size(); ++i) {
    const auto& st = steps_[i];
    if (st.verdict.verdict == Verdict::invalid && st.verdict.limit != "samples" &&
        !o.client_bound_at)
      o.client_bound_at = st.rate;
    if (fail && st.rate == *fail) o.limiting_step = i;  // its latest step
  }
  const bool invalid = std::any_of(steps_.begin(), steps_.end(), [](const Step& st) {
    return st.verdict.verdict == Verdict::invalid;
  });
  if (!s_.rates.empty())
    o.stopped = "every rate of --rates stepped";
  else if (o.client_bound_at)
    o.stopped = "the client was the limit";
  else if (o.floor_step)
    o.stopped = "a latency floor";
  else if (invalid)
    o.stopped = "a step had too few requests for the objective's percentiles";
  else if (static_cast<int>(steps_.size()) >= s_.max_steps && next() == std::nullopt &&
           o.limiting_step && o.max_compliant &&
           steps_[*o.limiting_step].rate - *o.max_compliant > s_.precision * *o.max_compliant)
    o.stopped = "--search-steps reached before the precision";
  else if (!o.limiting_step && o.max_compliant && *o.max_compliant >= s_.max_rate)
    o.stopped = "--search-max reached, still compliant";
  else if (o.limiting_step && !o.max_compliant)
    o.stopped = "no rate down to 1 req/s met the objective";
  else
    o.stopped = "precision reached";
  return o;
}

std::string describe_outcome(const RateSearch& search) {
  const auto o = search.outcome();
  std::string text;
  if (o.max_compliant) {
    text = "maximum compliant rate: " + rate_text(*o.max_compliant);
    if (o.limiting_step) {
      const auto& st = search.steps()[*o.limiting_step];
      text += " (limited by " + st.verdict.limit + " at the next step, " + rate_text(st.rate) +
              ": " + st.verdict.reason + ")";
    } else {
      text += " (" + o.stopped + ")";
    }
  } else if (o.floor_step) {
    // Not a capacity: the latency stayed where it was as the rate halved.
    const auto& lower = search.steps()[*o.floor_step];
    const auto& higher = search.steps()[*o.floor_step - 1];
    text = "no compliant rate: a latency floor, " + lower.verdict.limit + " " +
           ms_text(*higher.verdict.latency_us) + " at " + rate_text(higher.rate) + " and " +
           ms_text(*lower.verdict.latency_us) + " at " + rate_text(lower.rate) +
           ": halving the rate did not bring it down, so no rate meets the objective; the "
           "floor is in " +
           lower.verdict.latency_owner + " (" + lower.verdict.reason + ")";
  } else if (o.limiting_step) {
    const auto& st = search.steps()[*o.limiting_step];
    text = "no compliant rate: " + rate_text(st.rate) + " failed on " + st.verdict.reason;
  } else {
    text = "no compliant rate found";
  }
  for (const auto& st : search.steps()) {
    if (st.verdict.verdict != Verdict::invalid) continue;
    if (st.verdict.limit == "samples")
      text += "\ntoo few requests at " + rate_text(st.rate) + ": " + st.verdict.reason;
    else
      text += "\nclient-bound at " + rate_text(st.rate) + " (" + st.verdict.reason +
              "): add threads or processes";
    break;
  }
  return text;
}

}  // namespace kv::drive
