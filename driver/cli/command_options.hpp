// --command TEMPLATE, repeatable, each followed by its --command-ratio N and
// --command-key-pattern P (memtier_benchmark's spelling and pairing: a ratio or pattern belongs
// to the --command before it). CLI11 stays in the .cpp.
#pragma once

#include <string>
#include <vector>

#include "workload/workload.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

struct RunStep;

class CommandOptions {
 public:
  // Adds the three options to `run`.
  void add_to(CLI::App& run);
  // The commands in the order given, each with its ratio and pattern, from `run`'s parse order
  // (from a --config file, where CLI11 keeps no order, the three lists pair by position).
  // Throws UsageError (a ratio or pattern before any --command, or given twice for one, more
  // than kMaxCommands commands, a bad template, ratio or pattern, the three split between the
  // command line and a config file).
  std::vector<CommandTemplate> parse(const CLI::App& run) const;

 private:
  std::vector<std::string> commands_, ratios_, patterns_;
};

// Gives each step the commands, named (name_commands) after the step's other ops; without
// --phases, a step's phases become one mixed phase (memtier's meaning: the commands alone).
// Registers the names for this process's rows (set_command_names). Throws UsageError with
// --scenario (its steps have mixes of their own).
void apply_commands(const std::vector<CommandTemplate>& commands, bool phases_given,
                    bool scenario_given, std::vector<RunStep>& steps);

}  // namespace kv::drive
