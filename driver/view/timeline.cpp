#include "view/timeline.hpp"

#include <algorithm>
#include <cstdint>

#include "view/op_order.hpp"

namespace kv::drive {

TimelineWindow timeline_window(Database& db, int64_t run_id) {
  auto s = db.prepare(
      "SELECT r.started_ts_us, MAX(COALESCE(r.ended_ts_us, 0), "
      "COALESCE((SELECT MAX(d.ts_us + d.interval_us) FROM driver_seconds d JOIN phases p "
      "USING (phase_id) WHERE p.run_id = r.run_id), 0)) FROM runs r WHERE r.run_id = ?");
  s.bind(1, run_id);
  s.step();
  return {s.column_int(0), std::max(s.column_int(0), s.column_int(1))};
}

std::vector<TimelineTarget> timeline_targets(Database& db, int64_t run_id) {
  std::vector<TimelineTarget> out;
  auto s = db.prepare(
      "SELECT target_id, ordinal, uri, protocol FROM targets WHERE run_id = ? ORDER BY ordinal");
  s.bind(1, run_id);
  while (s.step())
    out.push_back(
        {s.column_int(0), static_cast<int>(s.column_int(1)), s.column_text(2), s.column_text(3)});
  return out;
}

std::vector<TimelinePhase> timeline_phases(Database& db, int64_t run_id) {
  std::vector<TimelinePhase> out;
  auto s = db.prepare(
      "SELECT t.protocol, p.name, p.started_ts_us, COALESCE(p.ended_ts_us, p.started_ts_us), "
      "p.step, t.ordinal FROM phases p JOIN targets t USING (target_id) WHERE p.run_id = ? "
      "ORDER BY p.phase_id");
  s.bind(1, run_id);
  while (s.step()) {
    TimelinePhase p;
    p.protocol = s.column_text(0);
    p.name = s.column_text(1);
    p.started_us = s.column_int(2);
    p.ended_us = s.column_int(3);
    if (!s.is_null(4)) p.step = s.column_text(4);
    p.target_ordinal = static_cast<int>(s.column_int(5));
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<TimelineSecond> timeline_seconds(Database& db, int64_t run_id) {
  std::vector<TimelineSecond> out;
  auto d = db.prepare(
      "SELECT t.target_id, t.ordinal, t.uri, d.op, d.ts_us, d.interval_us, d.ops, d.phase_id, "
      "d.hits, d.misses, "
      "(SELECT MAX(x.interval_us) FROM driver_seconds x WHERE x.phase_id = d.phase_id) "
      "FROM driver_seconds d JOIN phases p USING (phase_id) JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? ORDER BY t.ordinal, " +
      view::op_order("d.op") + ", d.ts_us");
  d.bind(1, run_id);
  while (d.step()) {
    TimelineSecond s;
    s.target_id = d.column_int(0);
    s.target_ordinal = static_cast<int>(d.column_int(1));
    s.uri = d.column_text(2);
    s.op = d.column_text(3);
    s.ts_us = d.column_int(4);
    s.interval_us = d.column_int(5);
    s.ops = d.column_int(6);
    s.phase_id = d.column_int(7);
    s.hits = d.column_opt_double(8);
    s.misses = d.column_opt_double(9);
    s.phase_max_interval_us = d.column_int(10);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<StoreEvent> store_events(Database& db, int64_t instance_id, const TimelineWindow& w) {
  std::vector<StoreEvent> out;
  auto e = db.prepare(
      "SELECT ts_us, kind, message FROM events WHERE instance_id = ? AND ts_us BETWEEN ? AND ? "
      "AND kind IN ('cgroup_high', 'cgroup_max', 'cgroup_oom', 'cgroup_oom_kill', "
      "'cgroup_failcnt', 'cgroup_under_oom', 'cgroup_swap_max', 'cgroup_swap_fail', "
      "'target_exited', 'target_restarted', 'cgroup_psi_trigger') ORDER BY ts_us");
  e.bind(1, instance_id).bind(2, w.start_us).bind(3, w.end_us);
  while (e.step()) out.push_back({e.column_int(0), e.column_text(1), e.column_text(2)});
  return out;
}

std::vector<StoreProcessSample> store_process_samples(Database& db, int64_t instance_id,
                                                      const TimelineWindow& w) {
  std::vector<StoreProcessSample> out;
  auto s = db.prepare(
      "SELECT s.ts_us, s.rss_kib, s.swap_kib, i.pid, s.cpu_user_us + s.cpu_system_us "
      "FROM process_samples s JOIN process_instances i USING (instance_id) "
      "WHERE s.instance_id = ? AND s.ts_us BETWEEN ? AND ? ORDER BY s.ts_us");
  s.bind(1, instance_id).bind(2, w.start_us).bind(3, w.end_us);
  while (s.step())
    out.push_back({s.column_int(0), s.column_int(3), s.column_opt_int(1), s.column_opt_int(2),
                   s.column_opt_int(4)});
  return out;
}

std::vector<CgroupMemorySample> store_cgroup_memory(Database& db, int64_t instance_id,
                                                    const TimelineWindow& w) {
  std::vector<CgroupMemorySample> out;
  auto s = db.prepare(
      "SELECT ts_us, cg_memory_bytes, cg_memory_max_bytes FROM process_samples "
      "WHERE instance_id = ? AND ts_us BETWEEN ? AND ? ORDER BY ts_us");
  s.bind(1, instance_id).bind(2, w.start_us).bind(3, w.end_us);
  while (s.step()) {
    CgroupMemorySample c;
    c.ts_us = s.column_int(0);
    c.memory_bytes = s.column_opt_double(1);
    // No limit ("max", cgroup v1's page-rounded unlimited) is stored as INT64_MAX or near it.
    if (!s.is_null(2) && s.column_int(2) < INT64_MAX - 4095) c.limit_bytes = s.column_double(2);
    out.push_back(c);
  }
  return out;
}

StoreOwnMemory store_own_memory(Database& db, int64_t target_id, const std::string& protocol,
                                const TimelineWindow& w) {
  StoreOwnMemory out;
  out.stat = protocol == "redis" ? "used_memory" : "bytes";
  auto m = db.prepare(
      "SELECT ts_us, value FROM store_stats WHERE target_id = ? AND name = ? "
      "AND ts_us BETWEEN ? AND ? ORDER BY ts_us");
  m.bind(1, target_id).bind(2, out.stat).bind(3, w.start_us).bind(4, w.end_us);
  while (m.step()) out.bytes.emplace_back(m.column_int(0), m.column_opt_double(1));
  return out;
}

std::vector<HostLoad> host_load(Database& db, int64_t run_id, const TimelineWindow& w) {
  std::vector<HostLoad> out;
  auto h = db.prepare(
      "SELECT h.session_id, m.host, h.ts_us, h.load1 FROM host_samples h JOIN monitor_sessions m "
      "USING (session_id) WHERE h.ts_us BETWEEN ? AND ? AND h.session_id IN (SELECT session_id "
      "FROM run_sessions WHERE run_id = ?) ORDER BY h.session_id, h.ts_us");
  h.bind(1, w.start_us).bind(2, w.end_us).bind(3, run_id);
  int64_t session = -1;
  while (h.step()) {
    if (h.column_int(0) != session) {
      session = h.column_int(0);
      out.push_back({h.column_text(1), {}});
    }
    out.back().load1.emplace_back(h.column_int(2), h.column_opt_double(3));
  }
  return out;
}

}  // namespace kv::drive
