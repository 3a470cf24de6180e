#include "results/merge.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "kvbench/log.hpp"
#include "results/merge_tables.hpp"

namespace kv::drive {
namespace {

using namespace merge_spec;  // NOLINT(google-build-using-namespace): its ids and kinds

std::vector<std::string> table_columns(Database& db, const std::string& table) {
  std::vector<std::string> cols;
  Statement q = db.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid");
  q.bind(1, table);
  while (q.step()) cols.push_back(q.column_text(0));
  return cols;
}

// A table's statements for one input: the select of its columns that `out` also has (an older
// input lacks some; they are left to their default) and the insert of them into `out`.
struct Copier {
  bool present = false;  // the input has the table
  std::optional<Statement> select, insert;
  int id_col = -1;            // index of the id column in the select, or -1
  std::vector<int> ref_kind;  // per selected column: an Id, or -1
  std::vector<std::string> names;
};

// A reference to a row not copied yet (a fork child's parent listed after it): set at the end.
struct Pending {
  std::string table, id_column, column;
  int64_t new_id;
  Id kind;
  int64_t old_value;
  size_t source;
};

// BEGIN on construction, COMMIT (of nothing: the connection only reads) on destruction.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Database& db) : db_(db) { db_.exec("BEGIN"); }
  ~ReadSnapshot() {
    try {
      db_.exec("COMMIT");
    } catch (const SqliteError&) {  // nothing was written: the snapshot just ends
    }
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  Database& db_;
};

struct Source {
  const MergeInput* in;
  std::array<std::unordered_map<int64_t, int64_t>, kIdKinds> map;
  std::map<size_t, Copier> copiers;  // by index in specs()
};

class Merger {
 public:
  Merger(Database& out, const std::vector<MergeInput>& inputs, const std::atomic<bool>* stop)
      : out_(out), stop_(stop) {
    for (const auto& in : inputs) sources_.push_back(Source{&in, {}, {}});
  }

  MergeCounts run() {
    check_out_tables();
    // Each input is read in one read transaction: one snapshot of it, even while a kvdrive or
    // kvmon still writes it.
    std::vector<std::unique_ptr<ReadSnapshot>> snapshots;
    for (auto& src : sources_) snapshots.push_back(std::make_unique<ReadSnapshot>(*src.in->db));
    WriteTransaction tx(out_);
    merge_sessions();
    merge_runs();
    merge_orphan_events();
    resolve_pending();
    check_stop();
    tx.commit();
    std::sort(counts_.added_run_ids.begin(), counts_.added_run_ids.end());
    counts_.groups.assign(groups_.begin(), groups_.end());
    return counts_;
  }

 private:
  void check_out_tables() {
    const auto& known = merged_tables();
    Statement q = out_.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
        "ORDER BY name");
    while (q.step()) {
      const std::string name = q.column_text(0);
      if (std::find(known.begin(), known.end(), name) == known.end())
        throw std::runtime_error("merge: table '" + name + "' of " + out_.path() +
                                 " is unknown to this merge (a migration it was not taught)");
    }
  }

  void check_stop() const {
    if (stop_ != nullptr && stop_->load()) throw MergeInterrupted();
  }

  Copier& copier(Source& src, size_t spec_index) {
    auto it = src.copiers.find(spec_index);
    if (it != src.copiers.end()) return it->second;
    Copier& c = src.copiers[spec_index];
    const TableSpec& t = specs()[spec_index];
    const auto in_cols = table_columns(*src.in->db, t.name);
    if (in_cols.empty()) return c;
    c.present = true;
    std::string sel = "SELECT ", ins_cols, ins_vals;
    int n = 0;
    for (const auto& col : table_columns(out_, t.name)) {
      if (std::find(in_cols.begin(), in_cols.end(), col) == in_cols.end()) continue;
      sel += (n ? ", " : "") + col;
      int kind = -1;
      for (const auto& [ref, k] : t.refs)
        if (col == ref) kind = k;
      if (t.id_column != nullptr && col == t.id_column) {
        c.id_col = n;
      } else {
        ins_cols += (ins_cols.empty() ? "" : ", ") + col;
        ins_vals += ins_vals.empty() ? "?" : ", ?";
      }
      c.ref_kind.push_back(kind);
      c.names.push_back(col);
      ++n;
    }
    sel += std::string(" FROM ") + t.name + " WHERE " + t.where;
    if (t.id_column != nullptr) sel += std::string(" ORDER BY ") + t.id_column;
    c.select.emplace(src.in->db->prepare(sel));
    c.insert.emplace(out_.prepare(std::string("INSERT INTO ") + t.name + " (" + ins_cols +
                                  ") VALUES (" + ins_vals + ")"));
    return c;
  }

