// The command-line options of `kvdrive run --search` (CLI11 stays in cli/*.cpp), and how they
// combine with the run's workload options.
#pragma once

#include <string>
#include <vector>

#include "workload/scenario.hpp"
#include "workload/search_options.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace kv::drive {

struct SearchCli {
  bool search = false;
  std::string slo, rates, min_achieved, max_error_rate, start, max, precision, growth, steps;
  std::string distress, max_slip, max_client_cpu;
  std::vector<CLI::Option*> given;  // every option but --search, to say it needs --search
};

// Adds --search, --slo, --rates ... to `run`, in a group of their own.
void add_search_options(CLI::App& run, SearchCli& cli);

// After parsing: the search's options, and the steps adjusted for it. Each step of the search
// is the workload's last phase (default phases with --search: load,mixed) at the step's rate;
// --duration and --warmup are each step's (defaults 5s and 1s). `phases_given`: --phases was
// on the command line or in the scenario; `warmup_given`: --warmup was (0 then means no
// warm-up, not the default). Throws UsageError naming the option.
SearchOptions finish_search_options(const SearchCli& cli, std::vector<RunStep>& steps,
                                    bool phases_given, bool warmup_given);

}  // namespace kv::drive
