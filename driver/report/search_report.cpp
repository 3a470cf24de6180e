// The capacity search in text, machine tables and HTML: see search_report.hpp.
#include "report/search_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "report/html_parts.hpp"
#include "report/svg_chart.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using namespace cells;

// "300ms", "250us", "1.5s": a bound as --slo takes it.
std::string duration_text(double us) {
  auto num = [](double v) {
    std::string s = fmt_fixed(v, 3);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  if (us >= 1e6) return num(us / 1e6) + "s";
  if (us >= 1e3) return num(us / 1e3) + "ms";
  return num(us) + "us";
}

std::string slo_text(const std::optional<SearchObjective>& o) {
  if (!o) return "-";
  std::string s;
  for (const auto& b : o->latency)
    s += (s.empty() ? "" : ",") + b.name + "=" + duration_text(b.max_us);
  return s.empty() ? "-" : s;
}

const char* kStepKeys[] = {"store",
                           "step",
                           "offered_rate",
                           "achieved_rate",
                           "achieved_fraction",
                           "measured_us",
                           "requests",
                           "failed",
                           "lat_p50_us",
                           "lat_p90_us",
                           "lat_p99_us",
                           "lat_p999_us",
                           "lat_p9999_us",
                           "lat_max_us",
                           "slip_p50_us",
                           "slip_p99_us",
                           "busiest_thread_cpu_pct",
                           "busiest_thread_wanted_pct",
                           "client_share_pct",
                           "run_delay_max_us",
                           "store_cpu_pct",
                           "swap_in_pages_per_s",
                           "major_faults_per_s",
                           "psi_memory_full_pct",
                           "cg_memory_high_events",
                           "cg_memory_max_events",
                           "cg_oom_events",
                           "cg_cpu_throttled_pct",
                           "cg_cpu_throttled_ms_per_s",
                           "server_calls",
                           "server_p50_us",
                           "server_p99_us",
                           "server_p999_us",
                           "verdict",
                           "limit_reason",
                           "detail",
                           "client_bound",
                           "is_max_compliant"};

ReportTable steps_table(Database& db, int64_t run_id) {
  ReportTable t{"search_steps", "capacity search steps", {}, {}, {}, {}, {}};
  t.keys.assign(std::begin(kStepKeys), std::end(kStepKeys));
  t.header = t.keys;
  for (const Row& q : load_search_steps(db, run_id).rows) {
    // A percentile of fewer requests than it needs (one beyond it) is noise: n/a for people,
    // the value as computed for machines.
    const double n = q.is_null(5) ? 0 : q.column_double(5);
    auto pct = [&](int col, double tail) {
      ReportCell c = ms(opt(q, col));
      if (n * tail < 1 && c.value) c.text = "n/a";
      return c;
    };
    const double offered = opt(q, 2), achieved = opt(q, 3);
    const std::string verdict = q.column_text(21);
    const std::string limit = q.is_null(22) ? "" : q.column_text(22);
    t.rows.push_back({text(q.column_text(0)),
                      count(static_cast<double>(q.column_int(1) + 1)),
                      count(offered),
                      count(achieved),
                      fixed(offered > 0 ? achieved / offered : kNaN, 3),
                      count(opt(q, 4)),
                      count(opt(q, 5)),
                      count(opt(q, 6)),
                      pct(7, 0.5),
                      pct(8, 0.1),
                      pct(9, 0.01),
                      pct(10, 0.001),
                      pct(11, 0.0001),
                      ms(opt(q, 12)),
                      ms(opt(q, 13)),
                      ms(opt(q, 14)),
                      fixed(opt(q, 15), 0),
                      fixed(opt(q, 16), 0),
                      fixed(opt(q, 34), 0),
                      ms(opt(q, 35)),
                      fixed(opt(q, 17), 0),
                      fixed(opt(q, 18), 1),
                      fixed(opt(q, 19), 1),
                      fixed(opt(q, 20), 1),
                      count(opt(q, 25)),
                      count(opt(q, 26)),
                      count(opt(q, 27)),
                      fixed(opt(q, 28), 1),
                      fixed(opt(q, 29), 1),
                      count(opt(q, 30)),
                      ms(opt(q, 31)),
                      ms(opt(q, 32)),
                      ms(opt(q, 33)),
                      text(verdict),
                      text(limit.empty() ? "-" : limit),
                      text(q.is_null(23) || q.column_text(23).empty() ? "-" : q.column_text(23)),
                      count(verdict == "invalid" && limit != "samples" ? 1 : 0),
                      count(q.is_null(24) ? 0 : static_cast<double>(q.column_int(24)))});
  }
  return t;
}

ReportTable searches_table(Database& db, int64_t run_id) {
  ReportTable t{
      "searches",
      "capacity search",
      {},
      {"store", "slo", "min_achieved", "max_compliant_rate", "limiting_step", "limiting_rate",
       "limit_reason", "limit_detail", "client_bound_rate", "steps", "stopped", "summary"},
      {},
      {},
      {}};
  t.header = t.keys;
  const auto objective = search_objective(db, run_id);
  const Rows results = load_search_results(db, run_id);
  for (const Row& q : results.rows) {
    auto txt = [&](int col) { return text(q.is_null(col) ? "-" : q.column_text(col)); };
    t.rows.push_back({text(q.column_text(0)), text(slo_text(objective)),
                      fixed(objective ? objective->min_achieved : kNaN, 2), count(opt(q, 1)),
                      count(q.is_null(2) ? kNaN : static_cast<double>(q.column_int(2) + 1)),
                      count(opt(q, 3)), txt(4), txt(5), count(opt(q, 6)), count(opt(q, 7)), txt(8),
                      txt(9)});
  }
  return t;
}

size_t key_index(const ReportTable& t, const std::string& key) {
  return static_cast<size_t>(std::find(t.keys.begin(), t.keys.end(), key) - t.keys.begin());
}

// Some columns of `t` (by key) under people's headers, the rows of one store.
ReportTable project(const ReportTable& t, const std::string& store,
                    const std::vector<std::pair<std::string, std::string>>& columns) {
  ReportTable p{t.name, t.title, {}, {}, {}, {}, {}};
  for (const auto& [key, header] : columns) {
    p.keys.push_back(key);
    p.header.push_back(header);
  }
  for (const auto& row : t.rows) {
    if (row[0].text != store) continue;
    std::vector<ReportCell> cells;
    for (const auto& [key, header] : columns) cells.push_back(row[key_index(t, key)]);
    p.rows.push_back(std::move(cells));
  }
  return p;
}

const std::vector<std::pair<std::string, std::string>> kCurveColumns = {
    {"step", "step"},
    {"offered_rate", "offered req/s"},
    {"achieved_rate", "achieved req/s"},
    {"lat_p50_us", "p50 ms"},
    {"lat_p90_us", "p90 ms"},
    {"lat_p99_us", "p99 ms"},
    {"lat_p999_us", "p99.9 ms"},
    {"server_p99_us", "server p99 ms"},
    {"failed", "failed"},
    {"verdict", "verdict"},
    {"limit_reason", "limit"}};

const std::vector<std::pair<std::string, std::string>> kValidityColumns = {
    {"step", "step"},
    {"offered_rate", "offered req/s"},
    {"busiest_thread_cpu_pct", "client thread cpu %"},
    {"busiest_thread_wanted_pct", "on cpu or runnable %"},
    {"client_share_pct", "kvdrive share of the percentile %"},
    {"run_delay_max_us", "cpu wait ms/s"},
    {"slip_p50_us", "slip p50 ms"},
    {"slip_p99_us", "slip p99 ms"},
    {"store_cpu_pct", "store cpu %"},
    {"cg_cpu_throttled_pct", "store throttled %"},
    {"client_bound", "client-bound"}};

ReportTable validity(const ReportTable& steps, const std::string& store,
                     const std::optional<SearchObjective>& o) {
  ReportTable v = project(steps, store, kValidityColumns);
  for (auto& row : v.rows) row.back().text = row.back().value == 1.0 ? "yes" : "no";
  std::string rule =
      "validity: a step is client-bound (invalid, neither pass nor fail) when a "
      "kvdrive thread used more than ";
  rule += o && o->max_client_cpu ? fmt_int(*o->max_client_cpu * 100) : std::string("90");
  rule += " % of a core, or its send slip p99 exceeded ";
  rule += o && o->max_slip_p99_us ? duration_text(*o->max_slip_p99_us) : std::string("5ms");
  rule +=
      " while a thread was busy, or when it missed a latency bound only by kvdrive's own share "
      "of that percentile (client send + client recv: client-latency); \"on cpu or "
      "runnable\" is the busiest thread's run + run-queue time (schedstat)";
  v.notes_before.push_back(rule);
  return v;
}

std::vector<std::string> stores_of(const ReportTable& steps) {
  std::vector<std::string> out;
  for (const auto& row : steps.rows)
    if (std::find(out.begin(), out.end(), row[0].text) == out.end()) out.push_back(row[0].text);
  return out;
}

std::string summary_of(const ReportTable& searches, const std::string& store) {
  for (const auto& row : searches.rows)
    if (row[0].text == store) return row.back().text;
  return "search did not finish (no result recorded)";
}

}  // namespace