  // Copies the rows of every table of `owner` kind selected by `id` (the run's or session's id
  // in the input), the run or session itself first.
  void copy_owned(size_t source, Owner owner, std::optional<int64_t> id) {
    for (size_t i = 0; i < specs().size(); ++i)
      if (specs()[i].owner == owner) copy_table(source, i, id);
  }

  void copy_table(size_t source, size_t spec_index, std::optional<int64_t> id) {
    Source& src = sources_[source];
    const TableSpec& t = specs()[spec_index];
    Copier& c = copier(src, spec_index);
    if (!c.present) return;
    Statement& sel = *c.select;
    Statement& ins = *c.insert;
    sel.reset();
    if (id) sel.bind(1, *id);
    std::vector<std::pair<std::string, int64_t>> pending;  // column, old value
    while (sel.step()) {
      check_stop();
      if (t.owner == Owner::none && orphan_event_present(sel, c)) continue;
      pending.clear();
      int slot = 1;
      for (int col = 0; col < static_cast<int>(c.names.size()); ++col) {
        if (col == c.id_col) continue;
        const int kind = c.ref_kind[static_cast<size_t>(col)];
        if (kind < 0 || sel.is_null(col)) {
          ins.bind_column(slot++, sel, col);
          continue;
        }
        const int64_t old = sel.column_int(col);
        const auto& m = src.map[static_cast<size_t>(kind)];
        auto hit = m.find(old);
        if (hit != m.end()) {
          ins.bind(slot++, hit->second);
        } else {
          ins.bind_null(slot++);  // a row not copied (yet): see resolve_pending
          if (c.id_col >= 0) pending.emplace_back(c.names[static_cast<size_t>(col)], old);
        }
      }
      ins.run();
      if (c.id_col >= 0) {
        const int64_t new_id = out_.last_insert_rowid();
        src.map[static_cast<size_t>(t.id_kind)][sel.column_int(c.id_col)] = new_id;
        for (const auto& [column, old] : pending)
          pending_.push_back(Pending{t.name, t.id_column, column, new_id,
                                     static_cast<Id>(ref_kind_of(t, column)), old, source});
        if (t.owner == Owner::none) ++counts_.events_added;
      }
    }
    sel.reset();
  }

  static int ref_kind_of(const TableSpec& t, const std::string& column) {
    for (const auto& [ref, k] : t.refs)
      if (column == ref) return k;
    return -1;
  }

  // An event of neither run nor session is the same event when its time, source, kind and
  // message are.
  bool orphan_event_present(const Statement& sel, const Copier& c) {
    if (!orphan_check_)
      orphan_check_.emplace(out_.prepare(
          "SELECT 1 FROM events WHERE run_id IS NULL AND session_id IS NULL AND ts_us = ?1 AND "
          "source = ?2 AND kind = ?3 AND message = ?4"));
    Statement& q = *orphan_check_;
    int bound = 0;
    for (size_t col = 0; col < c.names.size(); ++col) {
      const std::string& n = c.names[col];
      const int slot = n == "ts_us"     ? 1
                       : n == "source"  ? 2
                       : n == "kind"    ? 3
                       : n == "message" ? 4
                                        : 0;
      if (slot == 0) continue;
      q.bind_column(slot, sel, static_cast<int>(col));
      ++bound;
    }
    const bool found = bound == 4 && q.step();
    q.reset();
    return found;
  }

