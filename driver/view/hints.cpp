// The report's hints, each from one stated rule: see report_hints.hpp.
#include "view/hints.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "kvbench/units.hpp"
#include "view/hints_common.hpp"

namespace kv::drive {
namespace hints {

std::vector<Target> run_targets(Database& db, int64_t run_id) {
  std::vector<Target> out;
  auto s = db.prepare(
      "SELECT t.target_id, t.uri, t.protocol, MIN(p.started_ts_us), "
      "       MAX(COALESCE(p.ended_ts_us, (SELECT MAX(d.ts_us + d.interval_us) FROM driver_seconds "
      "d "
      "                                    WHERE d.phase_id = p.phase_id), p.started_ts_us)) "
      "FROM targets t JOIN phases p USING (target_id) WHERE t.run_id = ? "
      "GROUP BY t.target_id ORDER BY t.ordinal");
  s.bind(1, run_id);
  while (s.step())
    out.push_back(
        {s.column_int(0), s.column_text(1), s.column_text(2), s.column_int(3), s.column_int(4)});
  return out;
}

int64_t run_start(Database& db, int64_t run_id) {
  auto s = db.prepare("SELECT started_ts_us FROM runs WHERE run_id = ?");
  s.bind(1, run_id);
  return s.step() ? s.column_int(0) : 0;
}

std::string at(int64_t ts_us, int64_t start_us) {
  std::string text = "+";  // appended: "+" + std::string made GCC 12 -O3 warn -Wrestrict
  text += fmt_fixed(static_cast<double>(ts_us - start_us) / 1e6, 1);
  text += " s";
  return text;
}

}  // namespace hints

namespace {

using hints::at;
using hints::run_start;
using hints::run_targets;
using hints::Target;

constexpr double kCliffFactor = 5.0;
constexpr double kClientBoundPct = 90.0;

std::string rate(double v) { return std::isnan(v) ? "no requests" : fmt_int(v) + " req/s"; }

// req/s of a target's requests (all ops) in seconds that ended by `until` / began at `from`.
double target_rate(Database& db, int64_t target_id, std::optional<int64_t> until,
                   std::optional<int64_t> from) {
  auto s = db.prepare(
      "SELECT SUM(d.ops) * 1e6 / NULLIF(SUM(d.interval_us), 0) FROM driver_seconds d "
      "JOIN phases p USING (phase_id) WHERE p.target_id = ?1 AND d.warmup = 0 "
      "AND (?2 IS NULL OR d.ts_us + d.interval_us <= ?2) AND (?3 IS NULL OR d.ts_us >= ?3)");
  s.bind(1, target_id).bind(2, until).bind(3, from);
  return s.step() && !s.is_null(0) ? s.column_double(0) : std::nan("");
}

void cliff_hints(Database& db, int64_t run_id, std::vector<Hint>& out) {
  auto s = db.prepare(
      "SELECT target_id, store, step, write_req_per_s, read_req_per_s FROM step_summary "
      "WHERE run_id = ? AND step IS NOT NULL ORDER BY target_id, first_phase_id");
  s.bind(1, run_id);
  struct Prev {
    std::string step;
    double rate[2];
  };
  std::map<int64_t, Prev> prev;
  while (s.step()) {
    int64_t target = s.column_int(0);
    Prev cur{s.column_text(2),
             {s.is_null(3) ? std::nan("") : s.column_double(3),
              s.is_null(4) ? std::nan("") : s.column_double(4)}};
    auto it = prev.find(target);
    if (it != prev.end()) {
      for (int op = 0; op < 2; ++op) {
        double a = it->second.rate[op], b = cur.rate[op];
        if (!(a > 0) || std::isnan(b) || !(a > kCliffFactor * b)) continue;
        std::string factor = b > 0 ? fmt_fixed(a / b, 1) + "x lower" : "none completed";
        out.push_back({"cliff", s.column_text(1),
                       std::string(op ? "reads" : "writes") + " fell from " + rate(a) + " at " +
                           it->second.step + " to " + rate(b) + " at " + cur.step + " (" + factor +
                           ")",
                       "req/s drops more than 5x between adjacent steps", std::nullopt});
      }
    }
    prev[target] = cur;
  }
}

void swap_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                std::vector<Hint>& out) {
  int64_t start = run_start(db, run_id);
  for (const auto& t : targets) {
    auto inst = store_instance(db, t.id);
    if (!inst) continue;
    // Each sample with the swap of the sample before it (NULL for the instance's first).
    auto s = db.prepare(
        "SELECT ts_us, swap_kib, prev FROM (SELECT ts_us, swap_kib, "
        "LAG(swap_kib, 1, 0) OVER (ORDER BY ts_us) AS prev FROM process_samples "
        "WHERE instance_id = ?1) WHERE ts_us BETWEEN ?2 AND ?3 AND swap_kib > 0 AND prev = 0 "
        "ORDER BY ts_us LIMIT 1");
    s.bind(1, *inst).bind(2, t.lo).bind(3, t.hi);
    if (!s.step()) continue;
    int64_t ts = s.column_int(0);
    double before = target_rate(db, t.id, ts, std::nullopt),
           after = target_rate(db, t.id, std::nullopt, ts);
    out.push_back({"swap_onset", t.uri,
                   "the store's swap rose above 0 at " + at(ts, start) + " (" +
                       fmt_int(static_cast<double>(s.column_int(1))) + " KiB); " + rate(before) +
                       " before, " + rate(after) + " after",
                   "first kvmon sample of the store with swap_kib > 0 after one with 0", ts});
  }
}

// req/s (answered, per wall second: a second has a row per op) of a target and how many seconds
// it had requests, in [from, until).
std::pair<double, int64_t> window_rate(Database& db, int64_t target_id, int64_t from,
                                       int64_t until) {
  auto s = db.prepare(
      "SELECT SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) * 1e6 / "
      "NULLIF(SUM(d.interval_us), 0) * COUNT(*) / NULLIF(COUNT(DISTINCT d.ts_us), 0), "
      "COUNT(DISTINCT CASE WHEN d.ops > 0 THEN d.ts_us END) FROM driver_seconds d "
      "JOIN phases p USING (phase_id) WHERE p.target_id = ?1 AND d.warmup = 0 "
      "AND d.ts_us >= ?2 AND d.ts_us + d.interval_us <= ?3");
  s.bind(1, target_id).bind(2, from).bind(3, until);
  if (!s.step() || s.is_null(0)) return {std::nan(""), 0};
  return {s.column_double(0), s.column_int(1)};
}

// The first of each cgroup memory event of the store's instance while it was benchmarked,
// with req/s in the kWindow seconds before and after: at least kMinSeconds seconds with
// requests on each side, so it does not fire on noise.
constexpr int64_t kWindowUs = 5'000'000;
constexpr int64_t kMinSeconds = 3;

// kvmon's host above its CPUs: load1 over the CPU count (kvdrive's, when kvmon ran on its host)
// means work waited for a CPU, the store's and kvdrive's included.
void host_load_hints(Database& db, int64_t run_id, std::vector<Hint>& out) {
  auto s = db.prepare(
      "SELECT m.host, h.load1, h.ts_us, r.started_ts_us, (SELECT CAST(x.value AS INTEGER) FROM "
      "run_metadata x WHERE x.run_id = r.run_id AND x.target_id IS NULL AND x.name = "
      "'cpu_count' AND m.host = r.client_host) "
      "FROM host_samples h JOIN monitor_sessions m ON m.session_id = h.session_id JOIN runs r "
      "ON r.run_id = ?1 WHERE h.ts_us BETWEEN r.started_ts_us AND COALESCE(r.ended_ts_us, "
      "h.ts_us) AND h.load1 = (SELECT MAX(h2.load1) FROM host_samples h2 WHERE h2.session_id = "
      "h.session_id AND h2.ts_us BETWEEN r.started_ts_us AND COALESCE(r.ended_ts_us, h2.ts_us)) "
      "GROUP BY m.host ORDER BY m.host");
  s.bind(1, run_id);
  while (s.step()) {
    if (s.is_null(1) || s.is_null(4)) continue;
    const double load = s.column_double(1);
    const int64_t cpus = s.column_int(4);
    if (cpus <= 0 || load <= static_cast<double>(cpus)) continue;
    out.push_back({"host_load", "",
                   "host " + s.column_text(0) + ": load rose to " + fmt_fixed(load, 1) + " on " +
                       std::to_string(cpus) + " CPUs (" + at(s.column_int(2), s.column_int(3)) +
                       "): other work waited for a CPU, and so may the store and kvdrive: "
                       "latencies include that wait",
                   "kvmon's host load1 above the CPU count of kvdrive's host, the same host",
                   s.column_int(2)});
  }
}

void cgroup_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                  std::vector<Hint>& out) {
  int64_t start = run_start(db, run_id);
  for (const auto& t : targets) {
    auto inst = store_instance(db, t.id);
    if (!inst) continue;
    // The cgroup's memory against its limit (kvmon's cg_* columns), when it has one.
    auto lim = db.prepare(
        "SELECT MAX(cg_memory_bytes), MIN(cg_memory_max_bytes) FROM process_samples WHERE "
        "instance_id = ?1 AND ts_us BETWEEN ?2 AND ?3 AND cg_memory_max_bytes < "
        "9223372036854775807");
    lim.bind(1, *inst).bind(2, t.lo).bind(3, t.hi);
    if (lim.step() && !lim.is_null(0) && !lim.is_null(1) && lim.column_int(1) > 0) {
      double peak = static_cast<double>(lim.column_int(0)),
             limit = static_cast<double>(lim.column_int(1));
      out.push_back(
          {"cgroup_limit", t.uri,
           "the store's cgroup memory peaked at " + fmt_fixed(peak / 1048576, 1) + " MiB of its " +
               fmt_fixed(limit / 1048576, 1) + " MiB limit (" + fmt_int(peak / limit * 100) + " %)",
           "kvmon cg_memory_bytes against cg_memory_max_bytes while benchmarked", std::nullopt});
    }
    auto s = db.prepare(
        "SELECT kind, MIN(ts_us) FROM events WHERE instance_id = ?1 AND ts_us BETWEEN ?2 AND ?3 "
        "AND kind IN ('cgroup_high', 'cgroup_max', 'cgroup_failcnt', 'cgroup_oom_kill') "
        "GROUP BY kind ORDER BY MIN(ts_us)");
    s.bind(1, *inst).bind(2, t.lo).bind(3, t.hi);
    while (s.step()) {
      std::string kind = s.column_text(0);
      int64_t ts = s.column_int(1);
      auto [before, n_before] = window_rate(db, t.id, ts - kWindowUs, ts);
      auto [after, n_after] = window_rate(db, t.id, ts, ts + kWindowUs);
      if (n_before < kMinSeconds || n_after < kMinSeconds || !(before > 0)) continue;
      const char* what = kind == "cgroup_high"      ? "memory.high reached"
                         : kind == "cgroup_max"     ? "memory.max reached"
                         : kind == "cgroup_failcnt" ? "the cgroup's memory limit hit"
                                                    : "an OOM kill in the store's cgroup";
      double change = (after - before) / before * 100;
      std::string how = std::abs(change) < 5 ? "throughput held"
                        : change < 0         ? "throughput fell " + fmt_int(-change) + " %"
                                             : "throughput rose " + fmt_int(change) + " %";
      out.push_back({"cgroup_memory", t.uri,
                     std::string(what) + " at " + at(ts, start) + ", " + how +
                         " in the next 5 s (" + rate(before) + " -> " + rate(after) + ")",
                     "first kvmon cgroup event of its kind, req/s 5 s before vs after (>= 3 s "
                     "with requests each side)",
                     ts});
    }
  }
}

