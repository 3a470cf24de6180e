#include "view/run_header.hpp"

#include "view/run_view.hpp"

namespace kv::drive {

RunHeader run_header(Database& db, int64_t run_id) {
  RunHeader h;
  auto r = db.prepare(
      "SELECT name, status, started_ts_us, ended_ts_us, client_host, command_line, scenario, "
      "scale, error "
      "FROM runs WHERE run_id = ?");
  r.bind(1, run_id);
  if (!r.step()) return h;
  if (!r.is_null(0)) h.name = r.column_text(0);
  h.status = r.column_text(1);
  h.started_us = r.column_int(2);
  h.ended_us = r.column_opt_int(3);
  h.client_host = r.column_text(4);
  h.command_line = r.column_text(5);
  if (!r.is_null(6)) h.scenario = r.column_text(6);
  h.scale = r.column_opt_double(7);
  if (!r.is_null(8)) h.error = r.column_text(8);
  if (!runs_have_rounds(db)) return h;
  auto q = db.prepare("SELECT repeat_group, round, rounds FROM runs WHERE run_id = ?");
  q.bind(1, run_id);
  if (q.step() && !q.is_null(0)) {
    h.repeat_group = q.column_text(0);
    h.round = static_cast<int>(q.column_int(1));
    h.rounds = static_cast<int>(q.column_int(2));
  }
  return h;
}

}  // namespace kv::drive
