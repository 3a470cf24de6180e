#include "cli/mrc_command.hpp"

#include <CLI/CLI.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "kvbench/clock.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "report/report_tables.hpp"
#include "results/results_writer.hpp"
#include "run/trace_mrc.hpp"
#include "workload/trace.hpp"

namespace kv::drive {
namespace {

void print_json(const TraceCurve& c, const std::string& trace, size_t max_keys, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["trace"] = trace;
  j["requests"] = c.requests;
  j["reads"] = c.reads;
  j["max_keys"] = max_keys;
  j["keys_followed"] = c.keys_followed;
  j["sampling_rate"] = c.sampling_rate;
  j["keys"] = c.keys;
  j["bytes"] = c.bytes;
  Json& rows = j["curve"] = Json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"fraction", r.fraction},
                    {"objects", r.objects},
                    {"objects_miss_ratio", r.objects_miss_ratio},
                    {"bytes", r.bytes},
                    {"bytes_miss_ratio", r.bytes_miss_ratio}});
  out << j.dump(2) << "\n";
}

ReportTable curve_table(const TraceCurve& c, const std::string& trace) {
  ReportTable t{"miss_ratio_curve",
                "LRU miss ratio by cache size",
                {"working set", "objects", "miss ratio", "bytes", "miss ratio (bytes)"},
                {"fraction", "objects", "objects_miss_ratio", "bytes", "bytes_miss_ratio"},
                {},
                {},
                {}};
  t.notes_before.push_back(trace + ": " + fmt_int(static_cast<double>(c.requests)) + " requests, " +
                           fmt_int(static_cast<double>(c.reads)) + " reads; working set ~" +
                           fmt_int(std::round(c.keys)) + " keys, ~" +
                           format_size(static_cast<uint64_t>(std::llround(c.bytes))) + " (" +
                           (c.sampling_rate < 1
                                ? "SHARDS, " + fmt_int(static_cast<double>(c.keys_followed)) +
                                      " keys followed, rate " + fmt_fixed(c.sampling_rate, 4)
                                : std::string("every key followed: exact")) +
                           "). An LRU cache, filled on a miss; a read's miss ratio per size.");
  for (const auto& r : c.rows)
    t.rows.push_back({cells::text(fmt_fixed(r.fraction * 100, 0) + " %"),
                      cells::count(static_cast<double>(r.objects)),
                      cells::fixed(r.objects_miss_ratio, 3), cells::text(format_size(r.bytes)),
                      cells::fixed(r.bytes_miss_ratio, 3)});
  return t;
}

}  // namespace

MrcCommand::MrcCommand(CLI::App& app)
    : sub_(app.add_subcommand("mrc",
                              "How big a cache does a trace need? The LRU miss ratio of its "
                              "reads by cache size, in objects and bytes (SHARDS)")) {
  sub_->add_option("--trace", trace_,
                   "A cache trace: timestamp,key,key size,value size,client id,operation,TTL "
                   "per line (the Twitter traces' format), plain or zstd")
      ->type_name("FILE")
      ->required();
  sub_->add_option("--max-keys", max_keys_text_,
                   "Follow at most this many keys (memory ~400 B each); a trace with no more "
                   "distinct keys gets the exact curve")
      ->type_name("N")
      ->capture_default_str();
  sub_->add_option("--db", db_,
                   "Also keep the curve in this results file, as a run of its own (table "
                   "trace_curves; kvdrive report --html draws it)")
      ->type_name("FILE");
  sub_->add_option("--name", name_, "With --db: the run's name")->type_name("NAME");
  sub_->add_option("--format", format_, "text, csv or json")
      ->type_name("FORMAT")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
}

bool MrcCommand::parsed() const { return sub_->parsed(); }

void MrcCommand::check(int argc, char** argv) {
  if (!name_.empty() && db_.empty()) throw UsageError("--name is for --db (the curve's run)");
  if (!db_.empty()) check_results_path("--db", db_, false);
  command_line_ = join_command_line(argc, argv);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(trace_, ec))
    throw UsageError("--trace '" + trace_ + "': no such file");
  max_keys_ = static_cast<size_t>(parse_whole_number("--max-keys", max_keys_text_, 1, 1 << 24));
}

int MrcCommand::execute() {
  TraceCurve c;
  try {
    c = trace_miss_ratio_curve(trace_, max_keys_, curve_fractions());
  } catch (const TraceError& e) {
    throw UsageError(std::string("--trace ") + e.what());
  }
  if (!db_.empty()) record(c);
  if (format_ == "json") {
    print_json(c, trace_, max_keys_, std::cout);
    return kExitOk;
  }
  const ReportTable t = curve_table(c, trace_);
  if (format_ == "csv")
    print_table_csv(t, std::cout);
  else
    print_table_text(t, std::cout);
  return kExitOk;
}

void MrcCommand::record(const TraceCurve& c) const {
  Database db = open_results_db(db_);
  ResultsWriter writer(db);
  RunInfo info;
  info.name = name_;
  info.command_line = command_line_;
  info.parameters_json = nlohmann::ordered_json{{"trace", trace_}, {"max_keys", max_keys_}}.dump(
      -1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  info.started_ts_us = now_ts_us();
  const int64_t run_id = writer.begin_run(info);
  writer.write_trace_curve(run_id, trace_, c);
  writer.end_run(run_id, "completed", "");
  log_info() << "curve recorded into " << db_ << " as run " << run_id;
}

}  // namespace kv::drive
