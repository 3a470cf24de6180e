// `kvdrive scenarios`: lists the shipped scenarios. CLI11 stays in the .cpp.
#pragma once

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class ScenariosCommand {
 public:
  // Adds the `scenarios` subcommand to `app`.
  explicit ScenariosCommand(CLI::App& app);
  bool parsed() const;
  // Prints each shipped scenario's name and description; returns the exit code.
  int execute();

 private:
  CLI::App* sub_ = nullptr;
};

}  // namespace kv::drive
