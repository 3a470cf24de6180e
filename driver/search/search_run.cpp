#include "search/search_run.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/units.hpp"

namespace kv::drive {
WorkloadSpec search_step_workload(const SearchOptions& s, const WorkloadSpec& w, double rate) {
  WorkloadSpec ws = w;
  ws.rate = rate;
  ws.requests = 0;
  ws.warmup_us = s.step_warmup_us;
  ws.duration_us = s.step_warmup_us + step_duration_us(s, rate);
  return ws;
}

void note_step_second(const SecondReport& sec, StepRun* step) {
  if (sec.warmup) return;
  if (step->measured_from_ts_us == 0) step->measured_from_ts_us = sec.ts_us;
  StepMeasure& m = step->measure;
  m.busiest_thread_cpu = std::max(m.busiest_thread_cpu, sec.busiest_thread_cpu);
  m.busiest_thread_wanted = std::max(m.busiest_thread_wanted, sec.busiest_thread_wanted);
  m.run_delay_max_us = std::max(m.run_delay_max_us, sec.run_delay_us);
}

void fill_step_run(const PhaseResult& result, int64_t phase_id, const WorkloadSpec& w,
                   StepRun* step) {
  step->phase_id = phase_id;
  step->ended_ts_us = result.ended_ts_us;
  if (step->measured_from_ts_us == 0) step->measured_from_ts_us = result.ended_ts_us;
  StepMeasure& m = step->measure;
  m.seconds = static_cast<double>(step->ended_ts_us - step->measured_from_ts_us) / 1e6;
  LatencyHistogram sent, slip;
  for (OpType type : kAllOps) {
    const OpStats& op = result.totals[type];
    m.ops += op.ops;
    m.failed += op.failed();
    m.latency.merge(op.latency);
    m.part_bins.merge(op.part_bins);
    sent.merge(op.sent_latency);
    slip.merge(op.slip);
  }
  m.sent_latency_mean_us = sent.mean_ns() / 1e3;
  m.slip_p50_us = static_cast<double>(slip.percentile_ns(0.5)) / 1e3;
  m.slip_p99_us = static_cast<double>(slip.percentile_ns(0.99)) / 1e3;
  m.in_flight_slots = static_cast<uint64_t>(w.threads) * static_cast<uint64_t>(w.connections) *
                      static_cast<uint64_t>(w.pipeline);
}

namespace {

std::optional<double> per_second(std::optional<double> delta, double seconds) {
  if (!delta || seconds <= 0) return std::nullopt;
  return *delta / seconds;
}

// Sessions whose samples describe the store's host: those that watch its process.
const char* kInstances = "SELECT instance_id FROM target_instances WHERE target_id = ?1";

bool has_sample_at_end(Database& db, int64_t target_id, int64_t to_ts_us) {
  auto q = db.prepare(std::string("SELECT EXISTS (SELECT 1 FROM process_samples WHERE "
                                  "instance_id IN (") +
                      kInstances + ") AND scheduled_ts_us >= ?2)");
  q.bind(1, target_id).bind(2, to_ts_us - 1'000'000);
  return q.step() && q.column_int(0) != 0;
}

bool watched(Database& db, int64_t target_id) {
  auto q = db.prepare("SELECT EXISTS (SELECT 1 FROM target_instances WHERE target_id = ?1)");
  q.bind(1, target_id);
  return q.step() && q.column_int(0) != 0;
}

// The store's cgroup: its counters' growth within [from_ts_us, to_ts_us) (two samples at least).
void read_cgroup_signs(Database& db, int64_t target_id, int64_t from_ts_us, int64_t to_ts_us,
                       ServerSigns& signs) {
  auto c = db.prepare(
      std::string("SELECT COUNT(*), (MAX(ts_us) - MIN(ts_us)) / 1e6, "
                  "MAX(cg_events_high) - MIN(cg_events_high), "
                  "MAX(cg_events_max) - MIN(cg_events_max), MAX(cg_failcnt) - MIN(cg_failcnt), "
                  "MAX(cg_events_oom) - MIN(cg_events_oom), "
                  "MAX(cg_events_oom_kill) - MIN(cg_events_oom_kill), MAX(cg_under_oom), "
                  "MAX(cg_cpu_nr_periods) - MIN(cg_cpu_nr_periods), "
                  "MAX(cg_cpu_nr_throttled) - MIN(cg_cpu_nr_throttled), "
                  "MAX(cg_cpu_throttled_us) - MIN(cg_cpu_throttled_us), "
                  "MAX(cg_psi_memory_full_avg10), "
                  "MAX(CAST(cg_anon_bytes + COALESCE(cg_shmem_bytes, 0) AS REAL) / "
                  "cg_memory_max_bytes), "
                  "MIN(CASE WHEN cg_cpu_quota_us < 9223372036854775807 AND cg_cpu_period_us > 0 "
                  "THEN CAST(cg_cpu_quota_us AS REAL) / cg_cpu_period_us END) "
                  "FROM process_samples WHERE instance_id IN (") +
      kInstances + ") AND scheduled_ts_us >= ?2 AND scheduled_ts_us < ?3");
  c.bind(1, target_id).bind(2, from_ts_us).bind(3, to_ts_us);
  if (c.step() && c.column_int(0) >= 2) {
    auto either = [](std::optional<double> a, std::optional<double> b) {
      if (a && b) return std::optional<double>(std::max(*a, *b));
      return a ? a : b;
    };
    signs.cg_memory_high_events = c.column_opt_double(2);
    signs.cg_memory_max_events = either(c.column_opt_double(3), c.column_opt_double(4));
    signs.cg_oom_events =
        either(either(c.column_opt_double(5), c.column_opt_double(6)), c.column_opt_double(7));
    const auto periods = c.column_opt_double(8), throttled = c.column_opt_double(9);
    // No quota period elapsed (no quota, or a store that never ran): unknown, not 0 %.
    if (periods && throttled && *periods > 0)
      signs.cg_cpu_throttled_fraction = *throttled / *periods;
    signs.cg_cpu_throttled_ms_per_s = per_second(c.column_opt_double(10), c.column_double(1));
    if (signs.cg_cpu_throttled_ms_per_s) *signs.cg_cpu_throttled_ms_per_s /= 1e3;
    signs.cg_psi_memory_full_pct = c.column_opt_double(11);
    // NULL when either is unknown; no limit (kNoCgroupLimit) reads about 0.
    signs.cg_anon_of_max = c.column_opt_double(12);
    signs.cg_cpu_quota_cores = c.column_opt_double(13);  // the smallest in the step
  }
}

}  // namespace

ServerSigns read_server_signs(Database& db, int64_t target_id, Protocol protocol,
                              int64_t from_ts_us, int64_t to_ts_us, int64_t wait_us) {
  ServerSigns signs;
  if (!watched(db, target_id)) return signs;
  const int64_t give_up = steady_us() + wait_us;
  while (!has_sample_at_end(db, target_id, to_ts_us) && steady_us() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));

