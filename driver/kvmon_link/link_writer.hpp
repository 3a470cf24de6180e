// Stores what MonitorLink received from a remote kvmon in kvdrive's results file: a
// monitor_sessions row per remote kvmon session (with the clock offset), its instances, samples
// and events with ts_us moved into kvdrive's time base and the raw time in remote_ts_us.
// Used by the one thread that owns the Database (kvdrive's collector). Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/protocol.hpp"
#include "kvbench/sqlite.hpp"
#include "kvmon_link/clock_sync.hpp"

namespace kv::drive {

// One unit of work handed from the network thread to the writer.
struct LinkItem {
  enum class Kind {
    session,  // msg: kvmon's hello reply; a new remote session begins
    clock,    // the offset was measured again
    row,      // msg: instance, proc, host, disk or event, from the current session
    gap,      // text: why samples are missing from ts_us on (a monitor_gap event)
    dropped,  // text: the peer passed a bound and was dropped (monitor_dropped; session failed)
    end,      // the link stopped: the session is completed
  };
  Kind kind = Kind::row;
  proto::Message msg;
  ClockEstimate clock;  // in force when the item was received
  std::string text;
  int64_t ts_us = 0;  // for gap: kvdrive's time
};

struct LatestMemory {
  std::string name;
  std::optional<int64_t> rss_kib, swap_kib;
};

class LinkWriter {
 public:
  explicit LinkWriter(std::string link) : link_(std::move(link)) {}
  // Writes the items in one transaction. Throws SqliteError (nothing of them is then kept).
  void write(Database& db, const std::vector<LinkItem>& items);
  // Latest RSS and swap per instance name, of instances sampled within 5 s of the newest sample.
  std::vector<LatestMemory> latest() const;
  std::optional<int64_t> session_id() const { return session_id_; }

 private:
  struct Key {
    int64_t pid, start_ticks;
    // clang-tidy 14 sees a literal 0 in a defaulted <=> (a false positive).
    // NOLINTBEGIN(modernize-use-nullptr)
    auto operator<=>(const Key&) const = default;
    // NOLINTEND(modernize-use-nullptr)
  };
  struct Seen {
    std::string name;
    int64_t ts_us = 0;
    std::optional<int64_t> rss_kib, swap_kib;
  };
  void begin_session(Database& db, const LinkItem& item);
  void end_session(Database& db, const std::string& status);
  void set_clock(Database& db, const ClockEstimate& c);
  void write_row(Database& db, const LinkItem& item);
  void insert_instance(Database& db, const proto::Message& m, int64_t offset);
  void insert_proc(Database& db, const proto::Message& m, int64_t offset);
  void insert_host(Database& db, const proto::Message& m, int64_t offset);
  void insert_disk(Database& db, const proto::Message& m, int64_t offset);
  void insert_event(Database& db, const proto::Message& m, int64_t offset);
  void insert_gap(Database& db, const LinkItem& item, const char* kind);
  std::optional<int64_t> instance_id(const proto::Message& m, const char* pid_key,
                                     const char* ticks_key) const;

  std::string link_;
  std::optional<int64_t> session_id_;
  std::string host_;
  int64_t last_ts_us_ = 0;  // newest sample of the session, kvdrive's time
  std::map<Key, int64_t> instance_ids_;
  std::map<Key, Seen> seen_;
  size_t unannounced_ = 0;  // samples of unannounced processes left out, warned about once
};

}  // namespace kv::drive
