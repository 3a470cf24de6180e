#include "run/phase_seconds.hpp"

#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/units.hpp"
#include "run/kvmon_memory.hpp"
#include "run/progress_text.hpp"

namespace kv::drive {

PhaseSeconds::PhaseSeconds(Where at, const PhasePlan& plan, ResultsWriter& writer,
                           ProgressLine& progress)
    : at_(std::move(at)), plan_(plan), writer_(writer), progress_(progress) {}

void PhaseSeconds::began(int64_t phase_id, int64_t started_ts_us) {
  phase_id_ = phase_id;
  started_ = started_ts_us;
  if (at_.hdr_log)
    at_.hdr_log->comment("[Phase " + at_.label + ": phase_id " + std::to_string(phase_id) +
                         ", started " + std::to_string(started_ts_us) + " us since epoch]");
}

void PhaseSeconds::note_client_stall(const SecondReport& sec) {
  for (OpType op : kAllOps) {
    const OpSecond& s = sec[op];
    if (s.ops == 0 || !is_client_stall(s)) continue;
    // How long a worker waited for a CPU in that second: a descheduled client, or a machine
    // too busy for it, says so here even when the client used no CPU.
    std::string waited;
    if (sec.run_delay_us >= 0) {
      waited = "; a worker waited ";
      waited += fmt_fixed(static_cast<double>(sec.run_delay_us) / 1e3, 1);
      waited += " ms for a CPU in that second";
    }
    const std::string msg =
        std::string(op_name(op)) + " p99 " + fmt_fixed(s.p99_bin_latency_us / 1e3, 3) + " ms at " +
        format_ts_us(sec.ts_us) + ", of which " + fmt_fixed(s.p99_client_us / 1e3, 3) +
        " ms in kvdrive (client send " + fmt_fixed(s.p99_client_send_us / 1e3, 3) +
        ", client recv " + fmt_fixed(s.p99_client_recv_us / 1e3, 3) + waited +
        "): the client, not the store";
    writer_.event(at_.run_id, "client_stall", at_.label + ": " + msg);
    if (!warned_stall_) {
      warned_stall_ = true;
      progress_.finish();
      log_warn() << at_.label << ": " << msg << " (each such second: a client_stall event)";
    }
  }
}

void PhaseSeconds::operator()(const SecondReport& sec) {
  const bool rate_mode = plan_.open_loop();
  writer_.write_second(phase_id_, sec, rate_mode);
  if (at_.hdr_log) {
    for (OpType op : kAllOps) {
      const OpSecond& s = sec[op];
      if (!s.sent) continue;
      at_.hdr_log->interval(op_name(op), sec.ts_us, sec.interval_us, s.latency.dense());
      if (rate_mode)
        at_.hdr_log->interval(std::string(op_name(op)) + "-sent", sec.ts_us, sec.interval_us,
                              s.sent_latency.dense());
    }
  }
  writer_.write_store_stats(at_.target_id, at_.stats->drain());
  std::string monitored = at_.monitors->flush(*at_.db);
  if (monitored.empty()) monitored = local_store_memory(*at_.db, *at_.stats);
  done_ += sec.ops();
  note_client_stall(sec);
  for (const WorkerNote& note : sec.notes) {  // each once per phase, however many workers saw it
    if (!said_notes_.insert(note.text).second) continue;
    progress_.finish();
    log_info() << at_.label << ": " << note.text;
    writer_.event(at_.run_id, note.kind, at_.label + ": " + note.text);
  }
  if (sec.busiest_thread_cpu > 0.9 && !warned_cpu_) {
    warned_cpu_ = true;
    std::string msg = "a worker thread used " + fmt_int(sec.busiest_thread_cpu * 100) +
                      " % of a core: the client may be the bottleneck, not the store";
    progress_.finish();
    log_warn() << at_.label << ": " << msg;
    writer_.event(at_.run_id, "client_bound", at_.label + ": " + msg);
  }
  auto fields =
      progress_fields(at_.label, static_cast<double>(sec.ts_us + sec.interval_us - started_) / 1e6,
                      sec, done_, plan_.requests, static_cast<double>(plan_.duration_us) / 1e6);
  add_progress_fields(fields, store_memory_text(*at_.stats), progress_priority::kStoreMemory);
  add_progress_fields(fields, monitored, progress_priority::kMonitored);
  progress_.update(fields);
}

}  // namespace kv::drive
