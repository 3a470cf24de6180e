#include "view/rounds.hpp"

#include "view/op_order.hpp"

namespace kv::drive {

std::vector<int64_t> load_repeat_group_runs(Database& db, const std::string& group) {
  std::vector<int64_t> out;
  if (!runs_have_rounds(db)) return out;
  auto q = db.prepare("SELECT run_id FROM runs WHERE repeat_group = ? ORDER BY round, run_id");
  q.bind(1, group);
  while (q.step()) out.push_back(q.column_int(0));
  return out;
}

std::optional<std::string> latest_repeat_group(Database& db) {
  if (!runs_have_rounds(db)) return std::nullopt;
  auto q = db.prepare(
      "SELECT repeat_group FROM runs WHERE repeat_group IS NOT NULL ORDER BY run_id DESC LIMIT 1");
  if (q.step()) return q.column_text(0);
  return std::nullopt;
}

std::optional<std::string> resolve_repeat_group(Database& db, const std::string& text) {
  if (!runs_have_rounds(db)) return std::nullopt;
  auto q = db.prepare(
      "SELECT repeat_group FROM runs WHERE repeat_group = ?1 OR (name = ?1 AND repeat_group IS "
      "NOT NULL) ORDER BY repeat_group = ?1 DESC, run_id DESC LIMIT 1");
  q.bind(1, text);
  if (q.step()) return q.column_text(0);
  return std::nullopt;
}

Round load_round(Database& db, int64_t run_id, const PercentileList& list) {
  Round r;
  r.run_id = run_id;
  {
    auto q = db.prepare(std::string("SELECT status, ") + (runs_have_rounds(db) ? "round" : "NULL") +
                        " FROM runs WHERE run_id = ?");
    q.bind(1, run_id);
    if (!q.step()) return r;
    r.status = q.column_text(0);
    if (!q.is_null(1)) r.round = static_cast<int>(q.column_int(1));
  }
  r.validity = load_run_validity(db, run_id);
  const PhasePercentiles pct = run_percentiles(db, run_id, list);
  auto q = db.prepare(
      "SELECT t.ordinal, t.uri, t.protocol, p.ordinal, p.kind, s.op, p.status, s.req_per_s, "
      "p.phase_id FROM phase_summary s JOIN phases p USING (phase_id) JOIN targets t ON "
      "t.target_id = p.target_id WHERE p.run_id = ? ORDER BY t.ordinal, p.ordinal, " +
      view::op_order("s.op"));
  q.bind(1, run_id);
  while (q.step()) {
    RoundPhase ph{static_cast<int>(q.column_int(0)),
                  q.column_text(1),
                  q.column_text(2),
                  static_cast<int>(q.column_int(3)),
                  q.column_text(4),
                  q.column_text(5),
                  q.column_text(6),
                  q.column_opt_double(7),
                  {}};
    const auto found = pct.find({q.column_int(8), ph.op});
    if (found != pct.end()) ph.percentiles = found->second;
    ph.percentiles.resize(list.values.size());
    r.phases.push_back(std::move(ph));
  }
  return r;
}

std::vector<Round> load_rounds(Database& db, const std::vector<int64_t>& run_ids,
                               const PercentileList& list) {
  std::vector<Round> out;
  for (int64_t id : run_ids) out.push_back(load_round(db, id, list));
  return out;
}

}  // namespace kv::drive
