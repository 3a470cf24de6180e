// Text, CSV and JSON reports read back from a results file: see report.hpp.
#include "report/report.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvbench/clock.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "report/data_tables.hpp"
#include "report/report_tables.hpp"
#include "report/search_report.hpp"
#include "report/text_table.hpp"
#include "view/hints.hpp"

namespace kv::drive {
namespace {

void print_run_header(const RunView& v, std::ostream& out) {
  const RunHeader& h = v.header;
  out << "run " << v.run_id;
  if (h.name) out << " \"" << *h.name << "\"";
  out << ": " << h.status << ", started " << format_ts_us(h.started_us);
  if (h.ended_us)
    out << ", " << fmt_fixed(static_cast<double>(*h.ended_us - h.started_us) / 1e6, 1) << " s";
  out << " on " << h.client_host;
  if (h.repeat_group)
    out << ", round " << h.round << " of " << h.rounds << " (" << *h.repeat_group << ")";
  out << "\n";
  if (h.error) out << "  error: " << *h.error << "\n";
}

// What the run ran on, a line per scope: "  client: kernel=..., cpu_count=2, ...".
void print_run_metadata(const RunView& v, std::ostream& out) {
  const ReportTable t = metadata_table(v.metadata);
  std::string scope = "\x01", line;
  for (const auto& row : t.rows) {
    const std::string s = row[0].text == "-" ? "client" : row[0].text;
    if (s != scope) {
      if (!line.empty()) out << line << "\n";
      scope = s;
      line = "  " + s + ":";
    } else {
      line += ",";
    }
    line += " " + row[1].text + "=" + row[2].text;
  }
  if (!line.empty()) out << line << "\n";
}

// What the data shows (swap onset with throughput before and after, cliffs, failures ...).
void print_hints(const std::vector<Hint>& hints, std::ostream& out, size_t width) {
  if (!hints.empty()) out << "\n";
  for (const auto& h : hints) out << wrap_words("hint: " + h.message, width, "      ") << "\n";
}

// print_run_summary of a loaded run; `path`: its file's, for the line on what was left out.
void print_summary(const RunView& v, const std::string& path, std::ostream& out,
                   const PercentileList& percentiles, size_t width) {
  auto tables = run_tables(v, percentiles);
  if (tables.empty()) {
    out << "  (no measurements)\n";
    return;
  }
  // Scenario runs: the per-step pivot alone; otherwise per store, then per phase and op.
  bool steps = tables.front().name == "steps_pivot";
  bool first = true;
  std::vector<std::string> left_out;
  for (const auto& t : tables) {
    bool wanted = t.name == "server" || t.name == "trace_curve" ||
                  (steps ? t.name == "steps_pivot"
                         : (t.name == "stores" || t.name == "phases" || t.name == "parts"));
    if (!wanted) continue;
    if (!first) out << "\n";
    first = false;
    if (t.name == "server" || t.name == "parts" || t.name == "trace_curve")
      out << wrap_words(t.title + ":", width) << "\n";
    for (auto& h : print_table_text(t, out, width))
      if (std::find(left_out.begin(), left_out.end(), h) == left_out.end())
        left_out.push_back(std::move(h));
  }
  print_hints(v.hints, out, width);
  if (!left_out.empty()) {
    std::string names;
    for (const auto& h : left_out) names += (names.empty() ? "" : ", ") + h;
    out << "\n"
        << wrap_words("left out to fit " + std::to_string(width) + " columns: " + names +
                          "; every column: kvdrive report --db " + path + " --run " +
                          std::to_string(v.run_id),
                      width)
        << "\n";
  }
}

}  // namespace

void print_run_summary(Database& db, int64_t run_id, std::ostream& out,
                       const PercentileList& percentiles, size_t width) {
  print_summary(load_run_view(db, run_id, percentiles), db.path(), out, percentiles, width);
}

void print_search_run_summary(Database& db, int64_t run_id, std::ostream& out, size_t width) {
  print_search_results(db, run_id, out, width);
  print_hints(compute_hints(db, run_id), out, width);
  out << "\n"
      << wrap_words("every step's tables: kvdrive report --db " + db.path() + " --run " +
                        std::to_string(run_id),
                    width)
      << "\n";
}

void print_group_summary(Database& db, const std::string& group, std::ostream& out) {
  TextTable t({"store", "phase", "op", "processes", "requests", "wall s", "req/s", "failed"});
  for (const Row& s : load_group_summary(db, group).rows) {
    t.add_row({s.column_text(0), s.column_text(1), s.column_text(2), fmt_int(s.column_double(3)),
               fmt_int(s.column_double(4)), fmt_fixed(s.column_double(5), 2),
               fmt_int(s.column_double(6)), fmt_int(s.column_double(7))});
  }
  t.print(out);
}

namespace {

// A summary figure: null when unknown, a whole number as an integer (counts), else a double.
nlohmann::ordered_json json_figure(const Row& s, int col) {
  if (s.is_null(col)) return nullptr;
  const double v = s.column_double(col);
  if (!std::isfinite(v)) return nullptr;
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
  return v;
}

nlohmann::ordered_json group_json(Database& db, const std::string& group, int processes,
                                  const std::vector<std::string>& problems) {
  nlohmann::ordered_json j;
  j["run_group"] = group;
  j["processes"] = processes;
  j["problems"] = problems;
  j["runs"] = load_group_run_ids(db, group);
  auto& phases = j["phases"] = nlohmann::ordered_json::array();
  const char* names[] = {"store", "phase",        "op",        "processes",
                         "ops",   "wall_seconds", "req_per_s", "failed"};
  for (const Row& s : load_group_summary(db, group).rows) {
    nlohmann::ordered_json row;
    for (int c = 0; c < 8; ++c)
      row[names[c]] = c < 3 ? nlohmann::ordered_json(s.column_text(c)) : json_figure(s, c);
    phases.push_back(std::move(row));
  }
  return j;
}

}  // namespace

void print_group_json(Database& db, const std::string& group, int processes,
                      const std::vector<std::string>& problems, std::ostream& out) {
  out << group_json(db, group, processes, problems)
             .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)
      << "\n";
}

