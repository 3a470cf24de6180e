#include "cli/check_command.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <set>

#include "cli/compare_command.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "results/check_writer.hpp"
#include "view/rounds.hpp"

namespace kv::drive {
namespace {

using compare::CheckVerdict;

std::string percent(double fraction) { return fmt_fixed(fraction * 100, 1) + " %"; }

// The repeat group `wanted` (or the latest) of a file, or UsageError naming `option`.
std::string group_of(Database& db, const std::string& option, const std::string& wanted,
                     const std::string& path) {
  const auto g = wanted.empty() ? latest_repeat_group(db) : resolve_repeat_group(db, wanted);
  if (g) return *g;
  if (wanted.empty())
    throw UsageError(option + " '" + path +
                     "': no repeat group (record rounds with kvdrive run --repeat N)");
  throw UsageError(option + " '" + path + "': no repeat group '" + wanted +
                   "' (nor runs of that --name)");
}

// A judged figure's line: "regression: STORE read get p99: 1.32 of the baseline (1.18 – 1.50),
// more than the 10 % allowed".
std::string judged_line(const FigureComparison& f, const CheckObjective& o, CheckVerdict v) {
  std::string s = compare::check_verdict_name(v) + ": " + f.store + " " + f.kind + " " + f.op +
                  " " + f.figure + ": " + fmt_fixed(f.interval.ratio, 3) + " of the baseline";
  if (!f.interval.low) return s + " (too few rounds for an interval)";
  s += " (" + fmt_fixed(*f.interval.low, 3) + " – " + fmt_fixed(*f.interval.high, 3) + ")";
  const double bound = f.higher_is_better ? 1 - o.max_regression : 1 + o.max_regression;
  if (v == CheckVerdict::regression)
    return s + ", more than the " + percent(o.max_regression) + " allowed";
  return s + ": the interval holds the bound " + fmt_fixed(bound, 3) + " (" +
         percent(o.max_regression) + " allowed)";
}

const CheckObjective* objective_of(const std::vector<CheckObjective>& objectives,
                                   const FigureComparison& f) {
  for (const CheckObjective& o : objectives)
    if (o.percentile ? f.figure == percentile_label(*o.percentile) : f.figure == "req/s") return &o;
  return nullptr;
}

}  // namespace

std::vector<CheckObjective> parse_objectives(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--max-regression '" + text + "': " + why);
  };
  std::vector<CheckObjective> out;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    start = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw bad("expected FIGURE=PCT items, such as throughput=5%,p99=10%");
    CheckObjective o;
    o.name = item.substr(0, eq);
    if (o.name != "throughput" && o.name != "req/s") {
      if (o.name.size() < 2 || o.name[0] != 'p')
        throw bad("'" + o.name + "' is no figure: throughput, or a percentile such as p99");
      try {
        o.percentile = parse_percentiles(o.name.substr(1)).values.at(0);
      } catch (const std::exception&) {
        throw bad("'" + o.name + "' is no percentile (p50, p99, p99.9)");
      }
    }
    const std::string key = o.percentile ? percentile_label(*o.percentile) : "req/s";
    if (!seen.insert(key).second) throw bad(o.name + " is given twice");
    o.max_regression = parse_percent("--max-regression " + o.name, item.substr(eq + 1), 0, 1000);
    out.push_back(std::move(o));
  }
  return out;
}

