// `kvdrive check`: a gate for a pipeline. Compares the candidate's rounds (a repeat group of
// --db) with a baseline file's, target by target, and exits 0 when every objective holds, 4 when
// a regression beyond one is shown with confidence, 5 when the evidence says neither; the
// verdicts are kept in --db (check_results, events). CLI11 stays in the .cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/compare_rounds.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

// One objective of --max-regression: a figure and how much worse it may be.
struct CheckObjective {
  std::string name;                  // as given: throughput, p99 ...
  std::optional<double> percentile;  // nullopt: throughput (req/s)
  double max_regression = 0;         // 0.05: 5 %
};
// "throughput=5%,p99=10%": throughput (or req/s) and latency percentiles (p50, p99, p99.9), each
// with a percentage from 0 to 1000 (a p99 may double: 100 %); UsageError naming the problem.
std::vector<CheckObjective> parse_objectives(const std::string& text);

class CheckCommand {
 public:
  explicit CheckCommand(CLI::App& app);
  CheckCommand(const CheckCommand&) = delete;
  CheckCommand& operator=(const CheckCommand&) = delete;

  bool parsed() const;
  // Checks --db and --baseline (results files), the objectives and --confidence; throws
  // UsageError naming the option.
  void check();
  // Judges, prints a line per objective not met, records the verdicts; returns 0, 4 or 5.
  int execute();

 private:
  CLI::App* sub_ = nullptr;
  std::string db_, baseline_, objectives_text_, group_, baseline_group_, confidence_ = "95%";
  std::vector<CheckObjective> objectives_;
  CompareSettings settings_;
};

}  // namespace kv::drive