  // The store process: first and last sample in the window.
  auto p =
      db.prepare(std::string("SELECT (MAX(ts_us) - MIN(ts_us)) / 1e6, COUNT(*), "
                             "MAX(cpu_user_us + cpu_system_us) - MIN(cpu_user_us + cpu_system_us), "
                             "MAX(major_faults) - MIN(major_faults), MAX(threads) "
                             "FROM process_samples WHERE instance_id IN (") +
                 kInstances + ") AND scheduled_ts_us >= ?2 AND scheduled_ts_us < ?3");
  p.bind(1, target_id).bind(2, from_ts_us).bind(3, to_ts_us);
  if (p.step() && p.column_int(1) >= 2) {
    const double seconds = p.column_double(0);
    signs.major_faults_per_s = per_second(p.column_opt_double(3), seconds);
    if (auto cpu_us = p.column_opt_double(2)) signs.store_cpu_cores = *cpu_us / 1e6 / seconds;
  }
  read_cgroup_signs(db, target_id, from_ts_us, to_ts_us, signs);
  // The cores its threads can use: Redis runs commands on one thread; memcached on its worker
  // threads (stats "threads").
  if (protocol == Protocol::redis) {
    signs.store_cores = 1;
  } else {
    auto t = db.prepare(
        "SELECT value FROM store_stats WHERE target_id = ?1 AND name = 'threads' "
        "ORDER BY ts_us DESC LIMIT 1");
    t.bind(1, target_id);
    if (t.step() && !t.is_null(0) && t.column_double(0) > 0) signs.store_cores = t.column_double(0);
  }
  // The host, from the sessions that watch the store.
  auto h = db.prepare(
      std::string("SELECT (MAX(ts_us) - MIN(ts_us)) / 1e6, COUNT(*), MAX(pswpin) - MIN(pswpin), "
                  "MAX(psi_memory_full_avg10) FROM host_samples WHERE session_id IN "
                  "(SELECT session_id FROM process_instances WHERE instance_id IN (") +
      kInstances + ")) AND scheduled_ts_us >= ?2 AND scheduled_ts_us < ?3");
  h.bind(1, target_id).bind(2, from_ts_us).bind(3, to_ts_us);
  if (h.step() && h.column_int(1) >= 1) {
    if (h.column_int(1) >= 2)
      signs.swap_in_pages_per_s = per_second(h.column_opt_double(2), h.column_double(0));
    signs.psi_memory_full_pct = h.column_opt_double(3);
  }
  return signs;
}

