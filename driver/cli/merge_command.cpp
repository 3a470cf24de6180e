#include "cli/merge_command.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <optional>

#include "kvbench/cli_validators.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/usage_error.hpp"
#include "report/group_report.hpp"
#include "report/report.hpp"
#include "results/merge.hpp"

namespace kv::drive {
namespace {

std::atomic<bool> g_merge_stop{false};  // set by SIGINT/SIGTERM: the merge rolls back

void on_merge_signal(int) { g_merge_stop.store(true); }

}  // namespace

MergeCommand::MergeCommand(CLI::App& app)
    : sub_(app.add_subcommand(
          "merge",
          "Bring several results files into one (runs keyed by their UUID: merging a file again "
          "adds nothing); print each group's latency from the added histograms")) {
  sub_->add_option("--db", out_, "The results file to merge into (created if missing)")
      ->type_name("FILE")
      ->required()
      ->check(cli::non_empty());
  sub_->add_option("inputs", inputs_, "Results files to read (opened read-only)")
      ->type_name("FILE")
      ->required();
}

bool MergeCommand::parsed() const { return sub_->parsed(); }

void MergeCommand::check() {
  for (const auto& in : inputs_) {
    std::error_code ec;
    if (!std::filesystem::exists(in, ec)) throw UsageError("merge: '" + in + "': no such file");
    check_results_path("merge input", in, true);
    check_not_results_file("--db", out_, in);
  }
  check_results_path("--db", out_, false);
  std::error_code ec;
  out_existed_ = std::filesystem::exists(out_, ec) && std::filesystem::file_size(out_, ec) > 0;
}

int MergeCommand::execute() {
  // Ctrl-C or SIGTERM before the commit: the transaction rolls back and a new OUT is removed,
  // so OUT is the whole merge or as it was; after the commit the merge is complete anyway.
  struct sigaction sa {};
  sa.sa_handler = on_merge_signal;
  sa.sa_flags = SA_RESTART;  // SQLite's reads and writes go on; the flag is looked at per row
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::vector<Database> dbs;
  for (const auto& in : inputs_) dbs.push_back(open_results_read_only(in));
  std::vector<MergeInput> inputs;
  for (size_t i = 0; i < inputs_.size(); ++i) inputs.push_back(MergeInput{inputs_[i], &dbs[i]});
  MergeCounts counts;
  std::optional<Database> out;
  struct stat made {};
  try {
    out.emplace(open_results_db(out_));
    if (::stat(out_.c_str(), &made) != 0) made = {};
    counts = merge_results(*out, inputs, &g_merge_stop);
  } catch (...) {
    // A file this merge made is removed, but only while it is still that file and holds no
    // run or session (the merge's transaction rolled back): never what another process wrote.
    bool remove = false;
    if (!out_existed_ && out) {
      try {
        struct stat now {};
        auto rows = out->prepare(
            "SELECT (SELECT COUNT(*) FROM runs) + (SELECT COUNT(*) FROM monitor_sessions)");
        remove = ::stat(out_.c_str(), &now) == 0 && now.st_ino == made.st_ino &&
                 now.st_dev == made.st_dev && rows.step() && rows.column_int(0) == 0;
      } catch (...) {
        remove = false;  // unsure: keep it
      }
    }
    if (remove) {
      out.reset();
      std::error_code ec;
      for (const char* suffix : {"", "-wal", "-shm", "-journal"})
        std::filesystem::remove(out_ + suffix, ec);
    }
    try {
      throw;
    } catch (const MergeInterrupted&) {
      std::cerr << "kvdrive merge: interrupted: nothing merged, " << out_
                << (out_existed_ ? " left as it was"
                    : remove     ? " not created"
                                 : " left empty (not removed: unsure it is the one made here)")
                << "\n";
      return kExitInterrupted;
    }
  }
  std::cout << "merged " << inputs_.size() << " file" << (inputs_.size() == 1 ? "" : "s")
            << " into " << out_ << ": " << counts.runs_added << " run"
            << (counts.runs_added == 1 ? "" : "s") << " added (" << counts.runs_present
            << " there already), " << counts.sessions_added << " kvmon session"
            << (counts.sessions_added == 1 ? "" : "s") << " added (" << counts.sessions_present
            << " there already)\n";
  for (const auto& g : counts.groups) {
    std::cout << "\ngroup " << g << ": requests of all its runs over the group's wall time\n";
    print_group_summary(*out, g, std::cout);
  }
  if (!counts.groups.empty()) std::cout << "\n";
  print_group_latency(*out, counts.groups, default_percentiles(), std::cout);
  return kExitOk;
}

}  // namespace kv::drive
