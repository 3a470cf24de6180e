#include "report/compare_rounds.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "report/html_parts.hpp"
#include "report/text_table.hpp"

namespace kv::drive {
namespace {

using compare::Verdict;

std::string round_name(const Round& r) {
  return r.round ? "round " + std::to_string(*r.round) + " (run " + std::to_string(r.run_id) + ")"
                 : "run " + std::to_string(r.run_id);
}

// A phase of a target across rounds: (phase ordinal, op).
using PhaseKey = std::pair<int, std::string>;

struct TargetRounds {
  std::string store, protocol;
  // Per phase: its kind, and each fit round's phase (one per round at most).
  std::map<PhaseKey, std::pair<std::string, std::vector<const RoundPhase*>>> phases;
};

// The fit rounds' phases, by target ordinal.
std::map<int, TargetRounds> by_target(const std::vector<const Round*>& rounds) {
  std::map<int, TargetRounds> out;
  for (const Round* r : rounds)
    for (const RoundPhase& p : r->phases) {
      TargetRounds& t = out[p.target_ordinal];
      t.store = p.store;
      t.protocol = p.protocol;
      auto& slot = t.phases[{p.phase_ordinal, p.op}];
      slot.first = p.kind;
      if (p.status == "completed") slot.second.push_back(&p);
    }
  return out;
}

std::vector<const Round*> fit_rounds(const std::vector<Round>& rounds,
                                     std::vector<std::string>& left_out, const std::string& label,
                                     const CompareSettings& settings) {
  std::vector<const Round*> out;
  for (const Round& r : rounds) {
    const std::string why = round_unfit(r, settings.keep_client_bound);
    if (why.empty())
      out.push_back(&r);
    else
      left_out.push_back(label + " " + round_name(r) + ": " + why);
  }
  return out;
}

// Figure `f` (-1: req/s, else the percentile's index) of each round's phase that has it.
std::vector<double> values(const std::vector<const RoundPhase*>& phases, int f) {
  std::vector<double> out;
  for (const RoundPhase* p : phases) {
    const std::optional<double> v =
        f < 0 ? p->req_per_s : p->percentiles.at(static_cast<size_t>(f));
    if (v && *v > 0 && std::isfinite(*v)) out.push_back(*v);
  }
  return out;
}

void compare_target(const TargetRounds& a, const TargetRounds& b, const CompareSettings& settings,
                    std::vector<FigureComparison>& out) {
  for (const auto& [key, b_phase] : b.phases) {
    const auto a_phase = a.phases.find(key);
    if (a_phase == a.phases.end()) continue;
    for (int f = -1; f < static_cast<int>(settings.percentiles.values.size()); ++f) {
      FigureComparison c;
      c.store = b.store;
      c.against = a.store;
      c.phase_ordinal = key.first;
      c.kind = b_phase.first;
      c.op = key.second;
      c.figure =
          f < 0 ? "req/s" : percentile_label(settings.percentiles.values[static_cast<size_t>(f)]);
      c.higher_is_better = f < 0;
      c.a = values(a_phase->second.second, f);
      c.b = values(b_phase.second, f);
      if (c.a.empty() || c.b.empty()) continue;
      c.interval = compare::ratio_interval(c.a, c.b, settings.confidence);
      c.verdict = compare::verdict(c.interval, c.higher_is_better, settings.min_effect);
      out.push_back(std::move(c));
    }
  }
}

using compare::median;

// A figure's value for people: req/s whole, latency in ms.
std::string figure_text(const FigureComparison& c, double v) {
  return c.higher_is_better ? fmt_int(v) : fmt_fixed(v / 1000, 3);
}

std::string verdict_text(const FigureComparison& c, const CompareSettings& s) {
  if (!c.interval.low)
    return "indeterminate: too few rounds for a " + fmt_fixed(s.confidence * 100, 0) +
           " % interval";
  if (c.verdict == Verdict::indeterminate)
    return "indeterminate: too noisy for " + fmt_fixed(s.min_effect * 100, 0) + " %";
  return compare::verdict_name(c.verdict);
}

}  // namespace

std::string round_unfit(const Round& r, bool keep_client_bound) {
  std::vector<std::string> why;
  if (r.status != "completed") why.push_back(r.status);
  if (r.validity.failed > 0)
    why.push_back(fmt_int(static_cast<double>(r.validity.failed)) + " requests failed");
  if (r.validity.dropped > 0)
    why.push_back(fmt_int(static_cast<double>(r.validity.dropped)) + " due requests dropped");
  if (r.validity.client_stalls > 0)
    why.push_back(fmt_int(static_cast<double>(r.validity.client_stalls)) +
                  " seconds with a client stall");
  if (r.validity.client_bound > 0 && !keep_client_bound)
    why.emplace_back("client-bound (a worker thread near a core)");
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : ", ") + w;
  return out;
}

