#include "cli/report_command.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "cli/output_file.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"

namespace kv::drive {

ReportCommand::ReportCommand(CLI::App& app)
    : sub_(app.add_subcommand("report", "Print the results recorded in a file")) {
  sub_->add_option("--db", db_, "Results file")->type_name("FILE")->required();
  sub_->add_option("--run", runs_text_,
                   "Only this run id; repeat it to compare runs side by side (ratios to the first)")
      ->type_name("ID");
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
  sub_->add_option("--out", out_,
                   "With --format csv: write every table to DIR/TABLE.csv (the directory must "
                   "exist)")
      ->type_name("DIR")
      ->check(cli::non_empty());
  sub_->add_option("table", table_,
                   "With --format csv: the one table to print (runs, stores, phases, steps, "
                   "server, timeline, process_samples, host_samples, events, comparison)")
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
  }
  if (!json_out_.empty()) {
    check_output_path("--json-out", json_out_);
    check_not_results_file("--json-out", json_out_, db_);
  }
  if (!percentiles_.empty()) list_ = parse_percentiles(percentiles_);
  const ReportFormat format = parse_report_format(format_);
  if (format != ReportFormat::csv && (!out_.empty() || !table_.empty()))
    throw std::invalid_argument(std::string(out_.empty() ? "a table name" : "--out") +
                                " goes with --format csv");
  if (!out_.empty() && !table_.empty())
    throw std::invalid_argument("--out writes every table: give it or a table name, not both");
  if (format == ReportFormat::csv && out_.empty() && table_.empty())
    throw std::invalid_argument(
        "--format csv prints one table: name it (kvdrive report --format csv phases) or "
        "write every table with --out DIR");
  if (!table_.empty()) {
    const auto& names = csv_table_names();
    if (std::find(names.begin(), names.end(), table_) == names.end())
      throw std::invalid_argument("unknown table '" + table_ + "'");
  }
  if (!out_.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(out_, ec))
      throw std::invalid_argument("--out '" + out_ + "': not a directory");
  }
}

int ReportCommand::execute() {
  // A file that can be written is opened as usual (which also marks runs whose kvdrive
  // died); one on a read-only filesystem or in a read-only directory is only read.
  Database db = results_file_writable(db_) ? open_results_db(db_) : open_results_read_only(db_);
  if (db.user_version() < schema::latest_version())
    throw std::invalid_argument("--db '" + db_ + "': schema version " +
                                std::to_string(db.user_version()) + " cannot be upgraded to " +
                                std::to_string(schema::latest_version()) + " read-only");
  report_runs(db, run_ids_);  // every listed run exists, before any file is written
  if (!html_.empty()) {
    write_file_atomically(
        html_, [&](std::ostream& html) { write_html_report(db, run_ids_, html, list_); },
        [&] { check_not_results_file("--html", html_, db_); });
    std::cerr << "kvdrive: wrote " << html_ << "\n";
  }
  const PercentileList& list = list_;
  if (!json_out_.empty()) {
    write_file_atomically(
        json_out_, [&](std::ostream& o) { write_json_document(db, run_ids_, list, o); },
        [&] { check_not_results_file("--json-out", json_out_, db_); });
    std::cerr << "kvdrive: wrote " << json_out_ << "\n";
  }
  if (!out_.empty()) {
    for (const auto& name : csv_table_names()) {
      std::ostringstream csv;
      print_csv_table(db, run_ids_, name, list, csv);
      if (csv.str().empty()) continue;
      const std::string path = (std::filesystem::path(out_) / (name + ".csv")).string();
      check_not_results_file("--out", path, db_);
      write_file_atomically(
          path, [&](std::ostream& o) { o << csv.str(); },
          [&] { check_not_results_file("--out", path, db_); });
      std::cerr << "kvdrive: wrote " << path << "\n";
    }
    return kExitOk;
  }
  print_report(db, run_ids_, parse_report_format(format_), std::cout, list, table_);
  return kExitOk;
}

}  // namespace kv::drive
