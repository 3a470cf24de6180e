// A report table printed: as text fitted to a terminal's width, or as CSV (report_tables.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include "report/report_tables.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::vector<std::string> print_table_text(const ReportTable& t, std::ostream& out, size_t width) {
  for (const auto& n : t.notes_before) out << wrap_words(n, width) << "\n";
  const size_t shown = t.shown == 0 ? t.header.size() : std::min(t.shown, t.header.size());
  // The columns to leave out first: those with nothing to show, then the table's own order.
  std::vector<size_t> order;
  auto empty_column = [&](size_t c) {
    return std::all_of(t.rows.begin(), t.rows.end(),
                       [&](const auto& r) { return c >= r.size() || r[c].text == "-"; });
  };
  for (int pass = 0; pass < 2; ++pass)
    for (const auto& key : t.narrow_first) {
      const size_t c =
          static_cast<size_t>(std::find(t.keys.begin(), t.keys.end(), key) - t.keys.begin());
      if (c < shown && empty_column(c) == (pass == 0)) order.push_back(c);
    }
  auto table_of = [&](size_t from, const std::string& store) {
    std::vector<std::string> header(t.header.begin() + static_cast<std::ptrdiff_t>(from),
                                    t.header.begin() + static_cast<std::ptrdiff_t>(shown));
    TextTable tt(std::move(header));
    for (const auto& row : t.rows) {
      if (from > 0 && row[0].text != store) continue;
      std::vector<std::string> cells;
      for (size_t c = from; c < row.size() && c < shown; ++c) cells.push_back(row[c].text);
      tt.add_row(std::move(cells));
    }
    return tt;
  };
  std::vector<std::string> left_out;
  auto print = [&](const TextTable& tt, size_t from) {
    std::vector<size_t> narrow;
    for (size_t c : order)
      if (c >= from) narrow.push_back(c - from);
    for (auto& h : tt.print(out, width, narrow))
      if (std::find(left_out.begin(), left_out.end(), h) == left_out.end())
        left_out.push_back(std::move(h));
  };
  const TextTable whole = table_of(0, "");
  if (width > 0 && shown > 1 && !t.keys.empty() && t.keys[0] == "store" &&
      whole.narrowest() > width) {
    std::vector<std::string> stores;
    for (const auto& row : t.rows)
      if (std::find(stores.begin(), stores.end(), row[0].text) == stores.end())
        stores.push_back(row[0].text);
    for (size_t i = 0; i < stores.size(); ++i) {
      out << (i ? "\n" : "") << stores[i] << ":\n";
      print(table_of(1, stores[i]), 1);
    }
  } else {
    print(whole, 0);
  }
  for (const auto& n : t.notes_after) out << wrap_words(n, width) << "\n";
  return left_out;
}

std::string csv_number(double v) {
  char buf[40];
  if (std::abs(v) < 9e15 && v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

void print_table_csv(const ReportTable& t, std::ostream& out, const std::string& lead_key,
                     const std::string& lead_value) {
  auto line = [&](const std::string& lead, const std::vector<std::string>& cells) {
    if (!lead_key.empty()) out << csv_field(lead) << (cells.empty() ? "" : ",");
    for (size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << csv_field(cells[i]);
    out << "\n";
  };
  line(lead_key, t.keys);
  for (const auto& row : t.rows) {
    std::vector<std::string> cells;
    for (const auto& c : row) {
      if (c.value) {
        cells.push_back(csv_number(*c.value));
      } else {
        cells.push_back(c.text == "-" ? "" : c.text);
      }
    }
    line(lead_value, cells);
  }
}

}  // namespace kv::drive
