// The report's tables as data, so the text, CSV and HTML reports show the same numbers: each
// cell keeps the text people read ("12,345", "0.250" ms) and the raw value machines read (the
// column's unit in the results file: req/s, µs ...).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/percentiles.hpp"
#include "view/run_view.hpp"

namespace kv::drive {

struct ReportCell {
  std::string text;             // for people
  std::optional<double> value;  // for machines; nullopt: use text (or empty when text is "-")
};

struct ReportTable {
  // steps_pivot (text and HTML), steps (machine form of the same), stores, phases, comparison.
  std::string name;
  std::string title;
  std::vector<std::string> header;  // for people, with units: "p99 ms"
  std::vector<std::string> keys;    // for machines, with units: "lat_p99_us"
  std::vector<std::vector<ReportCell>> rows;
  std::vector<std::string> notes_before, notes_after;  // printed around the text table
  // The columns people see (text and HTML); 0: all. Those after them are for machines only
  // (CSV and JSON), e.g. the phases' wire_p99_us beside lat_p99_us.
  size_t shown = 0;
  // The columns (keys) a narrow terminal leaves out first, in this order (print_table_text).
  std::vector<std::string> narrow_first = {};
};

// Cells from the results file's values (NaN: unknown, shown "-").
namespace cells {
double opt(const Row& s, int col);    // the column's value, NaN for NULL
std::optional<double> raw(double v);  // nullopt for NaN
ReportCell text(std::string s);
ReportCell count(double v);  // "12,345"
ReportCell ms(double us);    // a value stored in µs, shown in ms: "0.250"
ReportCell fixed(double v, int decimals);
}  // namespace cells

// A run's tables: steps_pivot and steps for scenario runs, then stores, phases (with the
// `percentiles` of each phase, then its max; for machines also each part's percentiles:
// client_send_p99_us, wire_p99_us, client_recv_p99_us, queue_p99_us), parts (each phase's
// latency and its parts, a row each: "where the time went") and server. Tables with no rows are
// left out (a run without measurements gives none), unless `keep_empty`: then each is there,
// rows or not (CSV prints its header), but steps_pivot, whose columns are the stores' steps.
std::vector<ReportTable> run_tables(const RunView& view, const PercentileList& percentiles,
                                    bool keep_empty = false);
// The same of run `run_id`, loaded here.
std::vector<ReportTable> run_tables(Database& db, int64_t run_id,
                                    const PercentileList& percentiles = default_percentiles(),
                                    bool keep_empty = false);
// Runs side by side: for each run after the first, its store_summary against the first run's,
// stores matched by protocol and position (the 2nd redis target with the 2nd redis target),
// with ratios later/first per store and op.
std::vector<ReportTable> comparison_tables(Database& db, const std::vector<int64_t>& run_ids);

// For each run after the first: what differs from the first ("differences": scope, name,
// base_value, value): workload parameters (scope "parameter"), kvdrive's host and build
// ("client"), each target's own settings ("target N", by position); a value missing in one run
// is "-".
std::vector<ReportTable> difference_tables(Database& db, const std::vector<int64_t>& run_ids);

// A raw value as CSV writes it: a whole number in full (µs timestamps have 16 digits), any
// other to 10 significant digits.
std::string csv_number(double v);

// The aligned text table, with its notes. With `width` > 0 it is fitted to that many columns:
// notes wrapped, headers wrapped at their spaces; a table still too wide and led by a store
// column prints a table per store under its name, then leaves out columns of `narrow_first`
// (those with nothing to show first). Returns the headers left out.
std::vector<std::string> print_table_text(const ReportTable& t, std::ostream& out,
                                          size_t width = 0);
// A header line of keys (prefixed by `lead_key` if given), then one line per row: raw values,
// RFC 4180 quoting.
void print_table_csv(const ReportTable& t, std::ostream& out, const std::string& lead_key = "",
                     const std::string& lead_value = "");

}  // namespace kv::drive
