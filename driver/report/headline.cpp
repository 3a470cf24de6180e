#include "report/headline.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "kvbench/units.hpp"
#include "report/search_report.hpp"

namespace kv::drive {
namespace {

std::optional<double> value_at(const ReportTable& t, const std::vector<ReportCell>& row,
                               const std::string& key) {
  const auto it = std::find(t.keys.begin(), t.keys.end(), key);
  if (it == t.keys.end()) return std::nullopt;
  const size_t c = static_cast<size_t>(it - t.keys.begin());
  if (c >= row.size() || !row[c].value || !std::isfinite(*row[c].value)) return std::nullopt;
  return row[c].value;
}

std::string ms_of(double us) { return fmt_fixed(us / 1000.0, 3) + " ms"; }

// "Reads: A is the fastest, 49,048 req/s, 1.30x B (37,772 req/s); p99 0.227 ms against
// 0.471 ms." for every op with a figure from two stores or more; one store: its figures.
void comparison(const ReportTable& stores, std::vector<std::string>& out) {
  struct Op {
    const char* name;
    const char* rate;
    const char* p99;
  };
  const Op ops[] = {{"Writes", "write_req_per_s", "write_p99_us"},
                    {"Reads", "read_req_per_s", "read_p99_us"},
                    {"Mixed", "mixed_req_per_s", "mixed_p99_us"}};
  if (stores.rows.size() == 1) {
    const auto& row = stores.rows[0];
    std::string s = row[0].text + ":";
    bool any = false;
    for (const Op& op : ops) {
      const auto rate = value_at(stores, row, op.rate);
      if (!rate) continue;
      std::string name = op.name;
      name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[0])));
      s += std::string(any ? ";" : "") + " " + name + " " + fmt_int(*rate) + " req/s";
      if (const auto p99 = value_at(stores, row, op.p99)) s += " at p99 " + ms_of(*p99);
      any = true;
    }
    if (any) out.push_back(s + ".");
    return;
  }
  for (const Op& op : ops) {
    struct Entry {
      std::string store;
      double rate;
      std::optional<double> p99;
    };
    std::vector<Entry> e;
    for (const auto& row : stores.rows)
      if (const auto rate = value_at(stores, row, op.rate))
        e.push_back({row[0].text, *rate, value_at(stores, row, op.p99)});
    if (e.size() < 2) continue;
    std::stable_sort(e.begin(), e.end(),
                     [](const Entry& a, const Entry& b) { return a.rate > b.rate; });
    std::string s = std::string(op.name) + ": " + e[0].store + " is the fastest, " +
                    fmt_int(e[0].rate) + " req/s";
    for (size_t i = 1; i < e.size(); ++i) {
      s += i == 1 ? ", " : "; ";
      if (e[i].rate > 0)
        s += fmt_fixed(e[0].rate / e[i].rate, 2) + "x " + e[i].store + " (" + fmt_int(e[i].rate) +
             " req/s)";
      else
        s += e[i].store + " completed none";
    }
    if (std::all_of(e.begin(), e.end(), [](const Entry& x) { return x.p99.has_value(); })) {
      s += "; p99 " + ms_of(*e[0].p99);
      for (size_t i = 1; i < e.size(); ++i) s += (i == 1 ? " against " : ", ") + ms_of(*e[i].p99);
    }
    out.push_back(s + ".");
  }
}

}  // namespace

Headline run_headline(Database& db, const RunView& v, const std::vector<ReportTable>& tables) {
  const int64_t run_id = v.run_id;
  Headline h;
  // A search's answer first: the rate that meets the objective, per store.
  auto searches = search_tables(db, run_id);
  h.searched = !searches.empty();
  if (h.searched) {
    const ReportTable& t = searches[0];
    for (const auto& row : t.rows) {
      std::string summary = row.back().text;
      summary = summary.substr(0, summary.find('\n'));
      h.answers.push_back(row[0].text + ": " + summary);
    }
  }
  if (!h.searched) {
    for (const auto& t : tables)
      if (t.name == "stores") comparison(t, h.answers);
  }
  if (h.answers.empty() && !tables.empty() && tables.front().name == "steps_pivot")
    h.answers.push_back("A scenario of " + std::to_string(tables.front().rows.size()) +
                        " steps: the step charts and the per-step table below compare them.");

  const RunValidity& validity = v.validity;
  if (!v.run.empty() && v.header.status != "completed") {
    h.valid = false;
    h.validity.push_back("The run " + v.header.status +
                         (v.header.error ? ": " + *v.header.error : std::string(".")));
  }
  const int64_t failed = validity.failed, dropped = validity.dropped,
                stalls = validity.client_stalls, bound = validity.client_bound;
  if (failed > 0)
    h.validity.push_back(fmt_int(static_cast<double>(failed)) +
                         " requests failed (errors and timeouts): see the phases' errors.");
  if (dropped > 0)
    h.validity.push_back(fmt_int(static_cast<double>(dropped)) +
                         " due requests could not be sent before their phase ended (dropped).");
  if (stalls > 0)
    h.validity.push_back(
        std::to_string(stalls) + (stalls == 1 ? " second's" : " seconds'") +
        " p99 was mostly kvdrive's own time (client_stall events): those latencies are partly "
        "the client's, not the store's.");
  if (bound > 0)
    h.validity.push_back("kvdrive was client-bound " + std::to_string(bound) +
                         (bound == 1 ? " time" : " times") +
                         " (a thread near a full core): the rates may be the client's limit.");
  h.valid = h.valid && failed == 0 && dropped == 0 && stalls == 0 && bound == 0;
  if (h.valid)
    h.validity.emplace_back(
        "Valid: the run completed with no failed or dropped request, and no second's latency "
        "was mostly kvdrive's own.");
  return h;
}

}  // namespace kv::drive
