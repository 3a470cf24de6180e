// `kvdrive mrc --trace FILE`: how big a cache a traced workload needs. The LRU miss ratio of the
// trace's reads at fractions of its working set, in objects and bytes (run/trace_mrc). CLI11
// stays in the .cpp.
#pragma once

#include <string>
#include <vector>

#include "run/trace_mrc.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class MrcCommand {
 public:
  explicit MrcCommand(CLI::App& app);
  MrcCommand(const MrcCommand&) = delete;
  MrcCommand& operator=(const MrcCommand&) = delete;

  bool parsed() const;
  // Checks what needs no reading of the trace: the file exists, the numbers. UsageError.
  void check(int argc, char** argv);
  // Reads the trace twice and prints the curve; returns the exit code. UsageError for a trace
  // that cannot be read or a line that does not parse ("FILE:LINE: why").
  int execute();

 private:
  // --db: the curve kept in the results file as a run of its own (trace_curves).
  void record(const TraceCurve& c) const;

  CLI::App* sub_ = nullptr;
  std::string trace_, max_keys_text_ = "8192", format_ = "text", db_, name_, command_line_;
  size_t max_keys_ = 8192;
};

}  // namespace kv::drive