  void resolve_pending() {
    for (const auto& p : pending_) {
      const auto& m = sources_[p.source].map[static_cast<size_t>(p.kind)];
      auto hit = m.find(p.old_value);
      if (hit == m.end()) continue;  // a reference to a row the input does not hold: NULL
      Statement u = out_.prepare("UPDATE " + p.table + " SET " + p.column + " = ?1 WHERE " +
                                 p.id_column + " = ?2");
      u.bind(1, hit->second).bind(2, p.new_id).run();
    }
  }

  // ---- sessions ----

  struct Unit {
    int64_t started;
    std::string identity;
    size_t source;
    int64_t id;
    bool same(const Unit& o) const { return started == o.started && identity == o.identity; }
    bool operator<(const Unit& o) const {
      return std::tie(started, identity, source, id) <
             std::tie(o.started, o.identity, o.source, o.id);
    }
  };

  static bool has_column(Database& db, const std::string& table, const std::string& col) {
    const auto cols = table_columns(db, table);
    return std::find(cols.begin(), cols.end(), col) != cols.end();
  }

  // What tells two copies of one kvmon session apart: each kvdrive that pulled it over
  // --monitor holds its own copy (its clock offset, the samples of its run's window), and both
  // are kept; identical copies (one file merged twice) are one. The sample times go in as count,
  // first, last and sum: two kvdrives started together on one clock pull windows of the same
  // count and last host sample whose process samples still differ (seen in CI: the merge kept
  // one and lost the other's samples).
  static std::string session_fingerprint(Database& db, int64_t session_id) {
    Statement q = db.prepare(
        "SELECT (SELECT clock_offset_us FROM monitor_sessions WHERE session_id = ?1), "
        "(SELECT COUNT(*) || ',' || COALESCE(MIN(ts_us), '') || ',' || COALESCE(MAX(ts_us), '') "
        "|| ',' || COALESCE(SUM(ts_us), '') FROM host_samples WHERE session_id = ?1), "
        "(SELECT COUNT(*) || ',' || COALESCE(MIN(s.ts_us), '') || ',' || COALESCE(MAX(s.ts_us), "
        "'') || ',' || COALESCE(SUM(s.ts_us), '') FROM process_samples s JOIN process_instances i "
        "USING (instance_id) WHERE i.session_id = ?1), "
        "(SELECT COUNT(*) || ',' || COALESCE(SUM(ts_us), '') FROM disk_samples WHERE "
        "session_id = ?1)");
    q.bind(1, session_id);
    q.step();
    std::string f;
    for (int c = 0; c < 4; ++c) f += (q.is_null(c) ? std::string("-") : q.column_text(c)) + '\x1f';
    return f;
  }

