#include "kvbench/schema.hpp"

#include <stdexcept>
#include <string>

#include "kvbench/log.hpp"
#include "kvbench/recovery.hpp"

namespace kv::schema {

int latest_version() { return static_cast<int>(migrations().size()); }

void migrate(Database& db, int target) {
  if (target < 0) target = latest_version();
  const int initial = db.user_version();
  for (;;) {
    // Read the version inside a write transaction, so two processes opening a new file at once
    // apply each migration exactly once.
    WriteTransaction tx(db);
    int current = db.user_version();
    if (current > latest_version() || current > target) {
      throw std::runtime_error(db.path() + " has schema version " + std::to_string(current) +
                               ", newer than this kvbench understands (" +
                               std::to_string(target) + "): upgrade kvbench to open it");
    }
    if (current == target) {
      tx.commit();
      return;
    }
    const Migration& m = migrations().at(static_cast<size_t>(current));
    if (initial > 0 && current == initial) {
      log_info() << db.path() << ": upgrading schema from version " << current << " to "
                 << target;
    }
    db.exec(m.sql);
    db.exec("PRAGMA user_version = " + std::to_string(m.version));
    tx.commit();
  }
}

}  // namespace kv::schema

namespace kv {
Database open_results_db(const std::string& path) {
  Database db = Database::open(path);
  schema::migrate(db);
  mark_abandoned(db);
  return db;
}
}  // namespace kv
