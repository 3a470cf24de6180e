#include "cli/compare_command.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <iostream>
#include <optional>
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

// Runs `ids` of `db` (the file `path`) as rounds; UsageError naming `option` for one that is not.
std::vector<Round> load_listed_runs(Database& db, const std::vector<int64_t>& ids,
                                    const PercentileList& list, const std::string& option,
                                    const std::string& path) {
  std::vector<Round> rounds = load_rounds(db, ids, list);
  for (const Round& r : rounds)
    if (r.status.empty())
      throw UsageError(option + " " + std::to_string(r.run_id) + ": no such run in " + path);
  return rounds;
}

// The runs of repeat group `wanted` (a group or a run --name), or of the file's latest group
// when empty; `group` gets the group's id. UsageError naming the options when there is none.
std::vector<int64_t> group_runs(Database& db, const std::string& wanted, std::string& group,
                                const std::string& file_option, const std::string& group_option,
                                const std::string& run_option, const std::string& path) {
  const auto found = wanted.empty() ? latest_repeat_group(db) : resolve_repeat_group(db, wanted);
  if (!found && wanted.empty())
    throw UsageError(file_option + " '" + path +
                     "': no repeat group (record rounds with kvdrive run --repeat N, or name "
                     "the runs with " +
                     run_option + ")");
  if (!found)
    throw UsageError(group_option + " '" + wanted + "': no such repeat group in " + path +
                     ", nor runs of that --name");
  group = *found;
  return load_repeat_group_runs(db, group);
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
                   "Take these runs as the rounds instead of a group (repeat it); with a "
                   "baseline, B's rounds")
      ->type_name("ID");
  sub_->add_option("--baseline", baseline_,
                   "A's rounds come from this results file (only read), B's from --db's "
                   "--group or --run")
      ->type_name("FILE");
  sub_->add_option("--baseline-group", baseline_group_,
                   "A's repeat group (or run --name) in --baseline's file, or in --db's "
                   "[default: the latest]")
      ->type_name("GROUP")
      ->check(cli::non_empty());
  sub_->add_option("--baseline-run", baseline_runs_text_,
                   "A's rounds: these runs of --baseline's file, or of --db's (repeat it)")
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
  sub_->add_flag("--keep-client-bound", settings_.keep_client_bound,
                 "Count the rounds whose client was near a whole core: for comparing two "
                 "kvdrive builds or client settings, where the client is what is measured");
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
  for (const auto& id : baseline_runs_text_)
    baseline_run_ids_.push_back(parse_whole_number("--baseline-run", id, 1, INT64_MAX));
  if (!baseline_.empty()) check_results_path("--baseline", baseline_, true);
  if (groups_.size() > 2) throw UsageError("--group: give one or two");
  if (!groups_.empty() && !run_ids_.empty()) throw UsageError("--group and --run: give one");
  if (!baseline_group_.empty() && !baseline_run_ids_.empty())
    throw UsageError("--baseline-group and --baseline-run: give one");
  if (has_baseline() && groups_.size() > 1)
    throw UsageError(
        "--group given twice with a baseline: the baseline is A, --group names B alone");
  settings_.min_effect = parse_percent("--min-effect", min_effect_, 0, 100);
  settings_.confidence = parse_percent("--confidence", confidence_, 50, 99.9);
  if (!percentiles_.empty()) settings_.percentiles = parse_percentiles(percentiles_);
  if (!html_.empty()) {
    check_output_path("--html", html_);
    check_not_results_file("--html", html_, db_);
    if (!baseline_.empty()) check_not_results_file("--html", html_, baseline_);
    check_replaceable("--html", html_, OutputKind::html, force_);
  }
}

bool CompareCommand::has_baseline() const {
  return !baseline_.empty() || !baseline_group_.empty() || !baseline_run_ids_.empty();
}

// A (the baseline: --baseline's file, or --db's other runs) against B (--db's --run or --group).
RoundsComparison CompareCommand::compare_with_baseline(Database& db) {
  std::optional<Database> other;
  if (!baseline_.empty()) other.emplace(open_results_for_reading(baseline_));
  Database& base = other ? *other : db;
  const std::string& base_path = other ? baseline_ : db_;
  const std::string a_file = other ? baseline_ + " " : "", b_file = other ? db_ + " " : "";
  const PercentileList& list = settings_.percentiles;
  std::string a_group, b_group;
  const std::vector<int64_t> a_runs =
      baseline_run_ids_.empty()
          ? group_runs(base, baseline_group_, a_group, other ? "--baseline" : "--db",
                       "--baseline-group", "--baseline-run", base_path)
          : baseline_run_ids_;
  const std::vector<int64_t> b_runs = run_ids_.empty()
                                          ? group_runs(db, groups_.empty() ? "" : groups_[0],
                                                       b_group, "--db", "--group", "--run", db_)
                                          : run_ids_;
  std::vector<Round> a = load_listed_runs(base, a_runs, list, "--baseline-run", base_path);
  std::vector<Round> b = load_listed_runs(db, b_runs, list, "--run", db_);
  return compare_sides(
      a, a_file + (a_group.empty() ? runs_label(a_runs) : "repeat group " + a_group), b,
      b_file + (b_group.empty() ? runs_label(b_runs) : "repeat group " + b_group), settings_);
}

// --db's rounds alone: each target against the first, or two groups position by position.
RoundsComparison CompareCommand::compare_within(Database& db) {
  const PercentileList& list = settings_.percentiles;
  if (!run_ids_.empty())
    return compare_targets(load_listed_runs(db, run_ids_, list, "--run", db_), runs_label(run_ids_),
                           settings_);
  if (groups_.empty()) groups_.emplace_back();
  std::vector<std::vector<Round>> sides;
  for (auto& g : groups_) {
    const std::string wanted = g;
    sides.push_back(
        load_rounds(db, group_runs(db, wanted, g, "--db", "--group", "--run", db_), list));
  }
  if (sides.size() == 1 && target_count(sides[0]) < 2)
    throw UsageError("--group '" + groups_[0] +
                     "': its rounds ran one target: compare it with another group "
                     "(--group " +
                     groups_[0] + " --group OTHER, or --baseline-group OTHER)");
  return sides.size() == 1 ? compare_targets(sides[0], "repeat group " + groups_[0], settings_)
                           : compare_sides(sides[0], "repeat group " + groups_[0], sides[1],
                                           "repeat group " + groups_[1], settings_);
}

int CompareCommand::execute() {
  Database db = results_file_writable(db_) ? open_results_db(db_) : open_results_for_reading(db_);
  const RoundsComparison c = has_baseline() ? compare_with_baseline(db) : compare_within(db);
  if (!html_.empty()) {
    write_file_atomically(
        html_, [&](std::ostream& o) { write_comparison_html(c, settings_, o); },
        [&] {
          check_not_results_file("--html", html_, db_);
          if (!baseline_.empty()) check_not_results_file("--html", html_, baseline_);
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