namespace {

using Json = nlohmann::ordered_json;

// A cell as JSON: its raw value (a whole number as an integer), its text, or null ("-").
Json json_cell(const ReportCell& c) {
  if (c.value) {
    const double v = *c.value;
    if (!std::isfinite(v)) return nullptr;
    if (v == std::floor(v) && std::fabs(v) < 9.0e15) return static_cast<int64_t>(v);
    return v;
  }
  if (c.text == "-") return nullptr;
  return c.text;
}

Json json_rows(const ReportTable& t) {
  Json rows = Json::array();
  for (const auto& row : t.rows) {
    Json o = Json::object();
    for (size_t c = 0; c < t.keys.size() && c < row.size(); ++c) o[t.keys[c]] = json_cell(row[c]);
    rows.push_back(std::move(o));
  }
  return rows;
}

// The run object: its row, parameters, tables, validity and (with `series`) its series.
Json run_json(Database& db, int64_t run_id, const PercentileList& percentiles, bool series) {
  const RunView v = load_run_view(db, run_id, percentiles);
  const ReportTable row = run_row_table(v.run);
  if (row.rows.empty()) throw UsageError("no run " + std::to_string(run_id) + " in " + db.path());
  Json run = json_rows(row).at(0);
  {
    Json params = nullptr;
    if (v.parameters) {
      params = Json::parse(*v.parameters, nullptr, false);
      if (params.is_discarded()) params = nullptr;
    }
    run["parameters"] = std::move(params);
  }
  run["metadata"] = json_rows(metadata_table(v.metadata));
  auto tables = run_tables(v, percentiles);
  for (const char* name : {"stores", "phases", "parts", "steps", "server", "trace_curve"}) {
    run[name] = Json::array();
    for (const auto& t : tables)
      if (t.name == name) run[name] = json_rows(t);
  }
  Json hints = Json::array();
  for (const auto& h : v.hints) {
    Json o;
    o["kind"] = h.kind;
    o["store"] = h.store.empty() ? Json(nullptr) : Json(h.store);
    o["message"] = h.message;
    o["rule"] = h.rule;
    o["ts_us"] = h.ts_us ? Json(*h.ts_us) : Json(nullptr);
    hints.push_back(std::move(o));
  }
  run["hints"] = std::move(hints);
  for (const char* name : {"searches", "search_steps"}) run[name] = Json::array();
  for (const auto& t : search_tables(db, run_id)) run[t.name] = json_rows(t);
  for (const auto& t : series_tables(db, run_id, percentiles))
    if (series || t.name == "events") run[t.name] = json_rows(t);
  return run;
}

std::string dump(const Json& j) {
  // Text from a store or an older file may hold bytes that are not UTF-8: replaced (U+FFFD) so
  // the output stays JSON.
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The tables named `name` of each listed run, with their lead columns and values.
struct LeadTable {
  std::vector<std::string> lead_keys, lead_values;
  ReportTable table;
};

std::vector<LeadTable> tables_named(Database& db, const std::vector<int64_t>& runs,
                                    const std::vector<int64_t>& listed, const std::string& name,
                                    const PercentileList& percentiles) {
  std::vector<LeadTable> out;
  if (name == "comparison" || name == "differences") {
    auto compared = listed.size() < 2      ? std::vector<ReportTable>{}
                    : name == "comparison" ? comparison_tables(db, listed)
                                           : difference_tables(db, listed);
    for (size_t i = 0; i < compared.size(); ++i)
      out.push_back({{"base_run_id", "run_id"},
                     {std::to_string(listed[0]), std::to_string(listed[i + 1])},
                     std::move(compared[i])});
    return out;
  }
  for (int64_t id : runs) {
    std::vector<ReportTable> ts;
    if (name == "runs")
      ts.push_back(run_row_table(load_run_row(db, id)));
    else if (name == "metadata")
      ts.push_back(metadata_table(load_run_metadata(db, id)));
    else if (name == "timeline" || name == "process_samples" || name == "host_samples" ||
             name == "events")
      ts = series_tables(db, id, percentiles);
    else if (name == "searches" || name == "search_steps")
      ts = search_tables(db, id, true);
    else
      ts = run_tables(db, id, percentiles, true);  // a table without rows still has its header
    for (auto& t : ts) {
      if (t.name != name) continue;
      if (name == "runs")
        out.push_back({{}, {}, std::move(t)});
      else
        out.push_back({{"run_id"}, {std::to_string(id)}, std::move(t)});
    }
  }
  return out;
}

std::string csv_value(const ReportCell& c) {
  if (c.value) return csv_number(*c.value);
  return c.text == "-" ? "" : c.text;
}

std::string csv_quoted(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Tables of several runs under one header: the union of their keys, each key placed after the
// key it followed in the first table that has it.
void print_merged_csv(const std::vector<LeadTable>& tables, std::ostream& out) {
  std::vector<std::string> keys;
  for (const auto& lt : tables) {
    auto at = keys.begin();
    for (const auto& k : lt.table.keys) {
      auto found = std::find(keys.begin(), keys.end(), k);
      at = found != keys.end() ? found + 1 : keys.insert(at, k) + 1;
    }
  }
  const auto& lead = tables.front().lead_keys;
  std::vector<std::string> header(lead);
  header.insert(header.end(), keys.begin(), keys.end());
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_quoted(cells[i]);
    out << "\n";
  };
  line(header);
  for (const auto& lt : tables) {
    std::vector<int> where;
    for (const auto& k : keys) {
      auto it = std::find(lt.table.keys.begin(), lt.table.keys.end(), k);
      where.push_back(it == lt.table.keys.end() ? -1
                                                : static_cast<int>(it - lt.table.keys.begin()));
    }
    for (const auto& row : lt.table.rows) {
      std::vector<std::string> cells(lt.lead_values);
      for (int w : where)
        cells.push_back(w < 0 || static_cast<size_t>(w) >= row.size()
                            ? std::string()
                            : csv_value(row[static_cast<size_t>(w)]));
      line(cells);
    }
  }
}

}  // namespace

void print_run_json(Database& db, int64_t run_id, std::ostream& out,
                    const PercentileList& percentiles) {
  out << dump(run_json(db, run_id, percentiles, false)) << "\n";
}

namespace {

// `run_ids` empty: every run of the file (`every_when_empty`) or none.
Json json_document(Database& db, const std::vector<int64_t>& run_ids,
                   const PercentileList& percentiles, bool every_when_empty = true) {
  Json doc;
  doc["format"] = "kvbench-results";
  doc["format_version"] = 1;
  doc["kvdrive_version"] = version();
  doc["percentiles"] = percentiles.values;
  Json& runs = doc["runs"] = Json::array();
  for (int64_t id : every_when_empty ? report_runs(db, run_ids) : run_ids)
    runs.push_back(run_json(db, id, percentiles, true));
  for (const char* name : {"comparison", "differences"}) {
    Json& rows = doc[name] = Json::array();
    for (const auto& lt : tables_named(db, {}, run_ids, name, percentiles))
      for (auto row : json_rows(lt.table)) {
        Json o;
        o["base_run_id"] = std::stoll(lt.lead_values[0]);
        o["run_id"] = std::stoll(lt.lead_values[1]);
        for (auto& [k, v] : row.items()) o[k] = v;
        rows.push_back(std::move(o));
      }
  }
  return doc;
}

}  // namespace

void write_json_document(Database& db, const std::vector<int64_t>& run_ids,
                         const PercentileList& percentiles, std::ostream& out) {
  out << dump(json_document(db, run_ids, percentiles)) << "\n";
}

void write_group_json_document(Database& db, const std::string& group, int processes,
                               const std::vector<std::string>& problems,
                               const PercentileList& percentiles, std::ostream& out) {
  const std::vector<int64_t> ids = load_group_run_ids(db, group);
  // The processes of one group are parts of one load, not runs to compare with each other.
  Json doc = json_document(db, ids, percentiles, false);
  doc["comparison"] = Json::array();
  doc["differences"] = Json::array();
  doc["group"] = group_json(db, group, processes, problems);
  out << dump(doc) << "\n";
}

const std::vector<std::string>& csv_table_names() {
  static const std::vector<std::string> names{
      "runs",     "metadata",     "stores",     "phases",          "parts",        "steps",
      "server",   "trace_curve",  "timeline",   "process_samples", "host_samples", "events",
      "searches", "search_steps", "comparison", "differences"};
  return names;
}

void print_csv_table(Database& db, const std::vector<int64_t>& run_ids, const std::string& table,
                     const PercentileList& percentiles, std::ostream& out) {
  const auto& names = csv_table_names();
  if (std::find(names.begin(), names.end(), table) == names.end()) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw UsageError("unknown table '" + table + "' (expected one of " + list + ")");
  }
  auto tables = tables_named(db, report_runs(db, run_ids), run_ids, table, percentiles);
  if (tables.empty()) return;
  print_merged_csv(tables, out);
}

