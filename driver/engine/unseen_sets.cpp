#include "engine/unseen_sets.hpp"

#include <algorithm>
#include <vector>

#include "kvbench/log.hpp"

namespace kv::drive {

UnseenSetCheck::UnseenSetCheck(const TargetSpec& spec, const WorkloadSpec& w, PhaseKind kind,
                               int64_t timeout_us, bool reads_every_reply)
    : spec_(spec), w_(w), kind_(kind), timeout_us_(std::min<int64_t>(timeout_us, 2'000'000)) {
  const bool sends_sets = kind == PhaseKind::load || (kind == PhaseKind::mixed && w.ratio_sets > 0);
  const bool buffered = w.pipeline > 1 || w.connections > 1;  // worker.cpp's pipelined path
  active_ = spec.protocol == Protocol::memcached && !spec.binary_protocol && sends_sets &&
            buffered && spec.servers.size() == 1 && !reads_every_reply;
  if (active_) {
    if (auto c = read_set_counters(spec_, timeout_us_)) {
      before_ = *c;
      have_before_ = true;
    }
  }
}

std::string UnseenSetCheck::after(const std::string& label, uint64_t sent, uint64_t abandoned,
                                  uint64_t* refused_exactly) {
  *refused_exactly = 0;
  if (!active_ || sent == 0) return "";
  const std::string unseen =
      ": set verdicts are not seen over the text protocol with --pipeline or --connections > 1 "
      "(libmemcached reads only each batch's last reply); ?protocol=binary counts each refused "
      "set as an error";
  MemcachedSetCounters after;
  bool have_after = false;
  if (have_before_) {
    if (auto c = read_set_counters(spec_, timeout_us_)) {
      after = *c;
      have_after = true;
    }
  }
  if (have_before_ && have_after && before_.cmd_set >= 0 && after.cmd_set >= 0 &&
      (before_.no_memory >= 0 || before_.too_large >= 0)) {
    auto delta = [](int64_t a, int64_t b) -> uint64_t {
      return a >= 0 && b >= a ? static_cast<uint64_t>(b - a) : 0;
    };
    const uint64_t no_memory = delta(before_.no_memory, after.no_memory);
    const uint64_t too_large = delta(before_.too_large, after.too_large);
    const uint64_t refused = no_memory + too_large;
    const uint64_t counted = delta(before_.cmd_set, after.cmd_set);
    if (refused == 0) return "";
    std::string figures = "store_no_memory +" + std::to_string(no_memory) + ", store_too_large +" +
                          std::to_string(too_large);
    // memcached 1.6 leaves sets refused for memory out of cmd_set; others may count them.
    if ((counted == sent || counted + refused == sent) && abandoned == 0) {
      *refused_exactly = refused;
      return label + ": the server refused " + std::to_string(refused) + " of the " +
             std::to_string(sent) + " sets kvdrive counted as ok (" + figures + ")" + unseen;
    }
    return label + ": the server refused " + std::to_string(refused) +
           " sets while this phase ran (" + figures + "; it counted " + std::to_string(counted) +
           " sets, kvdrive sent " + std::to_string(sent) +
           ": other clients wrote too), and kvdrive counted its sets as ok" + unseen;
  }
  if (kind_ == PhaseKind::load && w_.ttl_s == 0 && w_.process_count == 1 &&
      w_.worker_total == 0) {  // alone: other processes or hosts write the rest
    // 100 keys spread over the whole key range.
    std::vector<std::string> keys;
    const uint64_t samples = std::min<uint64_t>(100, w_.keys);
    KeyFormatter f(w_.key_prefix);
    for (uint64_t i = 0; i < samples; ++i) keys.emplace_back(f.format(i * w_.keys / samples));
    auto sample = sample_keys_present(spec_, keys, timeout_us_);
    if (!sample) return "";
    if (sample->present == sample->sampled) return "";
    return label + ": " + std::to_string(sample->sampled - sample->present) + " of " +
           std::to_string(sample->sampled) +
           " keys read back after the load are not on the server: it refused (or dropped) sets "
           "that kvdrive counted as ok" +
           unseen;
  }
  return label +
         ": this server has no set counters to check against: sets it refused are "
         "counted as ok" +
         unseen;
}

void record_unseen_sets(UnseenSetCheck& check, Database& db, ResultsWriter& writer, int64_t run_id,
                        int64_t phase_id, const std::string& label, uint64_t abandoned,
                        PhaseResult& result) {
  auto q = db.prepare(
      "SELECT COALESCE(SUM(ops), 0), COALESCE(SUM(ok), 0) FROM "
      "driver_seconds WHERE phase_id = ? AND op = 'set'");
  q.bind(1, phase_id);
  const bool have = q.step();
  const uint64_t sent = have ? static_cast<uint64_t>(q.column_int(0)) : 0;
  const uint64_t sets_ok = have ? static_cast<uint64_t>(q.column_int(1)) : 0;
  uint64_t refused = 0;
  if (std::string msg = check.after(label, sent, abandoned, &refused); !msg.empty()) {
    log_warn() << msg;
    writer.event(run_id, "set_verdicts_unseen", msg);
  }
  // Every set counted ok was refused: then each second's sets are known to be errors, exactly
  // (a partial refusal cannot be placed in its seconds, and is left to the event).
  if (refused > 0 && refused == sets_ok) {
    WriteTransaction tx(db);
    db.prepare(
          "UPDATE driver_seconds SET errors = errors + ok, ok = 0 "
          "WHERE phase_id = ? AND op = 'set'")
        .bind(1, phase_id)
        .run();
    tx.commit();
    auto left = db.prepare("SELECT COALESCE(SUM(ok), 0) FROM driver_seconds WHERE phase_id = ?");
    left.bind(1, phase_id);
    if (left.step() && left.column_int(0) == 0 && result.status == RunStatus::completed) {
      result.status = RunStatus::failed;  // errors only, as the collector would have said
      result.error = "the server refused every set (" + std::to_string(refused) + ")";
    }
  }
}

}  // namespace kv::drive