namespace {

void write_step(Database& db, int64_t run_id, int64_t target_id, int ordinal, const StepRun& r,
                const StepVerdict& v) {
  const StepMeasure& m = r.measure;
  const bool any = m.latency.count() > 0;
  auto lat = [&](double q) -> std::optional<double> {
    if (!any) return std::nullopt;
    return static_cast<double>(m.latency.percentile_ns(q)) / 1e3;
  };
  std::optional<double> cpu_pct;
  if (m.server.store_cpu_cores) cpu_pct = *m.server.store_cpu_cores * 100;
  const std::optional<ServerLatency>& sl = m.server.latency;
  std::optional<double> throttled_pct;
  if (m.server.cg_cpu_throttled_fraction) throttled_pct = *m.server.cg_cpu_throttled_fraction * 100;
  WriteTransaction tx(db);
  db.prepare(
        "INSERT INTO search_steps (phase_id, run_id, target_id, ordinal, offered_rate, "
        "achieved_rate, measured_us, requests, failed, lat_p50_us, lat_p90_us, lat_p99_us, "
        "lat_p999_us, lat_p9999_us, lat_max_us, slip_p50_us, slip_p99_us, "
        "busiest_thread_cpu_pct, busiest_thread_wanted_pct, store_cpu_pct, swap_in_pages_per_s, "
        "major_faults_per_s, "
        "psi_memory_full_pct, verdict, limit_reason, detail, cg_memory_high_events, "
        "cg_memory_max_events, cg_oom_events, cg_cpu_throttled_pct, cg_cpu_throttled_ms_per_s, "
        "server_calls, server_p50_us, server_p99_us, server_p999_us, cg_psi_memory_full_pct, "
        "client_share_pct, run_delay_max_us) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, ?35, "
        "?36, ?37, ?38)")
      .bind(1, r.phase_id)
      .bind(2, run_id)
      .bind(3, target_id)
      .bind(4, ordinal)
      .bind(5, m.offered_rate)
      .bind(6, m.achieved_rate())
      .bind(7, static_cast<int64_t>(m.seconds * 1e6))
      .bind(8, static_cast<int64_t>(m.ops))
      .bind(9, static_cast<int64_t>(m.failed))
      .bind(10, lat(0.5))
      .bind(11, lat(0.9))
      .bind(12, lat(0.99))
      .bind(13, lat(0.999))
      .bind(14, lat(0.9999))
      .bind(15, any ? std::optional<double>(static_cast<double>(m.latency.max_ns()) / 1e3)
                    : std::nullopt)
      .bind(16, m.slip_p50_us)
      .bind(17, m.slip_p99_us)
      .bind(18, m.busiest_thread_cpu * 100)
      .bind(19, m.busiest_thread_wanted > 0 ? std::optional<double>(m.busiest_thread_wanted * 100)
                                            : std::nullopt)
      .bind(20, cpu_pct)
      .bind(21, m.server.swap_in_pages_per_s)
      .bind(22, m.server.major_faults_per_s)
      .bind(23, m.server.psi_memory_full_pct)
      .bind(24, verdict_name(v.verdict))
      .bind(25, v.limit.empty() ? std::optional<std::string>() : v.limit)
      .bind(26, v.reason.empty() ? std::optional<std::string>() : v.reason)
      .bind(27, m.server.cg_memory_high_events)
      .bind(28, m.server.cg_memory_max_events)
      .bind(29, m.server.cg_oom_events)
      .bind(30, throttled_pct)
      .bind(31, m.server.cg_cpu_throttled_ms_per_s)
      .bind(32, sl ? std::optional<double>(sl->calls) : std::nullopt)
      .bind(33, sl ? std::optional<double>(sl->p50_us) : std::nullopt)
      .bind(34, sl ? std::optional<double>(sl->p99_us) : std::nullopt)
      .bind(35, sl ? std::optional<double>(sl->p999_us) : std::nullopt)
      .bind(36, m.server.cg_psi_memory_full_pct)
      .bind(37, v.client_share_pct)
      .bind(38, m.run_delay_max_us >= 0 ? std::optional<int64_t>(m.run_delay_max_us) : std::nullopt)
      .run();
  tx.commit();
}

std::string step_line(const SearchOptions& s, int ordinal, const StepMeasure& m,
                      const StepVerdict& v) {
  std::string line = "step " + std::to_string(ordinal + 1) + ": " + fmt_int(m.offered_rate) +
                     " req/s offered, " + fmt_int(m.achieved_rate()) + " achieved";
  for (const auto& b : s.objective.latency)
    line += ", " + b.name + " " +
            fmt_fixed(static_cast<double>(m.latency.percentile_ns(b.quantile)) / 1e6, 3) + " ms";
  line += ": " + std::string(verdict_name(v.verdict));
  if (!v.reason.empty()) line += " (" + v.reason + ")";
  return line;
}

}  // namespace