std::optional<SearchObjective> search_objective(Database& db, int64_t run_id) {
  const auto params = load_run_parameters(db, run_id);
  if (!params) return std::nullopt;
  auto j = nlohmann::json::parse(*params, nullptr, false);
  if (!j.is_object() || !j.contains("search") || !j["search"].is_object()) return std::nullopt;
  const auto& s = j["search"];
  SearchObjective o;
  auto number = [&](const char* key) -> std::optional<double> {
    if (s.contains(key) && s[key].is_number()) return s[key].get<double>();
    return std::nullopt;
  };
  if (s.contains("slo") && s["slo"].is_array())
    for (const auto& b : s["slo"])
      if (b.is_object() && b.contains("name") && b["name"].is_string() && b.contains("max_us") &&
          b["max_us"].is_number())
        o.latency.push_back({b["name"].get<std::string>(), b["max_us"].get<double>()});
  o.min_achieved = number("min_achieved").value_or(0);
  o.max_client_cpu = number("max_client_cpu");
  o.max_slip_p99_us = number("max_slip_p99_us");
  return o;
}

std::vector<ReportTable> search_tables(Database& db, int64_t run_id, bool keep_empty) {
  ReportTable steps = steps_table(db, run_id);
  if (steps.rows.empty() && !keep_empty) return {};
  std::vector<ReportTable> out;
  out.push_back(searches_table(db, run_id));
  out.push_back(std::move(steps));
  return out;
}

