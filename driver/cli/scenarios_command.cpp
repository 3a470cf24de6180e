#include "cli/scenarios_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "kvbench/exit_codes.hpp"
#include "workload/scenario.hpp"

namespace kv::drive {

ScenariosCommand::ScenariosCommand(CLI::App& app)
    : sub_(app.add_subcommand("scenarios", "List the shipped scenarios")) {}

bool ScenariosCommand::parsed() const { return sub_->parsed(); }

int ScenariosCommand::execute() {
  for (const auto& e : shipped_scenarios()) {
    Scenario s = parse_scenario(e.name, e.text);
    std::cout << e.name << "\n    " << s.description << " (" << s.steps.size()
              << (s.steps.size() == 1 ? " step" : " steps") << ")\n";
  }
  return kExitOk;
}

}  // namespace kv::drive
