// `kvdrive compare`: rounds against rounds, each figure's ratio B/A with its interval and a
// verdict (stats/compare_stats.hpp says how), rounds unfit to judge by left out and named.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/report_tables.hpp"
#include "stats/compare_stats.hpp"
#include "view/rounds.hpp"

namespace kv::drive {

struct CompareSettings {
  double confidence = 0.95;
  double min_effect = 0.05;                  // the smallest difference that matters: 5 %
  PercentileList percentiles{{50.0, 99.0}};  // the latency figures compared, besides req/s
  // Count client-bound rounds: comparing two kvdrive builds (or client settings), where the
  // client is what is measured.
  bool keep_client_bound = false;
};

// One figure of one phase: B's rounds against A's.
struct FigureComparison {
  std::string store, against;  // B's target and A's (URIs)
  int phase_ordinal = 0;
  std::string kind, op;
  std::string figure;  // "req/s", or a percentile's label ("p99")
  bool higher_is_better = true;
  std::vector<double> a, b;  // the values of the rounds that count (req/s, or µs)
  compare::RatioInterval interval;
  compare::Verdict verdict = compare::Verdict::indeterminate;
};

struct RoundsComparison {
  std::string a_label, b_label;  // "repeat group G", "runs 3, 5, 7", "target 1 of ..."
  std::vector<FigureComparison> figures;
  std::vector<std::string> left_out;  // a line per round left out of the verdicts, and why
  std::vector<std::string> notes;     // targets that found no match
};

// Why a round cannot be judged by (empty: it can): not completed, requests failed or dropped
// (due and never sent), seconds when kvdrive itself stalled, or a worker thread that used
// nearly a whole core (the client may have set the pace, not the store) unless
// `keep_client_bound`.
std::string round_unfit(const Round& r, bool keep_client_bound = false);

// One set of rounds (a repeat group, or given runs): each target after the first against the
// first (B = target 2, 3 ..., A = target 1), phases matched by position and op.
RoundsComparison compare_targets(const std::vector<Round>& rounds, const std::string& label,
                                 const CompareSettings& settings);
// Two sets: the target at each position of `b` against the one at that position of `a`, when
// their protocols agree.
RoundsComparison compare_sides(const std::vector<Round>& a, const std::string& a_label,
                               const std::vector<Round>& b, const std::string& b_label,
                               const CompareSettings& settings);

// The comparison as a table ("comparisons"), its method and the rounds left out as notes.
ReportTable comparison_table(const RoundsComparison& c, const CompareSettings& settings);
// The comparison as one HTML page: the table, then a chart per row with each side's rounds as
// points (in the order they count) and B's interval scaled to A's median, so the spread shows.
void write_comparison_html(const RoundsComparison& c, const CompareSettings& settings,
                           std::ostream& out);
// The comparison as one JSON object (docs/output-fields.md, "kvdrive compare").
void print_comparison_json(const RoundsComparison& c, const CompareSettings& settings,
                           std::ostream& out);

}  // namespace kv::drive
