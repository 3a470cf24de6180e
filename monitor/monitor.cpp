#include "monitor.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <csignal>
#include <memory>
#include <stdexcept>

#include "batch_writer.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/time_base.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "metrics_server.hpp"
#include "metrics_text.hpp"
#include "samplers.hpp"
#include "server.hpp"
#include "sqlite_sink.hpp"
#include "tracker.hpp"

namespace kv::mon {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

size_t queue_capacity(const MonitorConfig& config) {
  if (config.max_queued > 0) return static_cast<size_t>(config.max_queued);
  return static_cast<size_t>(std::clamp<int64_t>(10'000'000 / config.interval_us, 16, 10'000));
}

// Owns the samplers, the sink and the timer; ticks on whole multiples of the interval of the
// wall clock.
class Loop {
 public:
  Loop(const MonitorConfig& config, asio::io_context& io)
      : config_(config),
        fs_(config.proc_root, config.sys_root),
        // PSI's avg10 changes every 2 s: the pressure files are read at most that often
        host_(fs_, std::max<int64_t>(1, 2'000'000 / effective_host_interval_us(config))),
        tracker_(fs_, config.selectors, sysconf(_SC_CLK_TCK), host_.boot_ts_us(), config.pss,
                 cadence_for_interval(config.interval_us)),
        writer_(std::make_unique<SqliteSink>(
                    config.db_path, SessionInfo{host_name(), now_ts_us(), config.interval_us,
                                                getpid(), config.command_line}),
                queue_capacity(config), effective_flush_interval_us(config)),
        io_(io),
        timer_(io),
        cgroup_notify_(io),
        host_every_(std::max<int64_t>(1, effective_host_interval_us(config) / config.interval_us)) {
  }

  void start() {
    log_info() << "sampling " << config_.selectors.size() << " target(s) every "
               << format_duration_us(config_.interval_us) << " and the host every "
               << format_duration_us(host_every_ * config_.interval_us) << " into "
               << config_.db_path;
    // Ticks fall on whole multiples of the interval on the wall clock (the common time base
    // kvdrive cuts its per-second rows on), re-anchored every tick, so a tick's scheduled time
    // lands in the same second of both programs even while the wall clock is slewed. The first
    // tick is taken at once, late for the grid point it belongs to.
    clock_.anchor();
    const int64_t now = clock_.now_ts_us();
    start_wall_us_ = now - now % config_.interval_us;
    if (!config_.server.address.empty()) start_server();
    if (!config_.metrics.address.empty()) start_metrics();
    if (tracker_.cgroup_notify_fd() >= 0) {
      cgroup_notify_.assign(::dup(tracker_.cgroup_notify_fd()));
      watch_cgroups();
    }
    start_psi_triggers();
    on_tick();
  }

  void stop() {
    // A tick whose timer expired before the cancel is still handed to its handler, with
    // success (Asio cannot take back a completion already queued): without the flag that tick
    // would run and arm the next one, and kvmon would never stop.
    stopping_ = true;
    timer_.cancel();
    boost::system::error_code ignored;
    cgroup_notify_.close(ignored);
    for (auto& w : cgroup_psi_waits_) w->wait.close(ignored);
    for (auto& w : psi_waits_) w->close(ignored);
    if (server_) server_->stop();
    if (metrics_server_) metrics_server_->stop();
  }

  // Writes what is queued and marks the session completed.
  void finish() { writer_.close("completed"); }

 private:
  void on_tick() {
    Batch batch = writer_.fresh();
    batch.scheduled_ts_us = start_wall_us_ + tick_ * config_.interval_us;
    tracker_.tick(batch);
    follow_cgroup_psi_triggers();
    // The host on ticks 0, k, 2k, ... (after skipped ticks: the first tick of the next slot).
    if (tick_ / host_every_ != last_host_slot_) {
      last_host_slot_ = tick_ / host_every_;
      batch.host = host_.sample(tracker_.loadavg_text());
      batch.host->scheduled_ts_us = batch.scheduled_ts_us;
    }
    for (EventRecord& e : server_events_) batch.events.push_back(std::move(e));
    server_events_.clear();
    for (EventRecord& e : cgroup_events_) batch.events.push_back(std::move(e));
    cgroup_events_.clear();
    for (EventRecord& e : clock_events_) batch.events.push_back(std::move(e));
    clock_events_.clear();
    if (server_) server_->publish(batch);
    if (metrics_) metrics_->update(batch);
    writer_.push(std::move(batch));
    schedule_next();
  }

  // A watched cgroup events file changed (v2 memory.events): its events are read at once, with
  // the time of that reading, and go out with the next tick.
  void watch_cgroups() {
    cgroup_notify_.async_wait(asio::posix::stream_descriptor::wait_read,
                              [this](const boost::system::error_code& ec) {
                                if (ec) return;
                                tracker_.on_cgroup_notify(cgroup_events_);
                                watch_cgroups();
                              });
  }

  // The cgroup PSI triggers (--psi-trigger cgroup:...) are set and closed by the tracker as
  // targets come, move and go: after a tick that changed them, each is waited on here anew
  // (POLLPRI, on a dup of its descriptor, closed here when the tracker closed the trigger).
  // A firing is an event of its target, sent with the next tick.
  struct CgroupPsiWait {
    CgroupPsiWait(asio::io_context& io, int fd, ProcessKey k, std::string m)
        : wait(io, fd), key(k), message(std::move(m)) {}
    asio::posix::stream_descriptor wait;
    ProcessKey key;
    std::string message;
  };
  void follow_cgroup_psi_triggers() {
    if (tracker_.cgroup_psi_generation() == cgroup_psi_generation_) return;
    cgroup_psi_generation_ = tracker_.cgroup_psi_generation();
    boost::system::error_code ignored;
    for (auto& w : cgroup_psi_waits_) w->wait.close(ignored);
    cgroup_psi_waits_.clear();
    for (auto& t : tracker_.cgroup_psi_triggers()) {
      const int fd = ::dup(t.fd);
      if (fd < 0) continue;
      cgroup_psi_waits_.push_back(std::make_shared<CgroupPsiWait>(io_, fd, t.key, t.message));
      wait_cgroup_psi(cgroup_psi_waits_.back());
    }
  }

  void wait_cgroup_psi(const std::shared_ptr<CgroupPsiWait>& w) {
    w->wait.async_wait(asio::posix::stream_descriptor::wait_error, [this, w](const boost::system::
                                                                                 error_code& ec) {
      if (ec) return;  // closed: the trigger was replaced or kvmon stops
      log_info() << w->message;
      cgroup_events_.push_back(EventRecord{now_ts_us(), "cgroup_psi_trigger", w->message, w->key});
      wait_cgroup_psi(w);
    });
  }

  // --psi-trigger: each trigger that could be set is waited on (POLLPRI); a firing is an event
  // with the time it was seen, sent with the next tick like the cgroup events. The cgroup ones
  // are the tracker's: set on each target's cgroup when it is located.
  void start_psi_triggers() {
    std::vector<PsiTriggerSpec> on_cgroups;
    for (const PsiTriggerSpec& spec : config_.psi_triggers)
      if (spec.cgroup) on_cgroups.push_back(spec);
    if (!on_cgroups.empty()) tracker_.set_cgroup_psi_triggers(std::move(on_cgroups));
    for (const PsiTriggerSpec& spec : config_.psi_triggers) {
      if (spec.cgroup) continue;
      PsiTrigger t(config_.proc_root + "/pressure/" + spec.resource, spec);
      if (t.fd() < 0) {
        log_warn() << "cannot set the PSI trigger " << spec.describe() << " on " << t.path() << " ("
                   << t.error() << "): only the polled avg10 is recorded (a trigger "
                   << "needs a kernel with PSI; without CAP_SYS_RESOURCE, Linux 6.5 and later "
                   << "take only windows of whole multiples of 2s, older ones none)";
        continue;
      }
      log_info() << "PSI trigger set: " << spec.describe() << " on " << t.path();
      psi_waits_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(t.fd())));
      psi_triggers_.push_back(std::move(t));
      wait_psi(psi_triggers_.size() - 1);
    }
  }

  void wait_psi(size_t i) {
    psi_waits_[i]->async_wait(
        asio::posix::stream_descriptor::wait_error, [this, i](const boost::system::error_code& ec) {
          if (ec) return;
          const PsiTrigger& t = psi_triggers_[i];
          std::string msg =
              "host pressure: " + t.spec().describe() + " (PSI trigger on " + t.path() + ")";
          log_info() << msg;
          cgroup_events_.push_back(EventRecord{now_ts_us(), "psi_trigger", msg, std::nullopt});
          wait_psi(i);
        });
  }

  // Events of the server (a client dropped) go out with the next tick, through the same path.
  void start_server() {
    ServerIdentity id{host_name(),
                      getpid(),
                      start_wall_us_,
                      config_.interval_us,
                      host_every_ * config_.interval_us,
                      config_.command_line,
                      {}};
    for (const Selector& sel : config_.selectors) id.selectors.push_back(sel.text());
    server_ = std::make_unique<MonitorServer>(
        io_, config_.server, std::move(id),
        [this](EventRecord e) { server_events_.push_back(std::move(e)); });
  }

  // The /metrics page is made when a scraper asks, from the latest tick; kvmon's own usage is
  // read then too.
  void start_metrics() {
    std::vector<std::string> selectors;
    for (const Selector& sel : config_.selectors) selectors.push_back(sel.text());
    metrics_ = std::make_unique<MetricsRegistry>(std::move(selectors), sysconf(_SC_CLK_TCK),
                                                 sysconf(_SC_PAGESIZE));
    metrics_server_ = std::make_unique<MetricsServer>(io_, config_.metrics, [this](bool om) {
      return metrics_->render(om, read_self_usage(sysconf(_SC_CLK_TCK), host_.boot_ts_us()));
    });
  }

  void schedule_next() {
    ++tick_;
    clock_.anchor();
    const int64_t now_ts = clock_.now_ts_us();
    const int64_t ahead = start_wall_us_ + tick_ * config_.interval_us - now_ts;
    if (ahead > config_.interval_us) {
      // The wall clock went back (NTP stepping it, a VM restored): the grid's next time is more
      // than an interval away, and waiting for it would sample nothing meanwhile. The grid moves
      // back by whole intervals, so the next tick is within one; rows after this go on at the new
      // clock's times, before those of the rows before it.
      const int64_t steps = (ahead - 1) / config_.interval_us;
      start_wall_us_ -= steps * config_.interval_us;
      std::string msg = "the wall clock went back at least " +
                        format_duration_us(ahead - config_.interval_us) +
                        ": sampling goes on at the new clock's times; rows before this can be "
                        "later than rows after it";
      log_warn() << msg;
      clock_events_.push_back(EventRecord{now_ts, "clock_stepped", std::move(msg), std::nullopt});
    }
    if (start_wall_us_ + tick_ * config_.interval_us <= now_ts) {
      // overran: skip the ticks already missed, keep the grid
      int64_t behind = (now_ts - start_wall_us_) / config_.interval_us + 1;
      log_warn() << "sampling fell behind: skipped " << (behind - tick_) << " tick(s)";
      tick_ = behind;
    }
    const int64_t due_ns = clock_.to_steady_ns(start_wall_us_ + tick_ * config_.interval_us);
    timer_.expires_at(Clock::time_point(std::chrono::nanoseconds(due_ns)));
    timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !stopping_) on_tick();
    });
  }

  const MonitorConfig& config_;
  ProcFs fs_;
  HostSampler host_;
  Tracker tracker_;
  BatchWriter writer_;
  asio::io_context& io_;
  asio::steady_timer timer_;
  asio::posix::stream_descriptor cgroup_notify_;
  std::vector<std::shared_ptr<CgroupPsiWait>> cgroup_psi_waits_;
  uint64_t cgroup_psi_generation_ = 0;
  std::vector<EventRecord> cgroup_events_;  // and the PSI triggers' events
  std::vector<PsiTrigger> psi_triggers_;
  std::vector<std::unique_ptr<asio::posix::stream_descriptor>> psi_waits_;
  std::unique_ptr<MonitorServer> server_;
  std::vector<EventRecord> server_events_;
  std::vector<EventRecord> clock_events_;  // the wall clock went back
  std::unique_ptr<MetricsRegistry> metrics_;
  std::unique_ptr<MetricsServer> metrics_server_;
  int64_t host_every_;  // ticks
  int64_t last_host_slot_ = -1;
  TimeBase clock_;
  int64_t start_wall_us_ = 0;  // the grid point of tick 0
  int64_t tick_ = 0;
  bool stopping_ = false;  // SIGINT/SIGTERM: no tick runs any more
};

}  // namespace

