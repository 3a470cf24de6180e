// The run's --monitor links to kvmon on database hosts, as one object the run loop can flush
// once a second: rows go into the results file, and the latest RSS/swap into the progress line.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

class MonitorLink;

// The token on the first line of --monitor-token-file; "" for an empty path. Throws
// UsageError as kv::read_token_file does (unreadable, empty, under 16 bytes).
std::string read_monitor_token(const std::string& path);

class Monitors {
 public:
  // Connects to every HOST:PORT and measures its clock offset. Throws std::runtime_error naming
  // an unreachable kvmon (unless `optional`), UsageError for a bad address or an
  // unreadable token file. No links: does nothing.
  Monitors(const std::vector<std::string>& host_ports, const std::string& token_file,
           bool optional);
  ~Monitors();
  Monitors(const Monitors&) = delete;
  Monitors& operator=(const Monitors&) = delete;

  // Writes what arrived into db (a bounded amount per link and call); returns "  redis-server rss
  // 58 MiB swap 98 MiB" for the progress line (empty without links). A database error is logged,
  // the rows stay queued.
  std::string flush(Database& db);
  // Stops every link, after waiting (briefly, see MonitorLink::stop) for kvmon's samples up to
  // until_ts_us (the end of the run), and writes the rest (sessions marked completed).
  void finish(Database& db, int64_t until_ts_us);

 private:
  std::string flush(Database& db, size_t max_items);
  std::vector<std::unique_ptr<MonitorLink>> links_;
};

}  // namespace kv::drive
