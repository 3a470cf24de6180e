// `kvdrive report`: its options, their checks once parsed, and the report. CLI11 stays in the
// .cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "view/percentiles.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class ReportCommand {
 public:
  // Adds the `report` subcommand and its options to `app`, bound to this object (which must
  // stay where it is while `app` parses).
  explicit ReportCommand(CLI::App& app);
  ReportCommand(const ReportCommand&) = delete;
  ReportCommand& operator=(const ReportCommand&) = delete;

  bool parsed() const;
  // After a successful parse of `report`: checks --db (a kvbench results file), the run ids
  // and the --html path. Throws UsageError naming the option; writes nothing.
  void check();
  // Prints the report (and writes the --html page); returns the exit code. Throws
  // UsageError for bad input (an unknown run, a schema too old to read read-only),
  // another std::exception for a failure (exit 1).
  int execute();

 private:
  void report_group(Database& db);     // --group
  void write_csv_files(Database& db);  // --out DIR
  CLI::App* sub_ = nullptr;
  std::string db_;
  std::vector<std::string> runs_text_;
  std::vector<int64_t> run_ids_;
  std::string format_ = "text", html_, percentiles_, json_out_, out_, table_, group_, hdr_log_;
  bool force_ = false;  // --force: an output may replace a file kvbench did not write
  PercentileList list_ = default_percentiles();
};

}  // namespace kv::drive
