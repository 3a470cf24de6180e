#include "kvmon_link/monitors.hpp"

#include <stdexcept>

#include "kvbench/log.hpp"
#include "kvbench/token_file.hpp"
#include "kvbench/units.hpp"
#include "kvmon_link/monitor_link.hpp"

namespace kv::drive {
namespace {

// Rows written per link and call (once a second, on the collector's thread): a few ms of
// SQLite; far more than a kvmon sends in a second, so only a flood (or a backlog after the
// results file was locked) waits for the next call.
constexpr size_t kMaxItemsPerFlush = 10'000;

std::string kib_text(const std::optional<int64_t>& kib) {
  return kib ? format_size(static_cast<uint64_t>(*kib) * 1024) : "?";
}

}  // namespace

std::string read_monitor_token(const std::string& path) {
  if (path.empty()) return "";
  return read_token_file(path, "--monitor-token-file").token;
}

Monitors::Monitors(const std::vector<std::string>& host_ports, const std::string& token_file,
                   bool optional) {
  std::string token;
  if (!token_file.empty()) {  // checked before (check_run_options): warn here, once
    TokenFile t = read_token_file(token_file, "--monitor-token-file");
    if (!t.warning.empty()) log_warn() << t.warning;
    token = std::move(t.token);
  }
  for (const auto& hp : host_ports) {
    links_.push_back(std::make_unique<MonitorLink>(hp, token, optional));
    links_.back()->start();
    if (auto c = links_.back()->clock())
      log_info() << "kvmon at " << hp << ": clock offset " << c->offset_us << " us +- "
                 << c->uncertainty_us << " us";
  }
}

Monitors::~Monitors() {
  for (auto& l : links_) l->stop();
}

std::string Monitors::flush(Database& db) { return flush(db, kMaxItemsPerFlush); }

std::string Monitors::flush(Database& db, size_t max_items) {
  std::string text;
  for (auto& l : links_) {
    try {
      for (const auto& latest : l->flush_into(db, max_items)) {
        if (text.size() > 120) break;  // keep the line on one terminal row
        text += "  " + latest.name + " rss " + kib_text(latest.rss_kib) + " swap " +
                kib_text(latest.swap_kib);
      }
    } catch (const SqliteError& e) {
      log_warn() << "kvmon at " << l->host_port() << ": rows kept for later: " << e.what();
    }
  }
  return text;
}

void Monitors::finish(Database& db, int64_t until_ts_us) {
  for (auto& l : links_) l->stop(until_ts_us);
  flush(db, MonitorLink::kAll);
}

}  // namespace kv::drive