// Redis BGSAVE / AOF rewrite: a store_stats poll with rdb_bgsave_in_progress (or
// aof_rewrite_in_progress) 1 after one with 0; p99 (the worst op's, per second) in the 5 s
// before the poll before it, against the seconds until one poll after it ended. Fires when p99
// more than doubled, with at least kMinSeconds seconds of p99 before.
void persistence_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                       std::vector<Hint>& out) {
  int64_t start = run_start(db, run_id);
  const int64_t poll_us = 1'000'000;
  for (const auto& t : targets) {
    for (const char* name : {"rdb_bgsave_in_progress", "aof_rewrite_in_progress"}) {
      auto s = db.prepare(
          "SELECT ts_us, (SELECT MIN(e.ts_us) FROM store_stats e WHERE e.target_id = ?1 AND "
          "e.name = ?2 AND e.ts_us > o.ts_us AND e.value = 0) FROM (SELECT ts_us, value, "
          "LAG(value) OVER (ORDER BY ts_us) AS prev FROM store_stats WHERE target_id = ?1 AND "
          "name = ?2) o WHERE value = 1 AND prev = 0 AND ts_us BETWEEN ?3 AND ?4 "
          "ORDER BY ts_us LIMIT 3");
      s.bind(1, t.id).bind(2, std::string(name)).bind(3, t.lo).bind(4, t.hi);
      while (s.step()) {
        int64_t onset = s.column_int(0) - poll_us;  // it began after the poll before
        int64_t end = s.is_null(1) ? onset + 2 * poll_us : s.column_int(1) + poll_us;
        auto p99s = [&](int64_t from, int64_t until) {
          std::vector<double> v;
          auto q = db.prepare(
              "SELECT MAX(d.lat_p99_us) FROM driver_seconds d JOIN phases p USING (phase_id) "
              "WHERE p.target_id = ?1 AND d.warmup = 0 AND d.lat_p99_us IS NOT NULL AND "
              "d.ts_us >= ?2 AND d.ts_us < ?3 GROUP BY d.ts_us ORDER BY d.ts_us");
          q.bind(1, t.id).bind(2, from).bind(3, until);
          while (q.step()) v.push_back(q.column_double(0));
          return v;
        };
        std::vector<double> before = p99s(onset - kWindowUs, onset);
        std::vector<double> during = p99s(onset, end);
        if (static_cast<int64_t>(before.size()) < kMinSeconds || during.empty()) continue;
        double base = 0;
        for (double v : before) base += v;
        base /= static_cast<double>(before.size());
        double peak = 0;
        int64_t high = 0;
        for (double v : during) {
          peak = std::max(peak, v);
          if (v > 2 * base) ++high;
        }
        if (!(peak > 2 * base)) continue;
        auto ms = [](double us) { return fmt_fixed(us / 1000, us < 10'000 ? 1 : 0) + " ms"; };
        auto stat = [&](const char* field) -> std::optional<double> {
          auto q = db.prepare(
              "SELECT value FROM store_stats WHERE target_id = ?1 AND name = ?2 AND ts_us >= ?3 "
              "ORDER BY ts_us LIMIT 1");
          q.bind(1, t.id).bind(2, std::string(field)).bind(3, end - poll_us);
          if (q.step()) return q.column_double(0);
          return std::nullopt;
        };
        std::string cost;
        if (auto fork = stat("latest_fork_usec")) cost += "fork " + ms(*fork);
        if (auto cow = stat(name[0] == 'r' ? "rdb_last_cow_size" : "aof_last_cow_size")) {
          cost += std::string(cost.empty() ? "" : ", ") + "COW " + fmt_fixed(*cow / 1048576.0, 1) +
                  " MiB";
        }
        out.push_back({"persistence", t.uri,
                       std::string(name[0] == 'r' ? "BGSAVE" : "AOF rewrite") + " at " +
                           at(onset + poll_us, start) + ": p99 " + ms(base) + " -> " + ms(peak) +
                           " for " + std::to_string(high) + " s" +
                           (cost.empty() ? "" : " (" + cost + ")"),
                       "Redis rdb_bgsave_in_progress / aof_rewrite_in_progress 0 -> 1; p99 more "
                       "than doubled against the 5 s before (>= 3 s)",
                       onset + poll_us});
      }
    }
  }
}

// Redis LATENCY LATEST as polled into store_stats: an event is a latency_<event>_ts value not
// seen at an earlier poll, stamped inside the target's phases; the threshold 0 says the monitor
// was off (nothing could be recorded). At most kMaxLatency events per target.
void latency_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                   std::vector<Hint>& out) {
  constexpr int kMaxLatency = 5;
  const int64_t start = run_start(db, run_id);
  for (const auto& t : targets) {
    if (t.protocol != "redis") continue;
    auto thr = db.prepare(
        "SELECT value FROM store_stats WHERE target_id = ?1 AND name = "
        "'latency_monitor_threshold_ms' AND ts_us BETWEEN ?2 AND ?3 ORDER BY ts_us DESC LIMIT 1");
    thr.bind(1, t.id).bind(2, t.lo).bind(3, t.hi + 1'000'000);
    if (thr.step() && thr.column_double(0) == 0) {
      out.push_back({"latency", t.uri,
                     "Redis latency monitoring off (latency-monitor-threshold 0): fork, AOF "
                     "fsync and slow-command stalls were not recorded (CONFIG SET "
                     "latency-monitor-threshold 100 records those of 100 ms and more)",
                     "store_stats latency_monitor_threshold_ms = 0 during the run", std::nullopt});
      continue;
    }
    auto s = db.prepare(
        "SELECT SUBSTR(f.base, 9), f.v, f.first_ts, (SELECT l.value FROM store_stats l WHERE "
        "  l.target_id = ?1 AND l.ts_us = f.first_ts AND l.name = f.base || '_latest_ms') "
        "FROM (SELECT SUBSTR(e.name, 1, LENGTH(e.name) - 3) AS base, e.value AS v, "
        "      MIN(e.ts_us) AS first_ts FROM store_stats e "
        "      WHERE e.target_id = ?1 AND e.name LIKE 'latency\\_%\\_ts' ESCAPE '\\' "
        "      GROUP BY e.name, e.value) f "
        "WHERE f.first_ts BETWEEN ?2 AND ?3 AND f.v * 1e6 >= ?4 ORDER BY f.v LIMIT ?5");
    s.bind(1, t.id).bind(2, t.lo).bind(3, t.hi + 1'000'000).bind(4, t.lo - 1'000'000);
    s.bind(5, static_cast<int64_t>(kMaxLatency));
    while (s.step()) {
      const int64_t when = static_cast<int64_t>(s.column_double(1) * 1e6);
      std::string ms = s.is_null(3) ? std::string("?") : fmt_int(s.column_double(3));
      out.push_back({"latency", t.uri,
                     "Redis latency event '" + s.column_text(0) + "' at " + at(when, start) + ": " +
                         ms + " ms",
                     "Redis LATENCY LATEST (store_stats latency_<event>_ts) changed during the "
                     "run",
                     when});
    }
  }
}

void client_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                  std::vector<Hint>& out) {
  bool any = false;
  for (const auto& t : targets) {
    auto s = db.prepare(
        "SELECT COUNT(*), SUM(c.busiest_thread_cpu_pct > ?2), MAX(c.busiest_thread_cpu_pct), "
        "MIN(CASE WHEN c.busiest_thread_cpu_pct > ?2 THEN c.ts_us END) "
        "FROM client_seconds c JOIN phases p USING (phase_id) WHERE p.target_id = ?1");
    s.bind(1, t.id).bind(2, kClientBoundPct);
    if (!s.step() || s.is_null(1) || s.column_int(1) == 0) continue;
    any = true;
    out.push_back({"client_bound", t.uri,
                   fmt_int(static_cast<double>(s.column_int(1))) + " of " +
                       fmt_int(static_cast<double>(s.column_int(0))) +
                       " seconds had a kvdrive thread above 90 % of a core (max " +
                       fmt_fixed(s.column_double(2), 0) +
                       " %): the client, not the store, may have set the pace",
                   "client_seconds.busiest_thread_cpu_pct > 90", s.column_int(3)});
  }
  if (any) return;
  auto e = db.prepare(
      "SELECT COUNT(*), MIN(ts_us), (SELECT message FROM events WHERE run_id = ?1 AND "
      "kind = 'client_bound' ORDER BY ts_us LIMIT 1) FROM events WHERE run_id = ?1 AND kind = "
      "'client_bound'");
  e.bind(1, run_id);
  if (e.step() && e.column_int(0) > 0)
    out.push_back(
        {"client_bound", "", e.column_text(2), "a client_bound event of the run", e.column_int(1)});
}