std::vector<int64_t> report_runs(Database& db, const std::vector<int64_t>& run_ids) {
  std::vector<int64_t> out = load_run_ids(db);
  if (run_ids.empty()) return out;
  for (int64_t id : run_ids)
    if (std::find(out.begin(), out.end(), id) == out.end())
      throw UsageError("no run " + std::to_string(id) + " in " + db.path());
  return run_ids;
}

ReportFormat parse_report_format(const std::string& s) {
  if (s == "text") return ReportFormat::text;
  if (s == "csv") return ReportFormat::csv;
  if (s == "json") return ReportFormat::json;
  throw UsageError("--format: expected text, csv or json, not '" + s + "'");
}

void print_report(Database& db, const std::vector<int64_t>& run_ids, ReportFormat format,
                  std::ostream& out, const PercentileList& percentiles,
                  const std::string& csv_table) {
  auto runs = report_runs(db, run_ids);
  if (format == ReportFormat::json) {
    write_json_document(db, run_ids, percentiles, out);
    return;
  }
  if (format == ReportFormat::csv) {
    print_csv_table(db, run_ids, csv_table, percentiles, out);
    return;
  }
  if (runs.empty()) out << db.path() << " holds no runs yet\n";
  auto compared = run_ids.size() >= 2 ? comparison_tables(db, run_ids) : std::vector<ReportTable>{};
  for (auto& t : difference_tables(db, run_ids)) compared.push_back(std::move(t));
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i) out << "\n";
    const RunView v = load_run_view(db, runs[i], percentiles);
    print_run_header(v, out);
    print_run_metadata(v, out);
    print_summary(v, db.path(), out, percentiles, 0);
    print_search_results(db, runs[i], out);
  }
  for (const auto& t : compared) {
    out << "\n";
    print_table_text(t, out);
  }
}

void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out) {
  print_report(db, run_id ? std::vector<int64_t>{*run_id} : std::vector<int64_t>{},
               ReportFormat::text, out);
}

}  // namespace kv::drive