void validate(const MonitorConfig& config) {
  if (config.db_path.empty()) throw UsageError("--db is required");
  if (config.max_queued < 0) throw UsageError("--max-queued must not be negative");
  if (config.interval_us < kMinIntervalUs || config.interval_us > kMaxIntervalUs) {
    throw UsageError("--interval " + format_duration_us(config.interval_us) +
                     ": must be from 10ms to 1h");
  }
  auto check = [&](const char* option, int64_t us) {
    if (us != 0 && (us < config.interval_us || us > kMaxIntervalUs)) {
      throw UsageError(std::string(option) + " '" + format_duration_us(us) +
                       "': must be from the --interval (" + format_duration_us(config.interval_us) +
                       ") to 1h");
    }
  };
  check("--host-interval", config.host_interval_us);
  check("--flush-interval", config.flush_interval_us);
}

int64_t effective_host_interval_us(const MonitorConfig& config) {
  if (config.host_interval_us > 0) return config.host_interval_us;
  return std::max<int64_t>(config.interval_us, 1'000'000);
}

int64_t effective_flush_interval_us(const MonitorConfig& config) {
  if (config.flush_interval_us > 0) return config.flush_interval_us;
  return std::clamp<int64_t>(5 * config.interval_us, 1'000'000, 5'000'000);
}

int run_monitor(const MonitorConfig& config) {
  validate(config);
  asio::io_context io;
  asio::signal_set signals(io, SIGINT, SIGTERM);  // first: a signal during startup is queued
  Loop loop(config, io);
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    log_info() << "signal " << sig << ": stopping";
    loop.stop();
  });
  loop.start();
  io.run();
  loop.finish();
  log_info() << "session ended";
  return kExitOk;
}

}  // namespace kv::mon
