#include "report/group_report.hpp"

#include "kvbench/usage_error.hpp"
#include "report/report.hpp"
#include "report/text_table.hpp"
#include "view/group.hpp"

namespace kv::drive {
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

void print_group_latency(Database& db, const std::vector<std::string>& groups,
                         const PercentileList& list, std::ostream& out) {
  std::vector<std::string> header = {"group", "store", "phase", "op", "runs", "requests"};
  for (double p : list.values) header.push_back(percentile_label(p) + " us");
  header.emplace_back("max us");
  header.emplace_back("runs' mean p99 (not the group's)");
  TextTable table(header);
  auto cell = [](const std::optional<double>& v) { return v ? fmt_fixed(*v, 1) : "-"; };
  for (const auto& g : groups)
    for (const auto& r : group_latency(db, g, list)) {
      std::vector<std::string> row = {r.group,
                                      r.store,
                                      r.phase_name,
                                      r.op,
                                      fmt_int(static_cast<double>(r.runs)),
                                      fmt_int(static_cast<double>(r.requests))};
      for (const auto& p : r.percentiles) row.push_back(cell(p));
      row.push_back(cell(r.max_us));
      row.push_back(cell(r.mean_of_runs_p99_us));
      table.add_row(std::move(row));
    }
  if (table.empty()) return;
  out << "Group latency (every run's histograms added, then the percentiles):\n";
  table.print(out);
}

}  // namespace kv::drive