void print_search_results(Database& db, int64_t run_id, std::ostream& out, size_t width) {
  auto tables = search_tables(db, run_id);
  if (tables.empty()) return;
  const ReportTable &searches = tables[0], &steps = tables[1];
  const auto objective = search_objective(db, run_id);
  // A narrow terminal keeps the objective's percentiles.
  std::vector<std::string> curve_narrow;
  for (const char* key : {"lat_p90_us", "lat_p50_us", "lat_p999_us", "server_p99_us", "failed"}) {
    const bool in_objective =
        objective &&
        std::any_of(objective->latency.begin(), objective->latency.end(), [&](const auto& b) {
          std::string name = b.name;
          name.erase(std::remove(name.begin(), name.end(), '.'), name.end());
          return "lat_" + name + "_us" == key;
        });
    if (!in_objective) curve_narrow.emplace_back(key);
  }
  for (const auto& store : stores_of(steps)) {
    std::string title = "capacity search: " + store;
    if (objective) title += " (objective " + slo_text(objective) + ")";
    out << "\n" << wrap_words(title, width) << "\n";
    ReportTable curve = project(steps, store, kCurveColumns);
    curve.narrow_first = curve_narrow;
    print_table_text(curve, out, width);
    out << "\n";
    ReportTable valid = validity(steps, store, objective);
    valid.narrow_first = {"slip_p50_us",   "cg_cpu_throttled_pct", "busiest_thread_cpu_pct",
                          "store_cpu_pct", "run_delay_max_us",     "slip_p99_us"};
    print_table_text(valid, out, width);
    out << wrap_words(summary_of(searches, store), width) << "\n";
  }
}

