#include "cli/command_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>

#include "kvbench/op_type.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "workload/command_template.hpp"
#include "workload/scenario.hpp"

namespace kv::drive {

void CommandOptions::add_to(CLI::App& run) {
  run.add_option("--command", commands_,
                 "A Redis command of your own, repeatable (memtier's): __key__ and __data__ "
                 "become each request's key and value, e.g. 'HSET __key__ f __data__'; sent by "
                 "mixed phases beside --mix/--ratio (alone when neither is given), each its own "
                 "op named after its command word")
      ->type_name("TEMPLATE");
  run.add_option("--command-ratio", ratios_,
                 "The --command before it: its weight in the mix [default: 1]")
      ->type_name("N");
  run.add_option("--command-key-pattern", patterns_,
                 "The --command before it: its keys' pattern, memtier's R (uniform), G, S, P or "
                 "any --key-pattern [default: --key-pattern]")
      ->type_name("PATTERN");
}

namespace {

// The --command-ratio / --command-key-pattern `value` for `c`.
void set_ratio(CommandTemplate& c, const std::string& value) {
  c.weight = static_cast<uint32_t>(parse_whole_number("--command-ratio", value, 0, 1'000'000));
}
void set_pattern(CommandTemplate& c, const std::string& value) {
  c.pattern = parse_command_key_pattern(value);
  c.pattern_given = true;
}

}  // namespace

std::vector<CommandTemplate> CommandOptions::parse(const CLI::App& run) const {
  const CLI::Option* command = run.get_option("--command");
  const CLI::Option* ratio = run.get_option("--command-ratio");
  const CLI::Option* pattern = run.get_option("--command-key-pattern");
  std::vector<CommandTemplate> out;
  const auto add = [&](const std::string& text) {
    if (out.size() == kMaxCommands)
      throw UsageError("--command: at most " + std::to_string(kMaxCommands) + " commands");
    out.push_back(parse_command_template(text));
  };
  std::vector<bool> ratio_set, pattern_set;
  size_t c = 0, r = 0, p = 0;  // the next value of each
  for (const CLI::Option* opt : run.parse_order()) {
    if (opt == command && c < commands_.size()) {
      add(commands_[c++]);
      ratio_set.push_back(false);
      pattern_set.push_back(false);
    } else if (opt == ratio || opt == pattern) {
      const bool is_ratio = opt == ratio;
      const std::string flag = is_ratio ? "--command-ratio" : "--command-key-pattern";
      const std::string& value = is_ratio ? ratios_.at(r++) : patterns_.at(p++);
      if (out.empty())
        throw UsageError(flag + " " + value + ": comes after the --command it is for");
      std::vector<bool>& set = is_ratio ? ratio_set : pattern_set;
      if (set.back())
        throw UsageError(flag + " " + value + ": a second one for --command '" + out.back().text +
                         "'");
      set.back() = true;
      (is_ratio ? set_ratio : set_pattern)(out.back(), value);
    }
  }
  // A --config file's values are not in the parse order: there the three pair by position.
  if (c == 0 && !commands_.empty()) {
    if (ratios_.size() > commands_.size() || patterns_.size() > commands_.size() || r > 0 || p > 0)
      throw UsageError(
          "--command-ratio / --command-key-pattern: more than the --command values they are for");
    for (size_t i = 0; i < commands_.size(); ++i) {
      add(commands_[i]);
      if (i < ratios_.size()) set_ratio(out.back(), ratios_[i]);
      if (i < patterns_.size()) set_pattern(out.back(), patterns_[i]);
    }
  } else if (c < commands_.size() || r < ratios_.size() || p < patterns_.size()) {
    throw UsageError(
        "--command, --command-ratio and --command-key-pattern: give them together, on the "
        "command line or in the --config file");
  }
  if (!out.empty() &&
      std::all_of(out.begin(), out.end(), [](const CommandTemplate& t) { return t.weight == 0; }))
    throw UsageError("--command-ratio: every command's is 0");
  return out;
}

void apply_commands(const std::vector<CommandTemplate>& commands, bool phases_given,
                    bool scenario_given, std::vector<RunStep>& steps) {
  if (commands.empty()) return;
  if (scenario_given)
    throw UsageError("--command with --scenario: a scenario's steps have mixes of their own");
  for (RunStep& step : steps) {
    WorkloadSpec& w = step.workload;
    if (w.trace.on()) throw UsageError("--command with --trace: the trace's operations are sent");
    w.commands = commands;
    std::vector<MixEntry> others;  // the step's mix but the commands
    for (const MixEntry& e : w.op_mix())
      if (!op_is_command(e.op)) others.push_back(e);
    name_commands(w.commands, others);
    if (!phases_given) w.phases = {PhaseKind::mixed};
  }
  std::vector<std::string> names;
  for (const CommandTemplate& t : steps.front().workload.commands) names.push_back(t.name);
  set_command_names(names);
}

}  // namespace kv::drive
