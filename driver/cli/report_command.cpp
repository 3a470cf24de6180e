#include "cli/report_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/output_file.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "report/group_report.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"
#include "run/process_group.hpp"
#include "run/run.hpp"

namespace kv::drive {
namespace {

// The target ordinals of a group's runs: one HdrHistogram log each (write_group_hdr_logs).
std::vector<int> group_target_ordinals(Database& db, const std::string& group) {
  auto q = db.prepare(
      "SELECT DISTINCT t.ordinal FROM targets t JOIN runs r ON r.run_id = t.run_id "
      "WHERE r.run_group = ? ORDER BY t.ordinal");
  q.bind(1, group);
  std::vector<int> out;
  while (q.step()) out.push_back(static_cast<int>(q.column_int(0)));
  return out;
}

}  // namespace

ReportCommand::ReportCommand(CLI::App& app)
    : sub_(app.add_subcommand("report", "Print the results recorded in a file")) {
  sub_->add_option("--db", db_, "Results file")->type_name("FILE")->required();
  sub_->add_option("--run", runs_text_,
                   "Only this run id; repeat it to compare runs side by side (ratios to the first)")
      ->type_name("ID");
  sub_->add_option("--group", group_,
                   "Report this run group as the whole and each host's share (its --segment "
                   "runs brought together by kvdrive merge, or --processes): late, lagging and "
                   "client-bound hosts flagged")
      ->type_name("LABEL")
      ->check(cli::non_empty());
  sub_->add_option("--hdr-log", hdr_log_,
                   "With --group: also write the group's latencies as HdrHistogram interval "
                   "logs, PREFIX.<target ordinal>.hlog, each second the sum of its runs' "
                   "histograms")
      ->type_name("PREFIX")
      ->check(cli::non_empty());
  sub_->add_option("--format", format_, "Tables as text, csv or json")
      ->type_name("FORMAT")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
  sub_->add_option("--html", html_,
                   "Also write one self-contained HTML page with charts (SVG) to this file")
      ->type_name("FILE")
      ->check(cli::non_empty());
  sub_->add_option("--percentiles", percentiles_,
                   "Latency percentiles shown per phase, e.g. 50,90,99,99.9,99.99 (the max is "
                   "always shown) [default: 50,90,99,99.9]")
      ->type_name("LIST")
      ->check(cli::parsed_by(parse_percentiles));
  sub_->add_option("--json-out", json_out_,
                   "Also write the runs as one JSON document to this file (docs/output-fields.md)")
      ->type_name("FILE")
      ->check(cli::non_empty());
  sub_->add_flag("--force", force_,
                 "Let --html, --json-out and --out replace files kvbench did not write (refused "
                 "otherwise)");
  sub_->add_option("--out", out_,
                   "With --format csv: write every table to DIR/TABLE.csv (DIR is made if its "
                   "parent exists)")
      ->type_name("DIR")
      ->check(cli::non_empty());
  sub_->add_option(
          "table", table_,
          "With --format csv: the one table to print (runs, metadata, stores, phases, parts, "
          "steps, server, timeline, process_samples, host_samples, events, searches, "
          "search_steps, comparison, differences)")
      ->type_name("TABLE");
}

bool ReportCommand::parsed() const { return sub_->parsed(); }

void ReportCommand::check() {
  check_results_path("--db", db_, true);
  for (const auto& id : runs_text_)
    run_ids_.push_back(parse_whole_number("--run", id, 1, INT64_MAX));
  if (!html_.empty()) {
    check_output_path("--html", html_);
    check_not_results_file("--html", html_, db_);
    check_replaceable("--html", html_, OutputKind::html, force_);
  }
  if (!json_out_.empty()) {
    check_output_path("--json-out", json_out_);
    check_not_results_file("--json-out", json_out_, db_);
    check_replaceable("--json-out", json_out_, OutputKind::json, force_);
  }
  if (!percentiles_.empty()) list_ = parse_percentiles(percentiles_);
  const ReportFormat format = parse_report_format(format_);
  if (!group_.empty() &&
      (!run_ids_.empty() || format != ReportFormat::text || !html_.empty() || !json_out_.empty()))
    throw UsageError(
        "--group prints the group's text report: not with --run, --format, --html "
        "or --json-out");
  if (!hdr_log_.empty() && group_.empty())
    throw UsageError("--hdr-log writes a group's merged histograms: give --group LABEL");
  if (format != ReportFormat::csv && (!out_.empty() || !table_.empty()))
    throw UsageError(std::string(out_.empty() ? "a table name" : "--out") +
                     " goes with --format csv");
  if (!out_.empty() && !table_.empty())
    throw UsageError("--out writes every table: give it or a table name, not both");
  if (format == ReportFormat::csv && out_.empty() && table_.empty())
    throw UsageError(
        "--format csv prints one table: name it (kvdrive report --format csv phases) or "
        "write every table with --out DIR");
  if (!table_.empty()) {
    const auto& names = csv_table_names();
    if (std::find(names.begin(), names.end(), table_) == names.end())
      throw UsageError("unknown table '" + table_ + "'");
  }
  if (!out_.empty()) {
    // A directory that is not there yet is made (its parent must be one); a file is refused.
    std::error_code ec;
    const std::filesystem::path dir(out_);
    const bool exists = std::filesystem::exists(dir, ec);
    if (exists && !std::filesystem::is_directory(dir, ec))
      throw UsageError("--out '" + out_ + "': not a directory");
    std::string name = out_;  // "csv/" is the directory csv, in "."
    while (name.size() > 1 && name.back() == '/') name.pop_back();
    std::filesystem::path parent = std::filesystem::path(name).parent_path();
    if (parent.empty()) parent = ".";
    if (!exists && !std::filesystem::is_directory(parent, ec))
      throw UsageError("--out '" + out_ + "': no directory '" + parent.string() +
                       "' to make it in");
  }
}

// --group: the group's report, and with --hdr-log its logs (none of which may exist yet).
void ReportCommand::report_group(Database& db) {
  print_group_report(db, group_, list_, std::cout);  // refuses a group with no run
  if (!hdr_log_.empty()) {
    for (const int ordinal : group_target_ordinals(db, group_)) {
      const std::string path = hdr_log_path(hdr_log_, ordinal);
      check_output_path("--hdr-log", path);
      check_not_results_file("--hdr-log", path, db_);
      std::error_code ec;
      const bool exists = std::filesystem::exists(path, ec);
      if (ec) throw UsageError("--hdr-log: cannot check '" + path + "': " + ec.message());
      if (exists)
        throw UsageError("--hdr-log: '" + path + "' exists: remove it or choose another PREFIX");
    }
    write_group_hdr_logs(db, group_, hdr_log_);
    std::cerr << "kvdrive: wrote the group's HdrHistogram logs " << hdr_log_path(hdr_log_, 0)
              << (group_target_ordinals(db, group_).size() > 1 ? " ..." : "") << "\n";
  }
}

// --out DIR: every CSV table made, and every file it would replace checked, before the first is
// written.
void ReportCommand::write_csv_files(Database& db) {
  const PercentileList& list = list_;
  std::error_code ec;
  if (std::filesystem::create_directory(out_, ec))
    std::cerr << "kvdrive: made the directory " << out_ << "\n";
  else if (ec)
    throw std::runtime_error("--out '" + out_ + "': cannot make the directory: " + ec.message());
  std::vector<std::pair<std::string, std::string>> files;  // path, text
  for (const auto& name : csv_table_names()) {
    std::ostringstream csv;
    print_csv_table(db, run_ids_, name, list, csv);
    if (csv.str().empty()) continue;
    std::string path = (std::filesystem::path(out_) / (name + ".csv")).string();
    check_not_results_file("--out", path, db_);
    const std::string& text = files.emplace_back(std::move(path), std::move(csv).str()).second;
    check_replaceable("--out", files.back().first, OutputKind::csv, force_,
                      std::string_view(text).substr(0, text.find('\n')));
  }
  for (const auto& file : files) {
    const std::string& path = file.first;  // (a structured binding is no lambda capture)
    const std::string& text = file.second;
    const std::string_view header = std::string_view(text).substr(0, text.find('\n'));
    write_file_atomically(
        path, [&](std::ostream& o) { o << text; },
        [&] {
          check_not_results_file("--out", path, db_);
          check_replaceable("--out", path, OutputKind::csv, force_, header);
        });
    std::cerr << "kvdrive: wrote " << path << "\n";
  }
}

int ReportCommand::execute() {
  // A file that can be written is opened as usual (which also marks runs whose kvdrive
  // died); one on a read-only filesystem or in a read-only directory is only read (an older
  // schema: a copy in memory, upgraded).
  Database db = results_file_writable(db_) ? open_results_db(db_) : open_results_for_reading(db_);
  if (!group_.empty()) {
    report_group(db);
    return kExitOk;
  }
  report_runs(db, run_ids_);  // every listed run exists, before any file is written
  if (!html_.empty()) {
    write_file_atomically(
        html_, [&](std::ostream& html) { write_html_report(db, run_ids_, html, list_); },
        [&] {
          check_not_results_file("--html", html_, db_);
          check_replaceable("--html", html_, OutputKind::html, force_);
        });
    std::cerr << "kvdrive: wrote " << html_ << "\n";
  }
  const PercentileList& list = list_;
  if (!json_out_.empty()) {
    write_file_atomically(
        json_out_, [&](std::ostream& o) { write_json_document(db, run_ids_, list, o); },
        [&] {
          check_not_results_file("--json-out", json_out_, db_);
          check_replaceable("--json-out", json_out_, OutputKind::json, force_);
        });
    std::cerr << "kvdrive: wrote " << json_out_ << "\n";
  }
  if (!out_.empty()) {
    write_csv_files(db);
    return kExitOk;
  }
  print_report(db, run_ids_, parse_report_format(format_), std::cout, list, table_);
  return kExitOk;
}

}  // namespace kv::drive