namespace {

// One store's steps of a search, by offered rate, and what both of its charts share.
struct SearchCurve {
  std::vector<const std::vector<ReportCell>*> rows;  // rows of the steps table
  size_t offered = 0;                                // the offered_rate column
  double lo = INFINITY, hi = 0;                      // the offered rates' range
  svg::Axis x;
  std::optional<double> knee;  // the max compliant rate
};

SearchCurve search_curve(const ReportTable& searches, const ReportTable& steps,
                         const std::string& store) {
  SearchCurve c;
  c.offered = key_index(steps, "offered_rate");
  for (const auto& row : steps.rows)
    if (row[0].text == store && row[c.offered].value) {
      c.rows.push_back(&row);
      c.lo = std::min(c.lo, *row[c.offered].value);
      c.hi = std::max(c.hi, *row[c.offered].value);
    }
  std::stable_sort(c.rows.begin(), c.rows.end(), [&](auto* a, auto* b) {
    return *(*a)[c.offered].value < *(*b)[c.offered].value;
  });
  const bool log_x = c.lo > 0 && c.hi / c.lo > 30;
  c.x = svg::Axis{log_x ? "offered rate (req/s, log scale)" : "offered rate (req/s)",
                  log_x ? svg::Scale::log : svg::Scale::linear,
                  {},
                  {},
                  true,
                  {},
                  {}};
  for (const auto& row : searches.rows)
    if (row[0].text == store) c.knee = row[key_index(searches, "max_compliant_rate")].value;
  return c;
}

// Latency per step: the client's percentiles, the store's own p99 where it tells, and the
// objective's bounds.
svg::Chart latency_chart(const SearchCurve& c, const ReportTable& steps,
                         const std::optional<SearchObjective>& objective) {
  svg::Chart lat;
  lat.title = "Latency per step (intended-time, whole step after its warm-up; log scale)";
  lat.height = 300;
  lat.x = c.x;
  lat.y.label = "latency (ms)";
  lat.y.scale = svg::Scale::log;
  const std::pair<const char*, const char*> pcts[] = {{"lat_p50_us", "p50"},
                                                      {"lat_p90_us", "p90"},
                                                      {"lat_p99_us", "p99"},
                                                      {"lat_p999_us", "p99.9"}};
  const int colors[] = {2, 0, 3, 1};
  for (size_t k = 0; k < std::size(pcts); ++k) {
    svg::Series se;
    se.name = pcts[k].second;
    se.color = colors[k];
    se.markers = true;
    const size_t col = key_index(steps, pcts[k].first);
    for (const auto* row : c.rows) {
      const auto& cell = (*row)[col];
      // A percentile of too few requests (n/a) is not drawn.
      se.points.emplace_back(*(*row)[c.offered].value,
                             cell.value && cell.text != "n/a" ? *cell.value / 1000 : kNaN);
    }
    lat.series.push_back(std::move(se));
  }
  {
    // The store's own execution time (Redis 7 LATENCY HISTOGRAM): the gap to the client's
    // p99 is network, queueing and the client.
    svg::Series own;
    own.name = "server p99 (the store's own)";
    own.color = 3;
    own.dotted = true;
    own.markers = true;
    const size_t col = key_index(steps, "server_p99_us");
    for (const auto* row : c.rows)
      own.points.emplace_back(*(*row)[c.offered].value,
                              (*row)[col].value ? *(*row)[col].value / 1000 : kNaN);
    bool any = false;
    for (const auto& [px, py] : own.points) any = any || (std::isfinite(py) && py > 0);
    if (any) lat.series.push_back(std::move(own));
  }
  if (objective)
    for (const auto& b : objective->latency) {
      svg::Series line;
      line.name = "objective " + b.name + " ≤ " + duration_text(b.max_us);
      line.css_color = "#c0392b";  // in its percentile's colour where that one is drawn
      for (size_t k = 0; k < std::size(pcts); ++k)
        if (b.name == pcts[k].second) line.css_color = svg::palette(colors[k]);
      line.dashed = true;
      line.width = 1.4;
      line.points = {{c.lo, b.max_us / 1000}, {c.hi, b.max_us / 1000}};
      lat.series.push_back(std::move(line));
    }
  if (c.knee) lat.markers.push_back({*c.knee, "max compliant " + fmt_int(*c.knee) + " req/s"});
  return lat;
}

// Achieved against offered rate, each step a dot in its verdict's colour.
svg::Chart achieved_chart(const SearchCurve& c, const ReportTable& steps,
                          const std::optional<SearchObjective>& objective) {
  const size_t achieved = key_index(steps, "achieved_rate"), verdict = key_index(steps, "verdict"),
               limit = key_index(steps, "limit_reason");
  svg::Chart ach;
  ach.title = "Achieved vs offered rate, each step coloured by its verdict";
  ach.height = 280;
  ach.x = c.x;
  ach.y.label = "achieved (req/s)";
  if (c.x.scale == svg::Scale::log) ach.y.scale = svg::Scale::log;
  svg::Series ideal;
  ideal.name = "achieved = offered";
  ideal.css_color = "#999999";
  ideal.dotted = true;
  ideal.points = {{c.lo, c.lo}, {c.hi, c.hi}};
  ach.series.push_back(std::move(ideal));
  if (objective && objective->min_achieved > 0) {
    svg::Series floor;
    floor.name = "objective: achieved ≥ " + fmt_fixed(objective->min_achieved, 2) + " × offered";
    floor.css_color = "#c0392b";
    floor.dashed = true;
    floor.width = 1.4;
    floor.points = {{c.lo, c.lo * objective->min_achieved}, {c.hi, c.hi * objective->min_achieved}};
    ach.series.push_back(std::move(floor));
  }
  struct Kind {
    const char* name;
    const char* color;
  };
  const Kind kinds[] = {{"pass", "#2a9d4b"},
                        {"fail: objective", "#e67e22"},
                        {"fail: server distress", "#8e44ad"},
                        {"invalid: client-bound or too few requests", "#7f8c8d"}};
  for (int k = 0; k < 4; ++k) {
    svg::Series dots;
    dots.name = kinds[k].name;
    dots.css_color = kinds[k].color;
    dots.markers = true;
    dots.width = 0;
    for (const auto* row : c.rows) {
      const std::string& v = (*row)[verdict].text;
      const bool server = (*row)[limit].text.rfind("server", 0) == 0;
      const int kind = v == "pass" ? 0 : v == "invalid" ? 3 : server ? 2 : 1;
      if (kind != k || !(*row)[achieved].value) continue;
      if (!dots.points.empty()) dots.points.emplace_back(*(*row)[c.offered].value, kNaN);
      dots.points.emplace_back(*(*row)[c.offered].value, *(*row)[achieved].value);
    }
    if (!dots.points.empty()) ach.series.push_back(std::move(dots));
  }
  if (c.knee) ach.markers.push_back({*c.knee, "max compliant"});
  return ach;
}

}  // namespace

void write_search_html(Database& db, int64_t run_id, std::ostream& out) {
  auto tables = search_tables(db, run_id);
  if (tables.empty()) return;
  const ReportTable &searches = tables[0], &steps = tables[1];
  const auto objective = search_objective(db, run_id);
  for (const auto& store : stores_of(steps)) {
    out << "<h3>Capacity search on " << svg::escape_xml(store) << "</h3>\n<p class=\"hints\">"
        << svg::escape_xml(summary_of(searches, store)) << "</p>\n";
    const SearchCurve curve = search_curve(searches, steps, store);
    html_chart(latency_chart(curve, steps, objective), "no step completed a request", out);
    html_chart(achieved_chart(curve, steps, objective), "no step completed a request", out);
    out << "<p class=\"note\"><b>Curve</b> (steps in the order run)</p>\n";
    html_table(project(steps, store, kCurveColumns), out);
    out << "<p class=\"note\"><b>Validity</b>: was the client the limit?</p>\n";
    html_table(validity(steps, store, objective), out);
  }
}

}  // namespace kv::drive
