#include "results/check_writer.hpp"

namespace kv::drive {

void write_check(Database& db, int64_t run_id, int64_t ts_us, const std::vector<CheckRow>& rows,
                 const std::vector<std::pair<std::string, std::string>>& events) {
  WriteTransaction tx(db);
  Statement insert = db.prepare(
      "INSERT INTO check_results (run_id, ts_us, repeat_group, baseline, store, against, phase, "
      "op, figure, max_regression, ratio, low, high, verdict) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  for (const CheckRow& r : rows) {
    insert.bind(1, run_id)
        .bind(2, ts_us)
        .bind(3, r.repeat_group)
        .bind(4, r.baseline)
        .bind(5, r.store)
        .bind(6, r.against)
        .bind(7, r.phase)
        .bind(8, r.op)
        .bind(9, r.figure)
        .bind(10, r.max_regression)
        .bind(11, r.ratio)
        .bind(12, r.low)
        .bind(13, r.high)
        .bind(14, r.verdict)
        .run();
  }
  Statement event = db.prepare(
      "INSERT INTO events (ts_us, source, run_id, kind, message) VALUES (?, 'kvdrive', ?, ?, ?)");
  for (const auto& [kind, message] : events) {
    event.bind(1, ts_us).bind(2, run_id).bind(3, kind).bind(4, message).run();
  }
  tx.commit();
}

}  // namespace kv::drive
