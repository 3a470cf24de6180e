// The failure family of the report's hints (report_hints.hpp): redirects a Redis Cluster
// target followed, a memcached pool's failed servers, a store that began to fail.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/units.hpp"
#include "view/hints_common.hpp"

namespace kv::drive::hints {

void redirect_hints(Database& db, const std::vector<Target>& targets, std::vector<Hint>& out) {
  for (const auto& t : targets) {
    auto s = db.prepare(
        "SELECT SUM(c.cluster_moved), SUM(c.cluster_ask), "
        "MAX((c.cluster_moved + c.cluster_ask) * 1e6 / c.interval_us), "
        "MIN(CASE WHEN c.cluster_moved + c.cluster_ask > 0 THEN c.ts_us END) "
        "FROM client_seconds c JOIN phases p USING (phase_id) WHERE p.target_id = ?");
    s.bind(1, t.id);
    if (!s.step() || s.is_null(0) || s.column_int(0) + s.column_int(1) == 0) continue;
    out.push_back({"cluster_redirects", t.uri,
                   fmt_int(static_cast<double>(s.column_int(0))) + " MOVED and " +
                       fmt_int(static_cast<double>(s.column_int(1))) +
                       " ASK redirects followed (at most " + fmt_int(s.column_double(2)) +
                       "/s): slots moved during the run; each redirected request counts once",
                   "client_seconds.cluster_moved + cluster_ask > 0", s.column_int(3)});
  }
}

// A memcached pool's servers that failed (pool_server_seconds): from when, how its requests
// failed, how often it was probed, and, with on-failure=eject, how many went elsewhere.
void pool_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                std::vector<Hint>& out) {
  const int64_t start = run_start(db, run_id);
  for (const auto& t : targets) {
    auto s = db.prepare(
        "SELECT s.server, SUM(s.failed), SUM(s.failed_fast), SUM(s.probes), "
        "MIN(CASE WHEN s.failed + s.failed_fast + s.probes > 0 THEN s.ts_us END), "
        "(SELECT SUM(o.rehashed) FROM pool_server_seconds o JOIN phases q USING (phase_id) "
        " WHERE q.target_id = ?1) "
        "FROM pool_server_seconds s JOIN phases p USING (phase_id) WHERE p.target_id = ?1 "
        "GROUP BY s.server HAVING SUM(s.failed + s.failed_fast + s.probes) > 0 ORDER BY 5");
    s.bind(1, t.id);
    while (s.step()) {
      std::string text = "pool server ";
      text += s.column_text(0);
      text += " failed from ";
      text += at(s.column_int(4), start);
      text += ": ";
      text += fmt_int(static_cast<double>(s.column_int(1)));
      text += " requests failed after leaving, ";
      text += fmt_int(static_cast<double>(s.column_int(2)));
      text += " at once while it backed off; ";
      text += fmt_int(static_cast<double>(s.column_int(3)));
      text += " probe connects";
      if (!s.is_null(5) && s.column_int(5) > 0) {
        text += "; ";
        text += fmt_int(static_cast<double>(s.column_int(5)));
        text += " requests in all went to another server while their own was ejected";
      }
      out.push_back({"pool_server", t.uri, text,
                     "pool_server_seconds: failed + failed_fast + probes > 0", s.column_int(4)});
    }
  }
}

void failure_hints(Database& db, int64_t run_id, const std::vector<Target>& targets,
                   std::vector<Hint>& out) {
  int64_t start = run_start(db, run_id);
  for (const auto& t : targets) {
    auto s = db.prepare(
        "SELECT d.ts_us, SUM(d.ops), SUM(d.errors), SUM(d.timeouts) FROM driver_seconds d "
        "JOIN phases p USING (phase_id) WHERE p.target_id = ? GROUP BY d.ts_us ORDER BY d.ts_us");
    s.bind(1, t.id);
    int64_t clean = 0, errors = 0, timeouts = 0;
    std::optional<int64_t> first_bad;
    while (s.step()) {
      int64_t bad = s.column_int(2) + s.column_int(3);
      if (!first_bad && bad == 0 && s.column_int(1) > 0) ++clean;
      if (!first_bad && bad > 0 && clean > 0) first_bad = s.column_int(0);
      if (first_bad) {
        errors += s.column_int(2);
        timeouts += s.column_int(3);
      }
    }
    if (first_bad) {
      out.push_back({"store_failed", t.uri,
                     "requests began to fail at " + at(*first_bad, start) + " after " +
                         fmt_int(static_cast<double>(clean)) +
                         " clean seconds: " + fmt_int(static_cast<double>(errors)) + " errors, " +
                         fmt_int(static_cast<double>(timeouts)) + " timeouts from then on",
                     "a second with errors + timeouts > 0 after seconds without", first_bad});
      continue;
    }
    auto p = db.prepare(
        "SELECT name, ended_ts_us FROM phases WHERE target_id = ? AND status = 'failed' "
        "ORDER BY ordinal LIMIT 1");
    p.bind(1, t.id);
    if (p.step())
      out.push_back({"store_failed", t.uri, "phase " + p.column_text(0) + " failed",
                     "a phase with status failed",
                     p.is_null(1) ? std::nullopt : std::optional<int64_t>(p.column_int(1))});
  }
  auto r = db.prepare("SELECT error, ended_ts_us FROM runs WHERE run_id = ? AND status = 'failed'");
  r.bind(1, run_id);
  if (r.step())
    out.push_back({"store_failed", "",
                   "the run failed" + (r.is_null(0) ? "" : ": " + r.column_text(0)),
                   "run status failed",
                   r.is_null(1) ? std::nullopt : std::optional<int64_t>(r.column_int(1))});
}

}  // namespace kv::drive::hints