  void merge_sessions() {
    std::vector<Unit> units;
    for (size_t s = 0; s < sources_.size(); ++s) {
      Database& db = *sources_[s].in->db;
      if (table_columns(db, "monitor_sessions").empty()) continue;
      const bool link = has_column(db, "monitor_sessions", "link");
      Statement q = db.prepare(std::string("SELECT session_id, started_ts_us, host, kvmon_pid, ") +
                               (link ? "link" : "NULL") + " FROM monitor_sessions");
      while (q.step())
        units.push_back(Unit{q.column_int(1),
                             q.column_text(2) + '\x1f' + std::to_string(q.column_int(3)) + '\x1f' +
                                 (q.is_null(4) ? std::string("\x1e") : q.column_text(4)) + '\x1f' +
                                 session_fingerprint(db, q.column_int(0)),
                             s, q.column_int(0)});
    }
    std::sort(units.begin(), units.end());
    Statement find = out_.prepare(
        "SELECT session_id FROM monitor_sessions WHERE host = ?1 AND kvmon_pid = ?2 AND "
        "started_ts_us = ?3 AND link IS ?4");
    for (size_t i = 0; i < units.size(); ++i) {
      const Unit& u = units[i];
      const bool again = i > 0 && units[i - 1].same(u);  // one input given twice, or copies
      Database& db = *sources_[u.source].in->db;
      const bool link = has_column(db, "monitor_sessions", "link");
      Statement q =
          db.prepare(std::string("SELECT host, kvmon_pid, started_ts_us, ") +
                     (link ? "link" : "NULL") + " FROM monitor_sessions WHERE session_id = ?1");
      q.bind(1, u.id);
      if (!q.step()) continue;
      for (int c = 0; c < 4; ++c) find.bind_column(c + 1, q, c);
      std::vector<int64_t> candidates;
      while (find.step()) candidates.push_back(find.column_int(0));
      find.reset();
      std::optional<int64_t> existing;
      const std::string mine = session_fingerprint(db, u.id);
      for (int64_t c : candidates)
        if (session_fingerprint(out_, c) == mine) existing = c;
      if (existing) {
        if (!again) ++counts_.sessions_present;
        map_existing_session(u.source, u.id, *existing);
        continue;
      }
      ++counts_.sessions_added;
      copy_owned(u.source, Owner::session, u.id);
    }
  }

  // The session is in `out` already: the input's ids of it and of its processes stand for
  // those rows (events of the input's new runs may name them).
  void map_existing_session(size_t source, int64_t in_id, int64_t out_id) {
    Source& src = sources_[source];
    src.map[kSession][in_id] = out_id;
    Statement q = src.in->db->prepare(
        "SELECT instance_id, host, pid, start_ticks FROM process_instances WHERE session_id = ?1");
    q.bind(1, in_id);
    Statement f = out_.prepare(
        "SELECT instance_id FROM process_instances WHERE session_id = ?1 AND host = ?2 AND "
        "pid = ?3 AND start_ticks = ?4");
    while (q.step()) {
      f.bind(1, out_id);
      for (int c = 1; c < 4; ++c) f.bind_column(c + 1, q, c);
      if (f.step()) src.map[kInstance][q.column_int(0)] = f.column_int(0);
      f.reset();
    }
  }

  // ---- runs ----

  void merge_runs() {
    std::vector<Unit> units;
    for (size_t s = 0; s < sources_.size(); ++s) {
      Database& db = *sources_[s].in->db;
      const bool uuid = has_column(db, "runs", "run_uuid");
      Statement q =
          db.prepare(std::string("SELECT run_id, started_ts_us, ") + (uuid ? "run_uuid" : "NULL") +
                     ", client_host, client_pid FROM runs");
      while (q.step()) {
        std::string identity;
        if (q.is_null(2)) {  // appended: "\x1e" + ... draws GCC 12's -O3 -Wrestrict false positive
          identity.push_back('\x1e');
          identity += q.column_text(3);
          identity += '\x1f';
          identity += std::to_string(q.column_int(4));
        } else {
          identity = q.column_text(2);
        }
        units.push_back(Unit{q.column_int(1), std::move(identity), s, q.column_int(0)});
      }
    }
    std::sort(units.begin(), units.end());
    Statement by_uuid = out_.prepare("SELECT run_id FROM runs WHERE run_uuid = ?1");
    Statement by_origin = out_.prepare(
        "SELECT run_id FROM runs WHERE run_uuid IS NULL AND client_host = ?1 AND "
        "client_pid = ?2 AND started_ts_us = ?3");
    for (size_t i = 0; i < units.size(); ++i) {
      const Unit& u = units[i];
      const bool again = i > 0 && units[i - 1].same(u);
      Database& db = *sources_[u.source].in->db;
      const bool uuid = has_column(db, "runs", "run_uuid");
      Statement q = db.prepare(std::string("SELECT ") + (uuid ? "run_uuid" : "NULL") +
                               ", client_host, client_pid, started_ts_us, run_group FROM runs "
                               "WHERE run_id = ?1");
      q.bind(1, u.id);
      if (!q.step()) continue;
      Statement& find = q.is_null(0) ? by_origin : by_uuid;
      if (q.is_null(0)) {
        for (int c = 1; c < 4; ++c) find.bind_column(c, q, c);
      } else {
        find.bind_column(1, q, 0);
      }
      const bool present = find.step();
      find.reset();
      if (!q.is_null(4)) groups_.insert(q.column_text(4));
      if (present) {
        if (!again) ++counts_.runs_present;
        continue;
      }
      ++counts_.runs_added;
      {
        // A run still recorded as running is copied as it is now: a later merge of its
        // finished file finds it there and adds nothing, so say so.
        Statement st = db.prepare("SELECT status FROM runs WHERE run_id = ?1");
        st.bind(1, u.id);
        if (st.step() && st.column_text(0) == "running")
          log_warn() << sources_[u.source].in->label << ": run " << u.id
                     << " is still running: merged as it is now (a later merge of the finished "
                        "file will not update it; merge into a new file then)";
      }
      copy_owned(u.source, Owner::run, u.id);
      tie_pulled_sessions(u.source, u.id);
      counts_.added_run_ids.push_back(sources_[u.source].map[kRun].at(u.id));
    }
  }

