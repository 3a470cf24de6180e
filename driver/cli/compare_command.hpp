// `kvdrive compare`: is B really faster than A? The rounds of a `run --repeat N` (or runs named
// with --run), each target against the first; or two sides position by position: two repeat
// groups, or a baseline (another file's, or other runs') against --db's rounds. Each figure's
// ratio with its interval and a verdict. CLI11 stays in the .cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "report/compare_rounds.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class CompareCommand {
 public:
  explicit CompareCommand(CLI::App& app);
  CompareCommand(const CompareCommand&) = delete;
  CompareCommand& operator=(const CompareCommand&) = delete;

  bool parsed() const;
  // Checks the options that need no file read: --db a results file, the run ids, the figures.
  // Throws UsageError naming the option; writes nothing.
  void check();
  // Prints the comparison; returns the exit code. Throws UsageError for a group or run not in
  // the file, or nothing to compare.
  int execute();

 private:
  bool has_baseline() const;
  RoundsComparison compare_with_baseline(Database& db);
  RoundsComparison compare_within(Database& db);

  CLI::App* sub_ = nullptr;
  std::string db_, min_effect_ = "5%", confidence_ = "95%", percentiles_, format_ = "text", html_;
  bool force_ = false;
  std::vector<std::string> groups_, runs_text_, baseline_runs_text_;
  std::vector<int64_t> run_ids_, baseline_run_ids_;
  std::string baseline_, baseline_group_;  // the A side, when given apart from --db's
  CompareSettings settings_;
};

// "5%" or "5": a percentage from `lo` to `hi` as a fraction (0.05); UsageError naming `option`.
double parse_percent(const std::string& option, const std::string& text, double lo, double hi);

}  // namespace kv::drive
