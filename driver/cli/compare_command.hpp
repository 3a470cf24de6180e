// `kvdrive compare`: is B really faster than A? The rounds of a `run --repeat N` (or runs named
// with --run), each target against the first, or two repeat groups position by position; each
// figure's ratio with its interval and a verdict. CLI11 stays in the .cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
  CLI::App* sub_ = nullptr;
  std::string db_, min_effect_ = "5%", confidence_ = "95%", percentiles_, format_ = "text", html_;
  bool force_ = false;
  std::vector<std::string> groups_, runs_text_;
  std::vector<int64_t> run_ids_;
  CompareSettings settings_;
};

// "5%" or "5": a percentage from `lo` to `hi` as a fraction (0.05); UsageError naming `option`.
double parse_percent(const std::string& option, const std::string& text, double lo, double hi);

}  // namespace kv::drive