RoundsComparison compare_targets(const std::vector<Round>& rounds, const std::string& label,
                                 const CompareSettings& settings) {
  RoundsComparison c;
  c.a_label = c.b_label = label;
  const auto targets = by_target(fit_rounds(rounds, c.left_out, label, settings));
  if (targets.empty()) return c;
  const TargetRounds& first = targets.begin()->second;
  for (auto t = std::next(targets.begin()); t != targets.end(); ++t)
    compare_target(first, t->second, settings, c.figures);
  return c;
}

RoundsComparison compare_sides(const std::vector<Round>& a, const std::string& a_label,
                               const std::vector<Round>& b, const std::string& b_label,
                               const CompareSettings& settings) {
  RoundsComparison c;
  c.a_label = a_label;
  c.b_label = b_label;
  const auto as = by_target(fit_rounds(a, c.left_out, a_label, settings));
  const auto bs = by_target(fit_rounds(b, c.left_out, b_label, settings));
  for (const auto& [ordinal, bt] : bs) {
    const auto at = as.find(ordinal);
    if (at == as.end() || at->second.protocol != bt.protocol) {
      c.notes.push_back(b_label + "'s target " + std::to_string(ordinal + 1) + " (" + bt.store +
                        ") has no " + bt.protocol + " target at its position in " + a_label);
      continue;
    }
    compare_target(at->second, bt, settings, c.figures);
  }
  return c;
}

ReportTable comparison_table(const RoundsComparison& c, const CompareSettings& s) {
  // The first 13 columns are for people ("interval" shows low – high, "rounds A/B" both
  // counts); high, coverage and b_rounds after them are for machines (CSV, JSON).
  ReportTable t{
      "comparisons",
      "B against A",
      {"store (B)", "against (A)", "phase", "op", "figure", "A median", "B median", "B/A",
       "interval", "spread A", "spread B", "rounds A/B", "verdict", "high", "coverage", "rounds B"},
      {"store", "against", "phase", "op", "figure", "a_median", "b_median", "ratio", "low",
       "a_spread", "b_spread", "a_rounds", "verdict", "high", "coverage", "b_rounds"},
      {},
      {},
      {},
      13};
  const std::string conf = fmt_fixed(s.confidence * 100, 0) + " %";
  t.notes_before.push_back(
      (c.a_label == c.b_label ? c.b_label + ": each target against the first"
                              : c.b_label + " (B) against " + c.a_label + " (A)") +
      "; B/A is the Hodges-Lehmann ratio with its exact " + conf +
      " Mann-Whitney interval over the rounds (latency in ms, from each round's merged "
      "histograms); an effect under " +
      fmt_fixed(s.min_effect * 100, 0) + " % does not count (--min-effect)." +
      (s.keep_client_bound ? " Client-bound rounds count (--keep-client-bound)." : ""));
  for (const FigureComparison& f : c.figures) {
    const double am = median(f.a), bm = median(f.b);
    const double sa = compare::relative_spread(f.a), sb = compare::relative_spread(f.b);
    const auto& iv = f.interval;
    const auto count = [](const std::vector<double>& v) {
      return ReportCell{std::to_string(v.size()), static_cast<double>(v.size())};
    };
    t.rows.push_back({
        {f.store, std::nullopt},
        {f.against, std::nullopt},
        {f.kind, std::nullopt},
        {f.op, std::nullopt},
        {f.figure, std::nullopt},
        {figure_text(f, am), am},
        {figure_text(f, bm), bm},
        {fmt_fixed(iv.ratio, 3), iv.ratio},
        {iv.low ? fmt_fixed(*iv.low, 3) + " – " + fmt_fixed(*iv.high, 3) : "-", iv.low},
        {fmt_fixed(sa * 100, 1) + " %", sa},
        {fmt_fixed(sb * 100, 1) + " %", sb},
        {std::to_string(f.a.size()) + "/" + std::to_string(f.b.size()),
         static_cast<double>(f.a.size())},
        {verdict_text(f, s), std::nullopt},
        {iv.high ? fmt_fixed(*iv.high, 3) : "-", iv.high},
        {iv.low ? fmt_fixed(iv.coverage, 4) : "-",
         iv.low ? std::optional<double>(iv.coverage) : std::nullopt},
        count(f.b),
    });
  }
  if (!c.left_out.empty())
    t.notes_after.emplace_back(
        "left out of the verdicts (docs/reference.md, \"kvdrive compare\"):");
  for (const auto& l : c.left_out) t.notes_after.push_back("  " + l);
  for (const auto& n : c.notes) t.notes_after.push_back(n);
  if (c.figures.empty()) t.notes_after.emplace_back("(nothing to compare)");
  return t;
}

