// Scenario files: a published benchmark's workload as named steps of kvdrive options, shipped
// in driver/workload/scenarios/ (embedded at build time) or read from a file.
//
//   # comment
//   description = what it reproduces
//   keys = 5M            <- defaults for every step: kvdrive run option names
//   threads = 16
//   [step 20B]           <- a step; its options override the defaults
//   value-size = 20
//
// A file without [step] sections is one step.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "workload/workload.hpp"

namespace kv::drive {

struct EmbeddedText {
  const char* name;
  const char* text;
};
// The scenario files shipped with kvdrive.
const std::vector<EmbeddedText>& shipped_scenarios();

struct Scenario {
  struct Step {
    std::string name;
    std::vector<std::pair<std::string, std::string>> options;
  };
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, std::string>> defaults;
  std::vector<Step> steps;
};

// Parses scenario text. Throws UsageError "scenario NAME, line N: ..." for syntax
// errors, unknown options and bad values (every option is checked by applying it).
Scenario parse_scenario(std::string_view name, std::string_view text);
// A shipped scenario by name, or a file by path. Throws UsageError if neither.
Scenario load_scenario(const std::string& name_or_path);

struct RunStep {
  std::string name;  // empty outside scenarios
  WorkloadSpec workload;
};
// The steps' workloads: base ← scenario defaults ← step options ← `overrides` (explicit
// command-line options), then scaled by `scale` and checked (check_workload with
// `warmup_added`). Throws UsageError.
std::vector<RunStep> expand_scenario(
    const Scenario& s, const WorkloadSpec& base,
    const std::vector<std::pair<std::string, std::string>>& overrides, double scale,
    bool warmup_added = false);

}  // namespace kv::drive
