// `kvdrive merge --db OUT IN...`: several results files (one per client host of a `--group`, a
// kvmon's own file from a database host, an earlier merge) brought into OUT
// (results/merge.hpp), then each group's latency recomputed from the added histograms
// (report/group_latency.hpp). CLI11 stays in the .cpp.
#pragma once

#include <string>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class MergeCommand {
 public:
  // Adds the `merge` subcommand and its options to `app`, bound to this object (which must
  // stay where it is while `app` parses).
  explicit MergeCommand(CLI::App& app);
  MergeCommand(const MergeCommand&) = delete;
  MergeCommand& operator=(const MergeCommand&) = delete;

  bool parsed() const;
  // After a successful parse: every input an existing kvbench results file not newer than this
  // build, OUT a results file or a new file, and none of the inputs. Throws UsageError naming
  // the file; writes nothing.
  void check();
  // Merges (one transaction: on failure or Ctrl-C, OUT is as it was; a new OUT is removed on
  // failure), prints what was added and each group's latency; returns the exit code.
  int execute();

 private:
  CLI::App* sub_ = nullptr;
  std::string out_;
  std::vector<std::string> inputs_;
  bool out_existed_ = false;
};

}  // namespace kv::drive
