// The shared percentile list and a phase's percentiles from its histogram: see percentiles.hpp.
#include "view/percentiles.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "kvbench/usage_error.hpp"
#include "store/redis_latency.hpp"

namespace kv::drive {
namespace {

// A percentile in thousandths of a percent (99.9 → 99900): exact for up to 3 decimals.
int64_t milli(double p) { return std::llround(p * 1000); }

}  // namespace

std::vector<std::optional<double>> from_buckets(const Buckets& buckets, const PercentileList& list,
                                                double lo, double hi) {
  int64_t total = 0;
  for (const auto& [upper, n] : buckets) total += n;
  std::vector<std::optional<double>> values(list.values.size());
  if (total <= 0) return values;
  for (size_t i = 0; i < list.values.size(); ++i) {
    // rank = ceil(q * total), q in thousandths of a percent (integer: no rounding flip).
    const int64_t m = milli(list.values[i]);
    const int64_t rank = total < 90'000'000'000'000
                             ? (m * total + 99'999) / 100'000
                             : static_cast<int64_t>(std::ceil(static_cast<double>(m) / 1e5 *
                                                              static_cast<double>(total)));
    int64_t cum = 0;
    for (const auto& [upper, n] : buckets) {
      cum += n;
      if (cum >= rank) {
        values[i] = std::max(std::min(upper, hi), lo);
        break;
      }
    }
  }
  return values;
}

const PercentileList& default_percentiles() {
  static const PercentileList list{{50, 90, 99, 99.9}};
  return list;
}

PercentileList parse_percentiles(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("invalid --percentiles '" + text + "': " + why);
  };
  if (text.empty()) throw bad("expected a list such as 50,90,99,99.9");
  PercentileList out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    double v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      throw bad("'" + item + "' is not a number (expected a list such as 50,90,99,99.9)");
    if (!(v > 0) || !(v < 100))
      throw bad(item + " is not above 0 and below 100 (the maximum is always shown)");
    const auto dot = item.find('.');
    if (dot != std::string::npos && item.size() - dot - 1 > 3)
      throw bad(item + " has more than 3 decimals");
    out.values.push_back(static_cast<double>(milli(v)) / 1000);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(out.values.begin(), out.values.end());
  out.values.erase(std::unique(out.values.begin(), out.values.end()), out.values.end());
  if (out.values.size() > 16) throw bad("at most 16 percentiles");
  return out;
}

std::string percentile_name(double p) {
  const int64_t m = milli(p);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02lld", static_cast<long long>(m / 1000));
  std::string name = std::string("p") + buf;
  if (m % 1000 != 0) {
    std::snprintf(buf, sizeof buf, "%03lld", static_cast<long long>(m % 1000));
    std::string decimals = buf;
    while (decimals.back() == '0') decimals.pop_back();
    name += decimals;
  }
  return name;
}

std::string percentile_label(double p) {
  const int64_t m = milli(p);
  std::string label = "p";  // appended, not "p" + string: GCC 12 -O3's false -Wrestrict
  label += std::to_string(m / 1000);
  if (m % 1000 != 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%03lld", static_cast<long long>(m % 1000));
    std::string decimals = buf;
    while (decimals.back() == '0') decimals.pop_back();
    label += "." + decimals;
  }
  return label;
}

LatencyBoundsMap phase_latency_bounds(Database& db, int64_t run_id) {
  LatencyBoundsMap bounds;
  auto b = db.prepare(
      "SELECT p.phase_id, d.op, MAX(d.lat_max_us), r.min_us, r.max_us "
      "FROM phases p JOIN driver_seconds d ON d.phase_id = p.phase_id AND d.warmup = 0 "
      "LEFT JOIN latency_range r ON r.phase_id = p.phase_id AND r.op = d.op "
      " AND r.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "WHERE p.run_id = ? GROUP BY p.phase_id, d.op");
  b.bind(1, run_id);
  while (b.step()) {
    LatencyBounds& x = bounds[{b.column_int(0), b.column_text(1)}];
    if (!b.is_null(2)) x.max_us = b.column_double(2);
    if (!b.is_null(4)) x.max_us = std::min(x.max_us, b.column_double(4));
    if (!b.is_null(3)) x.min_us = b.column_double(3);
  }
  return bounds;
}

PhasePercentiles run_percentiles(Database& db, int64_t run_id, const PercentileList& list) {
  PhasePercentiles out;
  const LatencyBoundsMap bounds = phase_latency_bounds(db, run_id);
  auto s = db.prepare(
      "SELECT l.phase_id, l.op, l.upper_us, l.count FROM latency_buckets l "
      "JOIN phases p ON p.phase_id = l.phase_id "
      "WHERE p.run_id = ? AND l.count > 0 "
      " AND l.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "ORDER BY l.phase_id, l.op, l.upper_us");
  s.bind(1, run_id);
  Buckets buckets;
  auto finish = [&](int64_t phase, const std::string& op) {
    const auto it = bounds.find({phase, op});
    const LatencyBounds x = it == bounds.end() ? LatencyBounds{} : it->second;
    auto values = from_buckets(buckets, list, x.min_us, x.max_us);
    out[{phase, op}] = std::move(values);
    buckets.clear();
  };
  int64_t phase = -1;
  std::string op;
  while (s.step()) {
    const int64_t ph = s.column_int(0);
    std::string o = s.column_text(1);
    if (ph != phase || o != op) {
      if (phase >= 0) finish(phase, op);
      phase = ph;
      op = std::move(o);
    }
    buckets.emplace_back(s.column_double(2), s.column_int(3));
  }
  if (phase >= 0) finish(phase, op);
  return out;
}

RunSecondPercentiles second_percentiles(Database& db, int64_t run_id, const PercentileList& list) {
  RunSecondPercentiles out;
  // The seconds that completed something: their max, and the stored columns for older rows.
  auto d = db.prepare(
      "SELECT d.phase_id, d.ts_us, d.op, d.lat_max_us, d.lat_p50_us, d.lat_p90_us, d.lat_p99_us, "
      "d.lat_p999_us FROM driver_seconds d JOIN phases p ON p.phase_id = d.phase_id "
      "WHERE p.run_id = ? AND d.lat_max_us IS NOT NULL");
  d.bind(1, run_id);
  std::map<std::tuple<int64_t, int64_t, std::string>, double> max_us;
  while (d.step()) {
    auto key = std::tuple{d.column_int(0), d.column_int(1), d.column_text(2)};
    max_us[key] = d.column_double(3);
    SecondPercentiles& sp = out[key];
    sp.from_histogram = false;  // until its buckets are seen
    sp.values.assign(list.values.size(), std::nullopt);
    constexpr int64_t kStored[] = {50'000, 90'000, 99'000, 99'900};  // lat_p50_us .. lat_p999_us
    for (size_t i = 0; i < list.values.size(); ++i)
      for (int c = 0; c < 4; ++c)
        if (milli(list.values[i]) == kStored[c] && !d.is_null(4 + c))
          sp.values[i] = d.column_double(4 + c);
  }
  auto s = db.prepare(
      "SELECT l.phase_id, l.ts_us, l.op, l.upper_us, l.count FROM second_latency_buckets l "
      "JOIN phases p ON p.phase_id = l.phase_id "
      "WHERE p.run_id = ? AND l.count > 0 "
      " AND l.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END "
      "ORDER BY l.phase_id, l.ts_us, l.op, l.upper_us");
  s.bind(1, run_id);
  Buckets buckets;
  std::tuple<int64_t, int64_t, std::string> at{-1, 0, ""};
  auto finish = [&] {
    const auto m = max_us.find(at);
    if (m != max_us.end()) out[at] = {from_buckets(buckets, list, 0, m->second), true};
    buckets.clear();
  };
  while (s.step()) {
    auto key = std::tuple{s.column_int(0), s.column_int(1), s.column_text(2)};
    if (key != at) {
      if (std::get<0>(at) >= 0) finish();
      at = std::move(key);
    }
    buckets.emplace_back(s.column_double(3), s.column_int(4));
  }
  if (std::get<0>(at) >= 0) finish();
  return out;
}

PartPercentiles run_part_percentiles(Database& db, int64_t run_id, const PercentileList& list) {
  PartPercentiles out;
  auto r = db.prepare(
      "SELECT r.phase_id, r.op, r.part, r.count, r.min_us, r.max_us, r.mean_us "
      "FROM latency_part_range r JOIN phases p ON p.phase_id = r.phase_id WHERE p.run_id = ?");
  r.bind(1, run_id);
  std::map<std::tuple<int64_t, std::string, std::string>, LatencyBounds> bounds;
  while (r.step()) {
    const auto key = std::make_tuple(r.column_int(0), r.column_text(1), r.column_text(2));
    bounds[key] = LatencyBounds{r.column_double(4), r.column_double(5)};
    PartFigures& f = out[key];
    f.count = r.column_int(3);
    f.max_us = r.column_double(5);
    f.mean_us = r.column_double(6);
  }
  auto s = db.prepare(
      "SELECT l.phase_id, l.op, l.part, l.upper_us, l.count FROM latency_part_buckets l "
      "JOIN phases p ON p.phase_id = l.phase_id WHERE p.run_id = ? AND l.count > 0 "
      "ORDER BY l.phase_id, l.op, l.part, l.upper_us");
  s.bind(1, run_id);
  Buckets buckets;
  std::tuple<int64_t, std::string, std::string> at{-1, "", ""};
  auto finish = [&] {
    const auto it = bounds.find(at);
    const LatencyBounds x = it == bounds.end() ? LatencyBounds{} : it->second;
    out[at].values = from_buckets(buckets, list, x.min_us, x.max_us);
    buckets.clear();
  };
  while (s.step()) {
    auto key = std::make_tuple(s.column_int(0), s.column_text(1), s.column_text(2));
    if (key != at) {
      if (std::get<0>(at) >= 0) finish();
      at = std::move(key);
    }
    buckets.emplace_back(s.column_double(3), s.column_int(4));
  }
  if (std::get<0>(at) >= 0) finish();
  return out;
}

namespace {

// TimeWent::store_us of every Redis phase whose store's polls hold its command's histogram.
void add_store_time(Database& db, int64_t run_id, const PercentileList& list, RunTimeWent& out) {
  auto s = db.prepare(
      "SELECT p.phase_id, p.target_id, p.started_ts_us + COALESCE(p.warmup_us, 0), "
      "p.ended_ts_us FROM phases p JOIN targets t USING (target_id) "
      "WHERE p.run_id = ? AND t.protocol = 'redis' AND p.ended_ts_us IS NOT NULL");
  s.bind(1, run_id);
  while (s.step()) {
    const int64_t phase_id = s.column_int(0);
    for (auto it = out.lower_bound({phase_id, ""}); it != out.end() && it->first.first == phase_id;
         ++it) {
      auto& [key, rows] = *it;
      const std::string_view command = redis_command_of(key.second);
      if (command.empty()) continue;
      const auto own =
          read_server_latency(db, s.column_int(1), s.column_int(2), s.column_int(3), command);
      if (!own) continue;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (i < list.values.size())
          rows[i].store_us = own->at(list.values[i] / 100);
        else if (rows[i].at == "max")
          rows[i].store_us = own->max_us;
      }
    }
  }
}

}  // namespace

RunTimeWent run_time_went(Database& db, int64_t run_id, const PercentileList& list) {
  RunTimeWent out;
  auto s = db.prepare(
      "SELECT b.phase_id, b.op, b.count, b.latency_us, b.queue_us, b.client_send_us, b.wire_us, "
      "b.client_recv_us FROM latency_part_bins b JOIN phases p ON p.phase_id = b.phase_id "
      "WHERE p.run_id = ? AND b.count > 0 ORDER BY b.phase_id, b.op, b.upper_us");
  s.bind(1, run_id);
  std::map<std::pair<int64_t, std::string>, std::vector<TimeWent>> bins;
  while (s.step()) {
    TimeWent b{"",
               s.column_int(2),
               s.column_double(3),
               s.column_double(4),
               s.column_double(5),
               s.column_double(6),
               s.column_double(7),
               std::nullopt};
    bins[{s.column_int(0), s.column_text(1)}].push_back(b);
  }
  auto mean_of = [](const TimeWent& sum, const std::string& at) {
    const double n = static_cast<double>(sum.count);
    return TimeWent{at,
                    sum.count,
                    sum.latency_us / n,
                    sum.queue_us / n,
                    sum.client_send_us / n,
                    sum.wire_us / n,
                    sum.client_recv_us / n,
                    std::nullopt};
  };
  for (const auto& [key, bs] : bins) {
    TimeWent all;
    for (const TimeWent& b : bs) {
      all.count += b.count;
      all.latency_us += b.latency_us;
      all.queue_us += b.queue_us;
      all.client_send_us += b.client_send_us;
      all.wire_us += b.wire_us;
      all.client_recv_us += b.client_recv_us;
    }
    auto& rows = out[key];
    for (double q : list.values) {
      const auto rank = static_cast<int64_t>(std::ceil(q / 100.0 * static_cast<double>(all.count)));
      int64_t seen = 0;
      for (const TimeWent& b : bs) {
        seen += b.count;
        if (seen >= rank) {
          rows.push_back(mean_of(b, percentile_name(q)));
          break;
        }
      }
    }
    rows.push_back(mean_of(bs.back(), "max"));
    rows.push_back(mean_of(all, "mean"));
  }
  add_store_time(db, run_id, list, out);
  return out;
}

}  // namespace kv::drive
