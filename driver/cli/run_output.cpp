#include "cli/run_output.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "cli/output_file.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "report/report.hpp"
#include "report/search_report.hpp"
#include "report/text_table.hpp"
#include "run/progress.hpp"

namespace kv::drive {
namespace {

// The summary's width: the terminal's when stdout is one, else $COLUMNS when set (a script
// that wants the narrow form), else 0: the whole tables.
size_t summary_width() {
  if (::isatty(STDOUT_FILENO) == 1) {
    const size_t cols = terminal_columns(STDOUT_FILENO);
    if (cols > 0) return cols;
  }
  const char* env = std::getenv("COLUMNS");
  if (env == nullptr) return 0;
  char* end = nullptr;
  const long cols = std::strtol(env, &end, 10);
  return end != env && *end == '\0' && cols >= 20 ? static_cast<size_t>(cols) : 0;
}

// Writes --json-out, the runs as one JSON document; false (the error logged) if it could not.
bool write_json_out(Database& db, const std::vector<int64_t>& run_ids, const RunOptions& opts,
                    const RunOutputs& outputs) {
  if (outputs.json_out.empty()) return true;
  try {
    write_file_atomically(
        outputs.json_out,
        [&](std::ostream& o) { write_json_document(db, run_ids, outputs.percentiles, o); },
        [&] {
          check_not_results_file("--json-out", outputs.json_out, opts.db_path);
          check_replaceable("--json-out", outputs.json_out, OutputKind::json, outputs.force);
        });
    return true;
  } catch (const std::exception& e) {
    log_error() << e.what();
    return false;
  }
}

}  // namespace

int print_run_record(RunRecord& rec, const RunOptions& opts, std::ostream& out,
                     const RunOutputs& outputs) {
  const std::string status = run_status_name(rec.status);
  const bool outputs_failed = !write_json_out(rec.db, {rec.run_id}, opts, outputs);
  if (opts.quiet) {
    // a group member: the parent prints the group's summary
  } else if (opts.json) {
    print_run_json(rec.db, rec.run_id, out, outputs.percentiles);
  } else {
    out << "\n";
    // A run that did not complete says so before any figure (its table still shows req/s).
    if (rec.status != RunStatus::completed) {
      out << "run " << rec.run_id << " "
          << (rec.status == RunStatus::failed ? "FAILED" : status.c_str())
          << (rec.error.empty() ? "" : ": " + rec.error) << "\n\n";
    }
    const size_t width = summary_width();
    if (opts.search.enabled)
      print_search_run_summary(rec.db, rec.run_id, out, width);
    else
      print_run_summary(rec.db, rec.run_id, out, outputs.percentiles, width);
    out << "\n"
        << wrap_words("results: " + opts.db_path + " (run " + std::to_string(rec.run_id) + ", " +
                          status + ")",
                      width)
        << "\n";
  }
  if (rec.status == RunStatus::failed) log_error() << rec.error;
  const int code = run_status_exit_code(rec.status);
  return code == kExitOk && outputs_failed ? kExitFailed : code;
}

int print_round_record(RunRecord& rec, const RunOptions& opts, std::ostream& out,
                       const RunOutputs& outputs) {
  RunOptions round = opts;
  round.quiet = opts.quiet || opts.json;  // the rounds' JSON is one document, at the end
  RunOutputs without_file = outputs;
  without_file.json_out.clear();
  return print_run_record(rec, round, out, without_file);
}

int print_rounds_record(Database& db, const std::vector<int64_t>& run_ids, int code,
                        const RunOptions& opts, std::ostream& out, const RunOutputs& outputs) {
  const bool written = write_json_out(db, run_ids, opts, outputs);
  if (opts.json) {
    write_json_document(db, run_ids, outputs.percentiles, out);
  } else if (!opts.quiet && !run_ids.empty()) {
    out << "\n"
        << wrap_words(std::to_string(run_ids.size()) + " of " + std::to_string(opts.rounds) +
                          " rounds recorded as runs " + std::to_string(run_ids.front()) + " to " +
                          std::to_string(run_ids.back()) + " (repeat group " + opts.repeat_group +
                          ")",
                      summary_width())
        << "\n";
  }
  return code == kExitOk && !written ? kExitFailed : code;
}

int print_group_record(GroupRecord& rec, const RunOptions& opts, std::ostream& out,
                       const RunOutputs& outputs) {
  if (!outputs.json_out.empty()) {
    try {
      write_file_atomically(
          outputs.json_out,
          [&](std::ostream& o) {
            write_group_json_document(rec.db, opts.run_group, rec.processes, rec.failures,
                                      outputs.percentiles, o);
          },
          [&] {
            check_not_results_file("--json-out", outputs.json_out, opts.db_path);
            check_replaceable("--json-out", outputs.json_out, OutputKind::json, outputs.force);
          });
    } catch (const std::exception& e) {
      log_error() << e.what();
      if (rec.exit_code == kExitOk) rec.exit_code = kExitFailed;
    }
  }
  if (opts.json) {  // --json: the group's summary as JSON too, not the table
    for (const auto& f : rec.failures) log_error() << f;
    print_group_json(rec.db, opts.run_group, rec.processes, rec.failures, out);
    return rec.exit_code;
  }
  out << "\n";
  if (!rec.failures.empty()) {
    out << (static_cast<size_t>(rec.processes) - rec.failures.size()) << " of " << rec.processes
        << " processes completed; " << rec.failures.size() << " did not:\n";
    for (const auto& f : rec.failures) {
      out << "  " << f << "\n";
      log_error() << f;
    }
    out << "\n";
  }
  print_group_summary(rec.db, opts.run_group, out);
  if (opts.search.enabled) {  // the group's search is recorded on its process 0's run
    auto first =
        rec.db.prepare("SELECT run_id FROM runs WHERE run_group = ? AND process_index = 0");
    first.bind(1, opts.run_group);
    if (first.step()) print_search_results(rec.db, first.column_int(0), out);
  }
  out << "\nresults: " << opts.db_path << " (group " << opts.run_group << ")\n";
  return rec.exit_code;
}

}  // namespace kv::drive
