// `kvdrive run`: its options, their checks once parsed (everything that needs no store), and
// the run itself. CLI11 stays in the .cpp.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/command_options.hpp"
#include "cli/memtier_flags.hpp"
#include "cli/run_output.hpp"
#include "cli/search_cli.hpp"
#include "run/run.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace kv::drive {

struct WorkloadOption;

class RunCommand {
 public:
  // Adds the `run` subcommand and its options to `app`, bound to this object (which must stay
  // where it is while `app` parses).
  explicit RunCommand(CLI::App& app);
  RunCommand(const RunCommand&) = delete;
  RunCommand& operator=(const RunCommand&) = delete;

  bool parsed() const;
  // After a successful parse of `run`: turns the options into RunOptions and checks everything
  // that needs no store (the scenario, workload, processes, timeout, --db, target URIs,
  // --monitor, the token file). Throws UsageError naming the option; writes nothing.
  void check(int argc, char** argv);
  // Installs the signal handlers and runs the benchmark (or the --processes group); returns
  // the exit code. Throws UsageError for bad input found late (nothing written),
  // another std::exception for a failure (exit 1).
  int execute(int argc, char** argv);

 private:
  // The constructor's option groups, in --help's order.
  void add_store_options(CLI::App& app);   // --db, --target, the scenario, the workload
  void add_output_options(CLI::App& app);  // limits and outputs: --timeout ... --hdr-log
  void add_group_options(CLI::App& app);   // --monitor, secrets, --processes, --segment
  // check()'s steps.
  void apply_memtier(bool phases_given, std::vector<std::pair<std::string, std::string>>& overrides,
                     std::vector<std::string>& notes);
  void parse_process_place();
  void parse_group_pipes();
  void parse_timeout();
  void check_hdr_logs(size_t targets) const;
  // --segment I/N: checks it (exit 2 on bad input) and gives each step's workload this
  // segment's share of the threads (WorkloadSpec::worker_first / worker_total).
  void apply_segment(const std::string& text);
  CLI::App* sub_ = nullptr;
  RunOptions opts_;
  std::string timeout_ = "5s", scenario_, scale_text_, max_errors_, processes_, process_index_,
              search_follow_, phase_barrier_;
  std::string give_up_ = "30s", percentiles_, json_out_, segment_, group_, start_at_;
  std::string repeat_;         // --repeat N
  void check_json_out();       // --json-out: a path kvbench may write (not in a group's process)
  void check_repeat();         // --repeat N and its partners: exit 2 for those it cannot go with
  int run_rounds();            // --repeat N: the rounds, then the rounds' outputs
  std::string password_file_;  // --password-file: redis targets' password, not in argv
  std::vector<std::string> password_notes_;  // warned once the command line is known good
  // Redis passwords from outside argv (a --processes parent's, --password-file, REDISCLI_AUTH)
  // into the targets whose URI has none; a warning when one is in argv.
  void resolve_passwords(int argc, char** argv);
  RunOutputs outputs_;
  MemtierFlags memtier_;  // memtier_benchmark's command line
  // The workload options, from the one table that scenario files use too.
  std::vector<std::pair<const WorkloadOption*, CLI::Option*>> workload_cli_;
  std::map<std::string, std::string> workload_text_;
  std::map<std::string, bool> workload_flags_;
  SearchCli search_cli_;     // --search and its options
  CommandOptions commands_;  // --command and its --command-ratio, --command-key-pattern
};

// --scale's value: a number above 0 and at most 1000; throws UsageError otherwise.
double parse_scale(std::string_view text);

}  // namespace kv::drive