CheckCommand::CheckCommand(CLI::App& app)
    : sub_(app.add_subcommand(
          "check",
          "A gate for CI: the candidate's rounds (run --repeat N) against a baseline file's; "
          "exit 4 on a regression shown with confidence, 5 when the evidence says neither")) {
  sub_->add_option("--db", db_, "The candidate's results file (the verdicts are kept in it)")
      ->type_name("FILE")
      ->required();
  sub_->add_option("--baseline", baseline_, "The baseline's results file (only read)")
      ->type_name("FILE")
      ->required();
  sub_->add_option("--max-regression", objectives_text_,
                   "How much worse each figure may be: throughput=5%,p99=10% (throughput, or "
                   "latency percentiles)")
      ->type_name("LIST")
      ->required();
  sub_->add_option("--group", group_,
                   "The candidate's repeat group, or the --name of its runs [default: the latest]")
      ->type_name("GROUP");
  sub_->add_option("--baseline-group", baseline_group_,
                   "The baseline's repeat group, or the --name of its runs [default: the latest]")
      ->type_name("GROUP");
  sub_->add_flag("--keep-client-bound", settings_.keep_client_bound,
                 "Count the rounds whose client was near a whole core: for gating a kvdrive "
                 "build, where the client is what is measured");
  sub_->add_option("--confidence", confidence_, "Confidence of the intervals")
      ->type_name("PCT")
      ->capture_default_str();
}

bool CheckCommand::parsed() const { return sub_->parsed(); }

void CheckCommand::check() {
  check_results_path("--db", db_, true);
  check_results_path("--baseline", baseline_, true);
  objectives_ = parse_objectives(objectives_text_);
  settings_.confidence = parse_percent("--confidence", confidence_, 50, 99.9);
  settings_.percentiles.values.clear();
  for (const CheckObjective& o : objectives_)
    if (o.percentile) settings_.percentiles.values.push_back(*o.percentile);
}

int CheckCommand::execute() {
  const bool writable = results_file_writable(db_);
  Database db = writable ? open_results_db(db_) : open_results_for_reading(db_);
  Database base = open_results_for_reading(baseline_);
  const std::string group = group_of(db, "--db", group_, db_);
  const std::string base_group = group_of(base, "--baseline", baseline_group_, baseline_);
  const std::string baseline_label = baseline_ + "#" + base_group;
  const std::vector<Round> candidate =
      load_rounds(db, load_repeat_group_runs(db, group), settings_.percentiles);
  const RoundsComparison c = compare_sides(
      load_rounds(base, load_repeat_group_runs(base, base_group), settings_.percentiles),
      "baseline", candidate, "candidate", settings_);
  std::vector<CheckRow> rows;
  std::vector<std::string> lines;
  int regressions = 0, unsure = 0;
  for (const FigureComparison& f : c.figures) {
    const CheckObjective* o = objective_of(objectives_, f);
    if (o == nullptr) continue;  // req/s, compared always, with no objective for it
    const CheckVerdict v =
        compare::check_verdict(f.interval, f.higher_is_better, o->max_regression);
    regressions += v == CheckVerdict::regression;
    unsure += v == CheckVerdict::indeterminate;
    if (v != CheckVerdict::pass) lines.push_back(judged_line(f, *o, v));
    rows.push_back({group, baseline_label, f.store, f.against, f.kind, f.op, f.figure,
                    o->max_regression, f.interval.ratio, f.interval.low, f.interval.high,
                    compare::check_verdict_name(v)});
  }
  const int code = regressions > 0              ? kExitRegression
                   : unsure > 0 || rows.empty() ? kExitIndeterminate
                                                : kExitOk;
  const std::string summary =
      "check of repeat group " + group + " against " + baseline_label + " at " +
      percent(settings_.confidence) + ": " + std::to_string(rows.size()) + " figures judged, " +
      std::to_string(regressions) + " regression(s), " + std::to_string(unsure) + " indeterminate" +
      (rows.empty() ? " (nothing to judge: no target matched)" : "");
  std::cout << summary << "\n";
  for (const auto& l : lines) std::cout << l << "\n";
  for (const auto& l : c.left_out) std::cout << "left out: " << l << "\n";
  for (const auto& n : c.notes) std::cout << "note: " << n << "\n";
  if (!writable || candidate.empty()) {
    log_warn() << "--db '" << db_ << "' cannot be written: the verdicts are not recorded";
    return code;
  }
  std::vector<std::pair<std::string, std::string>> events = {{"check", summary}};
  for (const auto& l : lines)
    if (l.rfind("regression:", 0) == 0) events.emplace_back("check_regression", l);
  write_check(db, candidate.back().run_id, now_ts_us(), rows, events);
  return code;
}

}  // namespace kv::drive
