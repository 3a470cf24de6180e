#include "cli/compare_command.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <set>

#include "cli/output_file.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "view/rounds.hpp"

namespace kv::drive {
namespace {

size_t target_count(const std::vector<Round>& rounds) {
  std::set<int> ordinals;
  for (const Round& r : rounds)
    for (const RoundPhase& p : r.phases) ordinals.insert(p.target_ordinal);
  return ordinals.size();
}

std::string runs_label(const std::vector<int64_t>& ids) {
  std::string s = "runs";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : " ") + std::to_string(ids[i]);
  return s;
}

}  // namespace

double parse_percent(const std::string& option, const std::string& text, double lo, double hi) {
  std::string_view digits = text;
  if (!digits.empty() && digits.back() == '%') digits.remove_suffix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || p != digits.data() + digits.size() || !(v >= lo) ||
      !(v <= hi))
    throw UsageError(option + " '" + text + "': expected a percentage from " + fmt_fixed(lo, 0) +
                     "% to " + fmt_fixed(hi, 1) + "%, such as " + fmt_fixed((lo + hi) / 2, 0) +
                     "%");
  return v / 100;
}

CompareCommand::CompareCommand(CLI::App& app)
    : sub_(app.add_subcommand(
          "compare",
          "Is B faster than A? Compare the rounds of run --repeat N: each figure's ratio with a "
          "confidence interval and a verdict")) {
  sub_->add_option("--db", db_, "Results file")->type_name("FILE")->required();
  sub_->add_option("--group", groups_,
                   "A repeat group (runs.repeat_group, or the --name of its runs: the latest "
                   "so named): its targets against the first; given twice, the second group's "
                   "targets against the first's, position by position [default: the latest]")
      ->type_name("GROUP")
      ->check(cli::non_empty());
  sub_->add_option("--run", runs_text_,
                   "Take these runs as the rounds instead of a group (repeat it)")
      ->type_name("ID");
  sub_->add_option("--min-effect", min_effect_,
                   "The smallest difference that matters: an interval within it is 'no "
                   "detectable difference'")
      ->type_name("PCT")
      ->capture_default_str();
  sub_->add_option("--confidence", confidence_, "Confidence of the intervals")
      ->type_name("PCT")
      ->capture_default_str();
  sub_->add_option("--percentiles", percentiles_,
                   "Latency percentiles compared besides req/s [default: 50,99]")
      ->type_name("LIST")
      ->check(cli::parsed_by(parse_percentiles));
  sub_->add_option("--html", html_,
                   "Also write the comparison as one HTML page: each figure's rounds as points "
                   "with B's interval")
      ->type_name("FILE")
      ->check(cli::non_empty());
  sub_->add_flag("--force", force_, "Let --html replace a file kvbench did not write");
  sub_->add_option("--format", format_, "text, csv or json")
      ->type_name("FORMAT")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
}

bool CompareCommand::parsed() const { return sub_->parsed(); }

void CompareCommand::check() {
  check_results_path("--db", db_, true);
  for (const auto& id : runs_text_)
    run_ids_.push_back(parse_whole_number("--run", id, 1, INT64_MAX));
  if (groups_.size() > 2) throw UsageError("--group: give one or two");
  if (!groups_.empty() && !run_ids_.empty()) throw UsageError("--group and --run: give one");
  settings_.min_effect = parse_percent("--min-effect", min_effect_, 0, 100);
  settings_.confidence = parse_percent("--confidence", confidence_, 50, 99.9);
  if (!percentiles_.empty()) settings_.percentiles = parse_percentiles(percentiles_);
  if (!html_.empty()) {
    check_output_path("--html", html_);
    check_not_results_file("--html", html_, db_);
    check_replaceable("--html", html_, OutputKind::html, force_);
  }
}

int CompareCommand::execute() {
  Database db = results_file_writable(db_) ? open_results_db(db_) : open_results_read_only(db_);
  RoundsComparison c;
  if (!run_ids_.empty()) {
    const std::vector<Round> rounds = load_rounds(db, run_ids_, settings_.percentiles);
    for (const Round& r : rounds)
      if (r.status.empty())
        throw UsageError("--run " + std::to_string(r.run_id) + ": no such run in " + db_);
    c = compare_targets(rounds, runs_label(run_ids_), settings_);
  } else {
    if (groups_.empty()) {
      const auto latest = latest_repeat_group(db);
      if (!latest)
        throw UsageError("--db '" + db_ +
                         "': no repeat group (record rounds with kvdrive run "
                         "--repeat N, or name the runs with --run)");
      groups_.push_back(*latest);
    }
    std::vector<std::vector<Round>> sides;
    for (auto& g : groups_) {
      const auto group = resolve_repeat_group(db, g);
      if (!group)
        throw UsageError("--group '" + g + "': no such repeat group in " + db_ +
                         ", nor runs of that --name");
      g = *group;
      sides.push_back(load_rounds(db, load_repeat_group_runs(db, g), settings_.percentiles));
    }
    if (sides.size() == 1 && target_count(sides[0]) < 2)
      throw UsageError("--group '" + groups_[0] +
                       "': its rounds ran one target: compare it with another group "
                       "(--group " +
                       groups_[0] + " --group OTHER)");
    c = sides.size() == 1 ? compare_targets(sides[0], "repeat group " + groups_[0], settings_)
                          : compare_sides(sides[0], "repeat group " + groups_[0], sides[1],
                                          "repeat group " + groups_[1], settings_);
  }
  if (!html_.empty()) {
    write_file_atomically(
        html_, [&](std::ostream& o) { write_comparison_html(c, settings_, o); },
        [&] {
          check_not_results_file("--html", html_, db_);
          check_replaceable("--html", html_, OutputKind::html, force_);
        });
    std::cerr << "kvdrive: wrote " << html_ << "\n";
  }
  if (format_ == "json") {
    print_comparison_json(c, settings_, std::cout);
    return kExitOk;
  }
  const ReportTable t = comparison_table(c, settings_);
  if (format_ == "csv")
    print_table_csv(t, std::cout);
  else
    print_table_text(t, std::cout);
  return kExitOk;
}

}  // namespace kv::drive