// Seconds whose p99 was kvdrive's own time (client_stall events, kvbench/client_stall.hpp):
// how many, and the first one's figures.
void client_stall_hints(Database& db, int64_t run_id, std::vector<Hint>& out) {
  auto e = db.prepare(
      "SELECT COUNT(*), MIN(ts_us), (SELECT message FROM events WHERE run_id = ?1 AND "
      "kind = 'client_stall' ORDER BY ts_us LIMIT 1) FROM events WHERE run_id = ?1 AND kind = "
      "'client_stall'");
  e.bind(1, run_id);
  if (!e.step() || e.column_int(0) == 0) return;
  const int64_t n = e.column_int(0);
  out.push_back({"client_stall", "",
                 e.column_text(2) + (n > 1 ? " (" + fmt_int(static_cast<double>(n)) +
                                                 " such seconds: client_stall events)"
                                           : ""),
                 "a second whose p99 requests spent more than half their latency, and at least "
                 "1 ms, in kvdrive (client send + client recv)",
                 e.column_int(1)});
}

}  // namespace

std::optional<int64_t> store_instance(Database& db, int64_t target_id) {
  auto t = db.prepare(
      "SELECT t.protocol, r.started_ts_us, COALESCE(r.ended_ts_us, 9223372036854775807), "
      "(SELECT CAST(value AS INTEGER) FROM store_stats s WHERE s.target_id = t.target_id AND "
      " s.name IN ('process_id', 'pid') ORDER BY s.ts_us LIMIT 1), r.run_id "
      "FROM targets t JOIN runs r USING (run_id) WHERE t.target_id = ?");
  t.bind(1, target_id);
  if (!t.step()) return std::nullopt;
  std::string name = t.column_text(0) == "redis" ? "redis-server" : "memcached";
  std::optional<int64_t> pid = t.column_opt_int(3);
  auto pick = [&](bool by_pid) -> std::optional<int64_t> {
    auto s = db.prepare(
        "SELECT i.instance_id, (SELECT COUNT(*) FROM process_samples s WHERE s.instance_id = "
        "i.instance_id AND s.ts_us BETWEEN ?3 AND ?4) AS n FROM process_instances i "
        "WHERE i.parent_instance_id IS NULL AND (CASE WHEN ?5 THEN i.pid = ?1 ELSE i.name = ?2 "
        "END) AND i.session_id IN (SELECT session_id FROM run_sessions WHERE run_id = ?6) "
        "ORDER BY n DESC, i.instance_id DESC LIMIT 1");
    s.bind(1, pid.value_or(-1)).bind(2, name).bind(3, t.column_int(1)).bind(4, t.column_int(2));
    s.bind(5, by_pid ? 1 : 0).bind(6, t.column_int(4));
    if (s.step() && s.column_int(1) > 0) return s.column_int(0);
    return std::nullopt;
  };
  if (pid) {
    if (auto i = pick(true)) return i;
  }
  return pick(false);
}

std::vector<Hint> compute_hints(Database& db, int64_t run_id) {
  std::vector<Hint> out;
  auto targets = run_targets(db, run_id);
  cliff_hints(db, run_id, out);
  swap_hints(db, run_id, targets, out);
  cgroup_hints(db, run_id, targets, out);
  host_load_hints(db, run_id, out);
  persistence_hints(db, run_id, targets, out);
  latency_hints(db, run_id, targets, out);
  client_stall_hints(db, run_id, out);
  client_hints(db, run_id, targets, out);
  hints::redirect_hints(db, targets, out);
  hints::pool_hints(db, run_id, targets, out);
  hints::failure_hints(db, run_id, targets, out);
  // Advice about a store's settings (latency monitoring off) after what the data shows.
  std::stable_partition(out.begin(), out.end(),
                        [](const Hint& h) { return !(h.kind == "latency" && !h.ts_us); });
  return out;
}

}  // namespace kv::drive