  // An input that does not say which of its kvmon sessions are its run's (a file kvdrive wrote)
  // : the sessions its kvdrive pulled over --monitor while the run ran are that run's copies, so
  // the merged file ties them to it (run_monitor_sessions) and no other run reads them.
  void tie_pulled_sessions(size_t source, int64_t run_id) {
    Source& src = sources_[source];
    Database& db = *src.in->db;
    if (!has_column(db, "monitor_sessions", "link")) return;
    const bool tied = !table_columns(db, "run_monitor_sessions").empty();
    if (tied) {
      Statement any = db.prepare("SELECT 1 FROM run_monitor_sessions WHERE run_id = ?1");
      any.bind(1, run_id);
      if (any.step()) return;  // copied with the run
    }
    Statement q = db.prepare(
        std::string("SELECT m.session_id FROM monitor_sessions m JOIN runs r ON r.run_id = ?1 "
                    "WHERE m.link IS NOT NULL "
                    "AND m.started_ts_us <= COALESCE(r.ended_ts_us, 9223372036854775807) "
                    "AND COALESCE(m.ended_ts_us, 9223372036854775807) >= r.started_ts_us") +
        (tied ? " AND m.session_id NOT IN (SELECT session_id FROM run_monitor_sessions)" : ""));
    q.bind(1, run_id);
    Statement ins = out_.prepare(
        "INSERT OR IGNORE INTO run_monitor_sessions (run_id, session_id) VALUES (?1, ?2)");
    const int64_t out_run = src.map[kRun].at(run_id);
    while (q.step()) {
      auto hit = src.map[kSession].find(q.column_int(0));
      if (hit == src.map[kSession].end()) continue;
      ins.bind(1, out_run).bind(2, hit->second).run();
    }
  }

  void merge_orphan_events() {
    for (size_t s = 0; s < sources_.size(); ++s)
      for (size_t i = 0; i < specs().size(); ++i)
        if (specs()[i].owner == Owner::none) copy_table(s, i, std::nullopt);
  }

  Database& out_;
  const std::atomic<bool>* stop_;
  std::vector<Source> sources_;
  std::vector<Pending> pending_;
  std::optional<Statement> orphan_check_;
  std::set<std::string> groups_;
  MergeCounts counts_;
};

}  // namespace

const std::vector<std::string>& merged_tables() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& t : specs())
      if (std::find(n.begin(), n.end(), t.name) == n.end()) n.emplace_back(t.name);
    std::sort(n.begin(), n.end());
    return n;
  }();
  return names;
}

MergeCounts merge_results(Database& out, const std::vector<MergeInput>& inputs,
                          const std::atomic<bool>* stop) {
  return Merger(out, inputs, stop).run();
}

}  // namespace kv::drive