void print_comparison_json(const RoundsComparison& c, const CompareSettings& s, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["a"] = c.a_label;
  j["b"] = c.b_label;
  j["method"] = "Hodges-Lehmann ratio B/A, exact Mann-Whitney interval";
  j["confidence"] = s.confidence;
  j["min_effect"] = s.min_effect;
  j["keep_client_bound"] = s.keep_client_bound;
  j["left_out"] = c.left_out;
  j["notes"] = c.notes;
  Json& rows = j["comparisons"] = Json::array();
  for (const FigureComparison& f : c.figures) {
    Json r;
    r["store"] = f.store;
    r["against"] = f.against;
    r["phase"] = f.kind;
    r["phase_ordinal"] = f.phase_ordinal;
    r["op"] = f.op;
    r["figure"] = f.figure;
    r["unit"] = f.higher_is_better ? "req/s" : "us";
    r["higher_is_better"] = f.higher_is_better;
    r["a"] = f.a;
    r["b"] = f.b;
    r["a_median"] = median(f.a);
    r["b_median"] = median(f.b);
    r["ratio"] = f.interval.ratio;
    r["low"] = f.interval.low ? Json(*f.interval.low) : Json(nullptr);
    r["high"] = f.interval.high ? Json(*f.interval.high) : Json(nullptr);
    r["coverage"] = f.interval.low ? Json(f.interval.coverage) : Json(nullptr);
    r["a_spread"] = compare::relative_spread(f.a);
    r["b_spread"] = compare::relative_spread(f.b);
    r["a_rounds"] = f.a.size();
    r["b_rounds"] = f.b.size();
    r["verdict"] = compare::verdict_name(f.verdict);
    rows.push_back(std::move(r));
  }
  out << j.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

namespace {

// Row `f`'s chart: A's and B's rounds, and the interval of B as A's median times low and high.
svg::Chart rounds_chart(const FigureComparison& f, const CompareSettings& s) {
  const double scale = f.higher_is_better ? 1 : 1e-3;  // latency in ms
  svg::Chart c;
  c.title = f.store + " against " + f.against + ": " + f.kind + " " + f.op + " " + f.figure +
            ", B/A " + fmt_fixed(f.interval.ratio, 3) + " — " + verdict_text(f, s);
  c.height = 220;
  c.x.label = "round (those that count, in order)";
  c.x.min = 1;
  c.y.label = f.higher_is_better ? "throughput (req/s)" : f.figure + " latency (ms)";
  const std::pair<const std::vector<double>*, const char*> sides[] = {{&f.a, "A: "}, {&f.b, "B: "}};
  double rounds = 1;
  for (int i = 0; i < 2; ++i) {
    svg::Series line = chart_series(sides[i].second + (i ? f.store : f.against), i, false, true);
    for (size_t r = 0; r < sides[i].first->size(); ++r)
      line.points.emplace_back(static_cast<double>(r + 1), (*sides[i].first)[r] * scale);
    rounds = std::max(rounds, static_cast<double>(sides[i].first->size()));
    c.series.push_back(std::move(line));
  }
  if (f.interval.low) {
    const double am = median(f.a) * scale;
    for (const double end : {*f.interval.low, *f.interval.high}) {
      svg::Series bound = chart_series(
          end == *f.interval.low ? "B's interval (A's median × B/A's ends)" : "", 1, true);
      bound.in_legend = end == *f.interval.low;
      bound.points = {{1, am * end}, {rounds, am * end}};
      c.series.push_back(std::move(bound));
    }
  }
  return c;
}

}  // namespace

void write_comparison_html(const RoundsComparison& c, const CompareSettings& s, std::ostream& out) {
  const std::string what = c.a_label == c.b_label ? c.b_label : c.b_label + " against " + c.a_label;
  html_page_head("comparison of " + what, out);
  out << "<h1>Is B faster than A?</h1>\n<p class=\"meta\">" << svg::escape_xml(what)
      << " · kvdrive compare</p>\n";
  html_table(comparison_table(c, s), out);
  for (const FigureComparison& f : c.figures)
    html_chart(rounds_chart(f, s), "no round counts", out);
  out << "</body></html>\n";
}

}  // namespace kv::drive
