#include "run/run.hpp"

#include <algorithm>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "engine/io_mode.hpp"
#include "engine/loop/event_client.hpp"
#include "engine/pacer.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "kvmon_link/monitors.hpp"
#include "results/results_writer.hpp"
#include "run/phase_barrier.hpp"
#include "run/phase_seconds.hpp"
#include "run/progress.hpp"
#include "run/run_metadata.hpp"
#include "run/run_watcher.hpp"
#include "run/trace_mrc.hpp"
#include "search/search_group.hpp"
#include "search/search_run.hpp"
#include "stats/hdr_log.hpp"
#include "store/stats_sources.hpp"
#include "store/store_stats.hpp"
#include "store/tls_context.hpp"
#include "workload/trace.hpp"

namespace kv::drive {
namespace {

// Where a phase stands in the run, for its rows and its progress line.
struct PhaseSlot {
  PhaseSeconds::Where where;  // its label: "<target>[ [step]]", the phase's kind added per phase
  int ordinal;
  const std::string& step;
};

// Runs one phase and records it. Returns how it ended (and why, when not completed).
RunEnd run_one_phase(const RunOptions& opts, const PhaseSlot& at, const WorkloadSpec& w,
                     PhaseKind kind, std::vector<std::unique_ptr<EventClient>>& clients,
                     ResultsWriter& writer, const ValueTable& values, const std::atomic<bool>& stop,
                     StepRun* step = nullptr) {
  PhasePlan plan = plan_phase(kind, w);
  plan.max_errors = opts.max_errors;
  plan.give_up_us = opts.give_up_us;
  const bool rate_mode = plan.open_loop();
  PhaseSeconds::Where where = at.where;
  where.label += " ";
  where.label += phase_kind_name(kind);
  const std::string& label = where.label;
  ProgressLine progress(opts.progress);
  int64_t phase_id = 0;
  PhaseSeconds seconds(where, plan, writer, progress);
  auto on_start = [&](int64_t ts) {
    phase_id = writer.begin_phase({where.run_id, where.target_id, at.ordinal, at.step, plan, ts,
                                   w.threads, w.threads * w.connections, w.to_json()});
    seconds.began(phase_id, ts);
  };
  auto on_second = [&](const SecondReport& sec) {
    if (step) note_step_second(sec, step);
    seconds(sec);
  };
  PhaseResult result = run_phase(plan, w, clients, values, stop, on_start, on_second);
  progress.finish();
  uint64_t abandoned = 0;
  for (const auto& c : clients) abandoned += c->abandoned();
  if (abandoned > 0) {
    std::string msg = label + ": " + std::to_string(abandoned) +
                      " requests in flight at the interrupt were given up: not counted, but the "
                      "store may have executed them";
    log_warn() << msg;
    writer.event(where.run_id, "requests_abandoned", msg);
  }
  writer.end_phase(phase_id, result.ended_ts_us, run_status_name(result.status), result.totals,
                   rate_mode);
  // Requests due before the end that left late (engine/pacer.hpp kEndGraceNs) stretch the
  // phase past its duration: its rates are over its real wall time, and the file says so.
  const int64_t past_us = result.ended_ts_us - result.started_ts_us - plan.duration_us;
  if (rate_mode && plan.duration_us > 0 && past_us > kEndGraceNs / 1000 &&
      result.status == RunStatus::completed) {
    const std::string msg =
        label + ": ran " + fmt_fixed(static_cast<double>(past_us) / 1e6, 2) + " s past its " +
        format_duration_us(plan.duration_us) +
        " to send the requests due before its end, late; its req/s is over the " +
        fmt_fixed(static_cast<double>(result.ended_ts_us - result.started_ts_us) / 1e6, 2) +
        " s it really took";
    log_info() << msg;
    writer.event(where.run_id, "phase_extended", msg);
  }
  if (step) fill_step_run(result, phase_id, w, step);
  if (result.status == RunStatus::failed) return {result.status, label + ": " + result.error};
  if (result.status == RunStatus::interrupted) return {result.status, "interrupted by signal"};
  return {};
}

// --start-at: sleeps until the wall clock reads `ts_us` (in slices, so Ctrl-C ends the wait),
// writing the store's stats polled meanwhile each second (a wait of hours would overflow their
// queue), and records when the wait ended. False when interrupted.
bool wait_for_start(int64_t ts_us, const std::atomic<bool>& stop, ResultsWriter& writer,
                    int64_t run_id, int64_t target_id, StoreStatsPoller& stats) {
  log_info() << "waiting for --start-at ("
             << format_duration_us(std::max<int64_t>(0, ts_us - now_ts_us())) << ")";
  int64_t written_us = steady_us();
  for (;;) {
    if (steady_us() - written_us >= 1'000'000) {
      writer.write_store_stats(target_id, stats.drain());
      written_us = steady_us();
    }
    if (stop.load()) return false;
    const int64_t left = ts_us - now_ts_us();
    if (left <= 0) break;
    std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(left, 100'000)));
  }
  const int64_t late = now_ts_us() - ts_us;
  writer.add_metadata(
      run_id, std::nullopt,
      {{"start_at_ts_us", std::to_string(ts_us)}, {"start_at_late_us", std::to_string(late)}});
  return true;
}

// Runs every step's phases against one target. Returns how the last phase run ended.
// The target's row, and its settings (read over a connection of their own,
// store/stats_sources.hpp) as its run_metadata.
int64_t record_target(const RunOptions& opts, const TargetSpec& spec, int64_t run_id, int ordinal,
                      ResultsWriter& writer, const std::string& server_version) {
  const int64_t target_id = writer.add_target(run_id, ordinal, spec, server_version);
  std::vector<std::pair<std::string, std::string>> settings;
  try {
    settings = read_store_settings(spec, std::min<int64_t>(opts.client.timeout_us, 1'000'000));
  } catch (const std::exception& e) {
    log_warn() << spec.display << ": could not read its settings: " << e.what();
  }
  ResultsWriter::Metadata config;
  for (auto& [name, value] : settings) config.emplace_back(std::move(name), std::move(value));
  // ?verify=0: nothing checked who answered. Said once, and kept beside the results.
  if (spec.tls.enabled && !spec.tls.verify) {
    log_warn() << spec.display
               << ": TLS without verification (verify=0): the server's certificate and "
                  "name are not checked";
    config.emplace_back("tls_verify", "0");
  }
  writer.add_metadata(run_id, target_id, config);
  return target_id;
}

// The store-stats poller is done with the target (`wait`: for its poll under way; not at a
// Ctrl-C, when the store may be stalled): what it gathered goes to the file.
void end_store_stats(StoreStatsPoller& stats, ResultsWriter& writer, int64_t target_id, bool wait) {
  stats.stop(wait);
  writer.write_store_stats(target_id, stats.drain());
}

// --hdr-log: this target's interval log, opened with a comment naming the run and target.
void open_hdr_log(std::optional<HdrLogWriter>& log, const RunOptions& opts, int64_t run_id,
                  int ordinal, const TargetSpec& spec) {
  if (opts.hdr_log_prefix.empty()) return;
  log.emplace(hdr_log_path(opts.hdr_log_prefix, ordinal), system_clock_source().wall_us());
  log->comment("[kvdrive run " + std::to_string(run_id) + ", target " + std::to_string(ordinal) +
               ": " + spec.display + "]");
}

// --processes: the group's processes start each phase together (a search group's over the
// search's pipes); false when stopped meanwhile.
bool wait_for_phase(const RunOptions& opts, int ordinal, int phase, const std::atomic<bool>& stop) {
  const bool follows = opts.search_follow_in >= 0;
  return wait_phase_barrier(follows ? opts.search_follow_in : opts.phase_barrier_in,
                            follows ? opts.search_follow_out : opts.phase_barrier_out, ordinal,
                            phase, stop);
}

RunEnd run_target(const RunOptions& opts, const TargetSpec& spec, int64_t run_id, int ordinal,
                  ResultsWriter& writer, Database& db, Monitors& monitors, const ValueTable& values,
                  const std::atomic<bool>& stop) {
  std::vector<std::unique_ptr<EventClient>> clients;
  int64_t target_id = 0;
  int phase_ordinal = 0;
  StoreStatsPoller stats(spec, 1'000'000, std::min<int64_t>(opts.client.timeout_us, 1'000'000));
  std::optional<HdrLogWriter> hdr_log;
  open_hdr_log(hdr_log, opts, run_id, ordinal, spec);
  for (const RunStep& step : opts.steps) {
    const WorkloadSpec& w = step.workload;
    const auto wanted = static_cast<size_t>(w.threads) * static_cast<size_t>(w.connections);
    // ?read-from=replica: CLUSTER SLOTS read anew for each phase, since it lists a replica only
    // once it has replicated something (a load phase's writes give the next phase its replicas).
    if (clients.size() != wanted || spec.read_from_replica) {
      clients.clear();
      clients = connect_event_clients(spec, wanted, opts.client);
    }
    if (target_id == 0) {
      target_id =
          record_target(opts, spec, run_id, ordinal, writer, clients.front()->server_version());
      stats.start();
    }
    PhaseSlot at{
        {run_id, target_id, spec.display + (step.name.empty() ? "" : " [" + step.name + "]"),
         &stats, &monitors, &db, hdr_log ? &*hdr_log : nullptr},
        0,
        step.name};
    // --search: the phases before the last run once (the load), the last one is stepped.
    const size_t once = opts.search.enabled ? w.phases.size() - 1 : w.phases.size();
    RunEnd end;
    if (opts.start_at_ts_us > 0 && ordinal == 0 && phase_ordinal == 0) {
      if (!wait_for_start(opts.start_at_ts_us, stop, writer, run_id, target_id, stats)) {
        end_store_stats(stats, writer, target_id, false);  // kept, as at a Ctrl-C in a phase
        return {RunStatus::interrupted, "interrupted by signal"};
      }
    }
    for (size_t i = 0; i < once && end.completed(); ++i) {
      at.ordinal = phase_ordinal++;
      if (!wait_for_phase(opts, ordinal, at.ordinal, stop)) {
        end = {RunStatus::interrupted, "interrupted by signal"};
        break;
      }
      end = run_one_phase(opts, at, w, w.phases[i], clients, writer, values, stop);
      monitors.flush(db);  // nothing else flushes between phases
    }
    if (opts.search.enabled && end.completed()) {
      auto run_step = [&](double rate) -> std::optional<StepRun> {
        StepRun run;
        at.ordinal = phase_ordinal++;
        end = run_one_phase(opts, at, search_step_workload(opts.search, w, rate), w.phases.back(),
                            clients, writer, values, stop, &run);
        monitors.flush(db);
        writer.write_store_stats(target_id, stats.drain());  // the store's pid, for kvmon's rows
        if (!end.completed()) return std::nullopt;
        return run;
      };
      if (opts.search_follow_in >= 0) {
        follow_search(opts.search_follow_in, opts.search_follow_out, run_id, target_id, run_step);
        // Told to stop between two steps: the parent sends no more and the run is interrupted.
        if (end.completed() && stop.load()) end = {RunStatus::interrupted, "interrupted by signal"};
      } else
        run_search(opts.search, db, run_id, target_id, spec.protocol, at.where.label, run_step);
    }
    if (!end.completed()) {
      end_store_stats(stats, writer, target_id, end.status != RunStatus::interrupted);
      return end;
    }
  }
  end_store_stats(stats, writer, target_id, true);  // the last poll is at most a second old
  return {};
}

}  // namespace

std::vector<TargetSpec> check_run_options(const RunOptions& opts) {
  check_results_path("--db", opts.db_path, false);
  std::vector<TargetSpec> specs;
  for (const auto& t : opts.targets) specs.push_back(parse_target_uri(t));
  for (const auto& spec : specs) {
    try {  // a missing or bad CA / certificate / key file: one line, exit 2
      if (spec.tls.enabled) store::TlsContext check(spec.tls);
    } catch (const UsageError& e) {
      throw UsageError(spec.display + ": " + e.what());
    }
  }
  for (const auto& hp : opts.monitors) {
    auto parsed = proto::split_host_port(hp);
    if (!parsed) throw UsageError("invalid --monitor '" + hp + "': " + parsed.error().message);
  }
  if (!opts.monitor_token_file.empty() && opts.monitors.empty())
    throw UsageError("--monitor-token-file needs --monitor");
  read_monitor_token(opts.monitor_token_file);
  const bool uring = std::any_of(opts.steps.begin(), opts.steps.end(),
                                 [](const RunStep& s) { return s.workload.io == IoMode::uring; });
  if (uring) {
    if (const std::string why = io_uring_refusal(); !why.empty())
      throw UsageError("--io uring: " + why + " (--io epoll works here)");
  }
  return specs;
}

void resolve_io(std::vector<RunStep>& steps) {
  const auto open = [](const RunStep& s) {
    return s.workload.io == IoMode::automatic && !s.workload.wire_start_kernel;
  };
  bool can = false;
  if (std::any_of(steps.begin(), steps.end(), open)) {
    const std::string why = io_uring_refusal();
    can = why.empty();
    if (!can) log_debug() << "--io auto: epoll (io_uring: " << why << ")";
  }
  for (auto& s : steps) {
    if (s.workload.io == IoMode::automatic)
      s.workload.io = can && open(s) ? IoMode::uring : IoMode::epoll;
  }
}

std::vector<size_t> round_target_order(size_t targets, int round) {
  std::vector<size_t> order(targets);
  for (size_t i = 0; i < targets; ++i)
    order[i] = (i + static_cast<size_t>(std::max(round, 1) - 1)) % targets;
  return order;
}

namespace {

// A replay's trace, sized before it runs: its miss-ratio curve into the run (trace_curves), once
// per trace file of the run's steps. Its two passes over the file cost ~250 ns a request.
void write_trace_curves(const RunOptions& opts, ResultsWriter& writer, int64_t run_id) {
  std::set<std::string> done;
  for (const auto& step : opts.steps) {
    const std::string& path = step.workload.trace.path;
    if (path.empty() || !done.insert(path).second) continue;
    try {
      const TraceCurve curve = trace_miss_ratio_curve(path, kTraceCurveKeys, curve_fractions());
      writer.write_trace_curve(run_id, path, curve);
    } catch (const TraceError& e) {  // changed since it was scanned: the replay will say so
      log_warn() << "no miss-ratio curve of the trace: " << e.what();
    }
  }
}

}  // namespace

RunRecord run_benchmark(const RunOptions& opts, const std::atomic<bool>& stop) {
  // Everything that can be checked is checked before the file is touched.
  std::vector<TargetSpec> specs = check_run_options(opts);
  uint64_t largest_value = 1;
  for (const auto& step : opts.steps)
    largest_value = std::max<uint64_t>(
        largest_value, step.workload.trace.on() ? kTraceMaxValue : step.workload.largest_value());
  for (const auto& spec : specs) connect_event_clients(spec, 1, opts.client);  // reachable?

  // kvmon links are checked before the file is touched too (an unreachable one is an error).
  Monitors monitors(opts.monitors, opts.monitor_token_file, opts.monitor_optional);
  ValueTable values(largest_value, opts.steps.front().workload.seed);
  RunRecord rec{0, RunStatus::completed, "", open_results_db(opts.db_path)};
  Database& db = rec.db;
  ResultsWriter writer(db);
  // A segment of a --group is its group's member I-1 of N, as a --processes member is.
  const bool segmented = opts.segment_count > 1;
  RunInfo info{opts.name,
               opts.command_line,
               search_parameters_json(opts.steps.front().workload.to_json(), opts.search),
               now_ts_us(),
               opts.scenario,
               opts.scale,
               opts.run_group,
               segmented ? opts.segment_index - 1 : opts.process_index,
               segmented ? opts.segment_count : opts.process_count,
               opts.repeat_group,
               opts.round,
               opts.rounds};
  const int64_t run_id = rec.run_id = writer.begin_run(info);
  ResultsWriter::Metadata facts = host_metadata();
  facts.emplace_back("engine", "events");  // the only engine since #16; kept for older files
  if (opts.segment_count > 1)
    facts.emplace_back(
        "segment", std::to_string(opts.segment_index) + "/" + std::to_string(opts.segment_count));
  if (opts.segment_count > 1 || opts.start_at_ts_us > 0)
    for (auto& f : clock_metadata()) facts.push_back(std::move(f));
  writer.add_metadata(run_id, std::nullopt, facts);
  log_info() << "run " << run_id << " recording into " << opts.db_path;
  write_trace_curves(opts, writer, run_id);
  RunWatcher watcher(opts.db_path, run_id);  // a second Ctrl-C: mark the run, leave at once

  try {
    for (size_t i : round_target_order(specs.size(), opts.round)) {
      if (rec.status != RunStatus::completed) break;
      RunEnd end = run_target(opts, specs[i], run_id, static_cast<int>(i), writer, db, monitors,
                              values, stop);
      rec.status = end.status;
      rec.error = std::move(end.error);
    }
  } catch (const std::exception& e) {
    rec.status = RunStatus::failed;
    rec.error = e.what();
  }
  const std::string status = run_status_name(rec.status);
  try {
    monitors.finish(db, now_ts_us());
  } catch (const std::exception& e) {
    log_error() << "could not write the last monitor samples: " << e.what();
  }
  if (rec.status != RunStatus::completed) {
    // A phase cut short by an exception (the disk filled, the file went away) was never ended:
    // mark it with the run, as far as the file still takes writes (an update needs little room;
    // if even that fails, the next open of the file marks it, see mark_abandoned).
    try {
      writer.end_running_phases(run_id, status);
    } catch (const std::exception& e) {
      log_error() << "could not mark the phase left running in run " << run_id << ": " << e.what();
    }
  }
  try {
    writer.end_run(run_id, status, rec.error);
  } catch (const std::exception& e) {
    log_error() << "could not record the end of run " << run_id << ": " << e.what();
  }
  return rec;
}

}  // namespace kv::drive