bool run_search(const SearchOptions& s, Database& db, int64_t run_id, int64_t target_id,
                Protocol protocol, const std::string& label, const StepRunner& run_step) {
  RateSearch search(s);
  std::vector<int64_t> phase_ids;
  while (auto rate = search.next()) {
    std::optional<StepRun> r = run_step(*rate);
    if (!r) return false;
    r->measure.offered_rate = *rate;
    r->measure.server = read_server_signs(db, target_id, protocol, r->measured_from_ts_us,
                                          r->ended_ts_us, 3'000'000);
    r->measure.server.latency =
        read_server_latency(db, target_id, r->measured_from_ts_us, r->ended_ts_us);
    StepVerdict v = judge_step(s, r->measure);
    const int ordinal = static_cast<int>(search.steps().size());
    log_info() << label << " " << step_line(s, ordinal, r->measure, v);
    write_step(db, run_id, target_id, ordinal, *r, v);
    phase_ids.push_back(r->phase_id);
    search.record(*rate, std::move(v));
  }
  const auto o = search.outcome();
  const std::string summary = describe_outcome(search);
  WriteTransaction tx(db);
  db.prepare(
        "INSERT INTO search_results (run_id, target_id, max_compliant_rate, limiting_phase_id, "
        "client_bound_rate, stopped, summary) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
      .bind(1, run_id)
      .bind(2, target_id)
      .bind(3, o.max_compliant)
      .bind(4, o.limiting_step ? std::optional<int64_t>(phase_ids[*o.limiting_step]) : std::nullopt)
      .bind(5, o.client_bound_at)
      .bind(6, o.stopped)
      .bind(7, summary)
      .run();
  tx.commit();
  return true;
}

}  // namespace kv::drive
