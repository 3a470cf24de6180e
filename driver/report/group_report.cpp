#include "report/group_report.hpp"

#include <algorithm>
#include <cmath>

#include "kvbench/usage_error.hpp"
#include "report/group_latency.hpp"
#include "report/report.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

std::string seconds_text(int64_t us) { return fmt_fixed(static_cast<double>(us) / 1e6, 1) + " s"; }

// The median of `v` (not empty).
int64_t median(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::vector<GroupMember> group_members(Database& db, const std::string& group) {
  std::vector<GroupMember> out;
  auto s = db.prepare(
      "SELECT r.run_id, r.client_host, COALESCE((SELECT m.value FROM run_metadata m WHERE "
      "m.run_id = r.run_id AND m.target_id IS NULL AND m.name = 'segment'), "
      "CASE WHEN r.process_index IS NOT NULL THEN (r.process_index + 1) || '/' || "
      "r.process_count END, ''), r.status, "
      "(SELECT MIN(p.started_ts_us) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT MAX(p.ended_ts_us) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT COALESCE(SUM(d.ops), 0) FROM driver_seconds d JOIN phases p USING (phase_id) "
      " WHERE p.run_id = r.run_id AND d.warmup = 0), "
      "(SELECT COALESCE(SUM(d.errors + d.timeouts), 0) FROM driver_seconds d JOIN phases p "
      " USING (phase_id) WHERE p.run_id = r.run_id AND d.warmup = 0), "
      "(SELECT MAX(p.threads) FROM phases p WHERE p.run_id = r.run_id), "
      "(SELECT COUNT(*) FROM events e WHERE e.run_id = r.run_id AND e.kind = 'client_bound'), "
      "(SELECT MAX(pp.p99_us) FROM phase_percentiles pp JOIN phases p USING (phase_id) "
      " WHERE p.run_id = r.run_id AND pp.timing = CASE WHEN p.rate IS NULL THEN 'sent' "
      " ELSE 'intended' END) "
      "FROM runs r WHERE r.run_group = ? ORDER BY r.process_index, r.started_ts_us, r.run_id");
  s.bind(1, group);
  std::vector<std::optional<int64_t>> starts, ends;
  while (s.step()) {
    GroupMember m;
    m.run_id = s.column_int(0);
    m.host = s.column_text(1);
    m.segment = s.column_text(2);
    m.status = s.column_text(3);
    starts.push_back(s.column_opt_int(4));
    ends.push_back(s.column_opt_int(5));
    m.requests = s.column_int(6);
    m.failed = s.column_int(7);
    m.threads = s.column_opt_int(8).value_or(0);
    m.client_bound_seconds = s.column_int(9);
    if (!s.is_null(10)) m.p99_us = s.column_double(10);
    out.push_back(std::move(m));
  }
  int64_t total = 0, first_start = INT64_MAX, first_end = INT64_MAX;
  for (size_t i = 0; i < out.size(); ++i) {
    total += out[i].requests;
    if (starts[i]) first_start = std::min(first_start, *starts[i]);
    if (ends[i]) first_end = std::min(first_end, *ends[i]);
  }
  std::vector<int64_t> busy;
  for (size_t i = 0; i < out.size(); ++i) {
    GroupMember& m = out[i];
    m.share = total > 0 ? static_cast<double>(m.requests) / static_cast<double>(total) : 0;
    if (starts[i]) m.start_offset_us = *starts[i] - first_start;
    if (ends[i]) m.end_offset_us = *ends[i] - first_end;
    if (starts[i] && ends[i]) {
      m.busy_us = *ends[i] - *starts[i];
      busy.push_back(*m.busy_us);
    }
  }
  // The flags: a late start, a run that took longer than the others (beyond its late start),
  // a client that could not keep up.
  const int64_t typical = busy.empty() ? 0 : median(busy);
  for (GroupMember& m : out) {
    if (m.start_offset_us && *m.start_offset_us > kGroupLateUs)
      m.flags.push_back("started " + seconds_text(*m.start_offset_us) + " late");
    if (m.busy_us && out.size() > 1 &&
        *m.busy_us - typical > std::max<int64_t>(kGroupLateUs, typical / 10))
      m.flags.push_back("lagged: ran " + seconds_text(*m.busy_us) + ", the group's median " +
                        seconds_text(typical));
    if (m.client_bound_seconds > 0)
      m.flags.push_back("client-bound (" + std::to_string(m.client_bound_seconds) +
                        " client_bound events)");
    if (m.status != "completed") m.flags.push_back("run " + m.status);
  }
  return out;
}

void print_group_report(Database& db, const std::string& group, const PercentileList& list,
                        std::ostream& out) {
  const std::vector<GroupMember> members = group_members(db, group);
  if (members.empty()) throw UsageError("--group '" + group + "': no run of that group here");
  out << "group " << group << ": " << members.size() << " run" << (members.size() == 1 ? "" : "s")
      << "\n\nthe whole: requests of all its runs over the group's wall time\n";
  print_group_summary(db, group, out);
  out << "\n";
  print_group_latency(db, {group}, list, out);
  out << "\neach host's share (started / ended: after the group's earliest start / end)\n";
  TextTable t({"run", "host", "segment", "threads", "started", "ended", "requests", "share %",
               "failed", "own worst p99 ms", "flags"});
  for (const GroupMember& m : members) {
    auto offset = [](const std::optional<int64_t>& us) {
      if (!us) return std::string("-");
      std::string text = "+";  // appended, not "+" + ...: GCC 12 -O3 warns (-Wrestrict, a
      text += fmt_fixed(static_cast<double>(*us) / 1e6, 3);  // false positive) on that form
      text += " s";
      return text;
    };
    std::string flags;
    for (const auto& f : m.flags) flags += (flags.empty() ? "" : "; ") + f;
    t.add_row({std::to_string(m.run_id), m.host, m.segment, std::to_string(m.threads),
               offset(m.start_offset_us), offset(m.end_offset_us),
               fmt_int(static_cast<double>(m.requests)), fmt_fixed(100.0 * m.share, 1),
               fmt_int(static_cast<double>(m.failed)),
               m.p99_us ? fmt_fixed(*m.p99_us / 1000.0, 3) : std::string("-"),
               flags.empty() ? "ok" : flags});
  }
  t.print(out);
}

}  // namespace kv::drive
