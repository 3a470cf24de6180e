#include "kvmon_link/link_writer.hpp"

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/samples.hpp"

namespace kv::drive {
namespace {

using proto::Message;

std::optional<int64_t> shifted(const Message& m, const char* key, int64_t offset) {
  auto v = m.get_int(key);
  return v ? std::optional<int64_t>(*v + offset) : std::nullopt;
}

}  // namespace

void LinkWriter::write(Database& db, const std::vector<LinkItem>& items) {
  auto saved_ids = instance_ids_;
  auto saved_session = session_id_;
  try {
    WriteTransaction tx(db);
    for (const LinkItem& item : items) {
      switch (item.kind) {
        case LinkItem::Kind::session:
          begin_session(db, item);
          break;
        case LinkItem::Kind::clock:
          set_clock(db, item.clock);
          break;
        case LinkItem::Kind::row:
          write_row(db, item);
          break;
        case LinkItem::Kind::gap:
          insert_gap(db, item, "monitor_gap");
          break;
        case LinkItem::Kind::dropped:
          insert_gap(db, item, "monitor_dropped");
          end_session(db, "failed");
          session_id_.reset();  // nothing more comes from it; `end` must not complete it
          break;
        case LinkItem::Kind::end:
          end_session(db, "completed");
          break;
      }
    }
    tx.commit();
  } catch (...) {
    instance_ids_ = std::move(saved_ids);
    session_id_ = saved_session;
    throw;
  }
}

void LinkWriter::begin_session(Database& db, const LinkItem& item) {
  if (session_id_) end_session(db, "interrupted");  // kvmon restarted: that session is over
  const Message& h = item.msg;
  const int64_t offset = item.clock.offset_us;
  host_ = h.get_text("host");
  db.prepare(
        "INSERT INTO monitor_sessions (host, started_ts_us, status, kvmon_version, kvmon_pid, "
        "interval_us, command_line, clock_offset_us, clock_uncertainty_us, link) "
        "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, host_)
      .bind(2, h.get_int("started_ts_us").value_or(0) + offset)
      .bind(3, h.get_text("kvmon"))
      .bind(4, h.get_int("pid").value_or(0))
      .bind(5, h.get_int("interval_us").value_or(0))
      .bind(6, h.get_text("command_line"))
      .bind(7, offset)
      .bind(8, item.clock.uncertainty_us)
      .bind(9, link_)
      .run();
  session_id_ = db.last_insert_rowid();
  instance_ids_.clear();
  seen_.clear();
  log_info() << "monitor " << link_ << ": session " << *session_id_ << " (kvmon on " << host_
             << "), clock offset " << offset << " us ± " << item.clock.uncertainty_us << " us";
}

void LinkWriter::end_session(Database& db, const std::string& status) {
  if (!session_id_) return;
  db.prepare("UPDATE monitor_sessions SET status = ?, ended_ts_us = ? WHERE session_id = ?")
      .bind(1, status)
      .bind(2, status == "completed" || last_ts_us_ == 0 ? now_ts_us() : last_ts_us_)
      .bind(3, *session_id_)
      .run();
}

// The session row holds the latest measurement; each row's own offset is ts_us - remote_ts_us.
void LinkWriter::set_clock(Database& db, const ClockEstimate& c) {
  if (!session_id_) return;
  db.prepare(
        "UPDATE monitor_sessions SET clock_offset_us = ?, clock_uncertainty_us = ? "
        "WHERE session_id = ?")
      .bind(1, c.offset_us)
      .bind(2, c.uncertainty_us)
      .bind(3, *session_id_)
      .run();
}

void LinkWriter::write_row(Database& db, const LinkItem& item) {
  if (!session_id_) return;  // rows always follow a session item
  const Message& m = item.msg;
  const int64_t offset = item.clock.offset_us;
  if (m.verb == "instance") return insert_instance(db, m, offset);
  if (m.verb == "proc") return insert_proc(db, m, offset);
  if (m.verb == "host") return insert_host(db, m, offset);
  if (m.verb == "disk") return insert_disk(db, m, offset);
  if (m.verb == "event") return insert_event(db, m, offset);
}

std::optional<int64_t> LinkWriter::instance_id(const Message& m, const char* pid_key,
                                               const char* ticks_key) const {
  auto pid = m.get_int(pid_key);
  auto ticks = m.get_int(ticks_key);
  if (!pid || !ticks) return std::nullopt;
  auto it = instance_ids_.find({*pid, *ticks});
  return it == instance_ids_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

void LinkWriter::insert_instance(Database& db, const Message& m, int64_t offset) {
  auto pid = m.get_int("pid");
  auto ticks = m.get_int("start_ticks");
  if (!pid || !ticks || instance_ids_.count({*pid, *ticks})) return;  // announced again
  auto first_seen = shifted(m, "first_seen_ts_us", offset).value_or(0);
  db.prepare(
        "INSERT OR IGNORE INTO process_instances (session_id, host, pid, start_ticks, "
        "started_ts_us, name, command_line, selector, parent_instance_id, first_seen_ts_us, "
        "last_seen_ts_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, *session_id_)
      .bind(2, host_)
      .bind(3, *pid)
      .bind(4, *ticks)
      .bind(5, shifted(m, "started_ts_us", offset))
      .bind(6, m.get_text("name"))
      .bind(7, m.get_text("command_line"))
      .bind(8, m.get_text("selector"))
      .bind(9, instance_id(m, "parent_pid", "parent_start_ticks"))
      .bind(10, first_seen)
      .bind(11, first_seen)
      .run();
  Statement q = db.prepare(
      "SELECT instance_id FROM process_instances WHERE session_id = ? "
      "AND host = ? AND pid = ? AND start_ticks = ?");
  q.bind(1, *session_id_).bind(2, host_).bind(3, *pid).bind(4, *ticks);
  if (q.step()) instance_ids_[{*pid, *ticks}] = q.column_int(0);
  seen_[{*pid, *ticks}].name = m.get_text("name");
}

void LinkWriter::insert_proc(Database& db, const Message& m, int64_t offset) {
  auto id = instance_id(m, "pid", "start_ticks");
  auto ts = m.get_int("ts_us");
  if (!id || !ts) {
    if (unannounced_++ == 0) {  // once: a peer could send thousands a second
      log_warn() << "monitor " << link_ << ": sample of an unannounced process left out "
                 << "(said once; more are left out without a word)";
    }
    return;
  }
  // The measured values are decoded and bound by the field table (kvbench/samples.hpp).
  static const std::string sql =
      insert_sql(kProcessTable, {"instance_id", "ts_us", "scheduled_ts_us", "remote_ts_us"});
  Statement st = db.prepare(sql);
  st.bind(1, *id)
      .bind(2, *ts + offset)
      .bind(3, m.get_int("scheduled_ts_us").value_or(*ts) + offset);
  st.bind(4, *ts);
  bind_fields(st, 5, kProcessTable, m);
  st.run();
  db.prepare("UPDATE process_instances SET last_seen_ts_us = ? WHERE instance_id = ?")
      .bind(1, *ts + offset)
      .bind(2, *id)
      .run();
  Seen& seen = seen_[{*m.get_int("pid"), *m.get_int("start_ticks")}];
  seen.ts_us = *ts + offset;
  seen.rss_kib = m.get_int("rss_kib");
  seen.swap_kib = m.get_int("swap_kib");
  last_ts_us_ = std::max(last_ts_us_, *ts + offset);
}

void LinkWriter::insert_host(Database& db, const Message& m, int64_t offset) {
  auto ts = m.get_int("ts_us");
  if (!ts) return;
  static const std::string sql =
      insert_sql(kHostTable, {"session_id", "ts_us", "scheduled_ts_us", "remote_ts_us"});
  Statement st = db.prepare(sql);
  st.bind(1, *session_id_).bind(2, *ts + offset);
  st.bind(3, m.get_int("scheduled_ts_us").value_or(*ts) + offset).bind(4, *ts);
  bind_fields(st, 5, kHostTable, m);
  st.run();
  last_ts_us_ = std::max(last_ts_us_, *ts + offset);
}

void LinkWriter::insert_disk(Database& db, const Message& m, int64_t offset) {
  auto ts = m.get_int("ts_us");
  if (!ts) return;
  static const std::string sql = insert_sql(kDiskTable, {"session_id", "ts_us", "remote_ts_us"});
  Statement st = db.prepare(sql);
  st.bind(1, *session_id_).bind(2, *ts + offset).bind(3, *ts);
  bind_fields(st, 4, kDiskTable, m);
  st.run();
}

void LinkWriter::insert_event(Database& db, const Message& m, int64_t offset) {
  auto ts = m.get_int("ts_us");
  if (!ts) return;
  db.prepare(
        "INSERT INTO events (ts_us, remote_ts_us, source, session_id, instance_id, kind, "
        "message) VALUES (?, ?, 'kvmon', ?, ?, ?, ?)")
      .bind(1, *ts + offset)
      .bind(2, *ts)
      .bind(3, *session_id_)
      .bind(4, instance_id(m, "pid", "start_ticks"))
      .bind(5, m.get_text("kind"))
      .bind(6, m.get_text("msg"))
      .run();
}

void LinkWriter::insert_gap(Database& db, const LinkItem& item, const char* kind) {
  db.prepare(
        "INSERT INTO events (ts_us, source, session_id, kind, message) "
        "VALUES (?, 'kvdrive', ?, ?, ?)")
      .bind(1, item.ts_us)
      .bind(2, session_id_)
      .bind(3, kind)
      .bind(4, item.text)
      .run();
}

std::vector<LatestMemory> LinkWriter::latest() const {
  std::map<std::string, LatestMemory> by_name;
  std::map<std::string, int64_t> newest;
  for (const auto& [key, s] : seen_) {
    if (s.ts_us == 0 || s.ts_us < last_ts_us_ - 5'000'000) continue;
    if (s.ts_us < newest[s.name]) continue;
    newest[s.name] = s.ts_us;
    by_name[s.name] = {s.name, s.rss_kib, s.swap_kib};
  }
  std::vector<LatestMemory> out;
  for (auto& [name, l] : by_name) out.push_back(std::move(l));
  return out;
}

}  // namespace kv::drive
