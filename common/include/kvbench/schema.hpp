// The results file's schema: the migrations embedded from schema/*.sql, applied forward when a
// file is opened. PRAGMA user_version holds the number of the last migration applied.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::schema {

struct Migration {
  int version;       // brings the file to this user_version
  const char* name;  // the file it came from, e.g. "001_initial.sql"
  const char* sql;
};

// All migrations, in order; version i is at index i - 1.
const std::vector<Migration>& migrations();
// The user_version this build writes.
int latest_version();
// The CREATE statements of a database at latest_version(), tables first (generated at build
// time by common/tools/schema_snapshot.cpp from migrations()): what check_results_schema
// compares a file of the latest version with.
const char* latest_schema_sql();

// Applies, each in its own transaction, the migrations after the file's user_version up to
// `target` (default: latest). Throws std::runtime_error if the file is newer than `target`
// ("written by a newer kvbench"), SqliteError on database errors. Safe against another process
// migrating the same file at the same time.
void migrate(Database& db, int target = -1);

}  // namespace kv::schema

namespace kv {
// Opens a results file for writing: WAL, busy timeout, schema migrated to the latest version.
Database open_results_db(const std::string& path);

// Checks that `path` (given as `option`, e.g. "--html") can be written as a file: not a
// directory, in a directory that exists. Throws UsageError naming both.
void check_output_path(std::string_view option, const std::string& path);

// Opens an existing results file without writing anything: read-only, or as immutable when
// SQLite cannot open it read-only (a WAL-mode file in a directory that cannot be written, where
// no -shm can be created; a -wal's frames are then not seen, with a warning). Throws SqliteError.
Database open_results_read_only(const std::string& path);
// open_results_read_only at the latest schema: a file whose schema is older is copied into
// memory and the copy migrated (logged), so the readers of the latest schema can read it; the
// file is left as it was. Throws SqliteError, std::runtime_error for a newer schema.
Database open_results_for_reading(const std::string& path);
// True if the file and its directory can be written (so the file can be opened for writing).
bool results_file_writable(const std::string& path);
// Checks that the schema of `db`, at user_version `version`, has every table, view, index and
// trigger that the migrations up to `version` make, tables and views with the same columns in
// the same order (compared with a freshly migrated in-memory database; views must compile).
// Objects the migrations do not make are allowed. Throws UsageError saying what
// differs.
void check_results_schema(Database& db, int version);
// The checks of an existing, non-empty SQLite file at `path` that check_results_path makes:
// not truncated (its header's page count against its size), a kvbench schema that is complete
// (check_results_schema) and not newer than this build, a -wal beside it that nobody is writing
// read through (quick_check) before anything replays it. Throws UsageError naming
// `option` and `path`. Writes nothing (a -shm SQLite creates to read a -wal is removed).
void check_results_file(std::string_view option, const std::string& path, bool must_exist);
// Refuses a -wal holding frames beside a results file that is missing or empty (SQLite would
// make the new file out of it). Throws UsageError naming `option` and `path`.
void check_no_orphan_wal(std::string_view option, const std::string& path);

// Checks that writing `path` (given as `option`) cannot destroy the results file at
// `results_path`: refuses a path that is that file or its -wal, -shm or -journal file, by
// device and inode (so symlinks and hard links are seen through) and, for a companion file that
// does not exist yet, by its resolved name. Throws UsageError naming both.
void check_not_results_file(std::string_view option, const std::string& path,
                            const std::string& results_path);

// Checks, before anything is written, that `path` (given as `option`, e.g. "--db") can be used
// as a results file: not empty, not a directory, in a directory that exists, and if the file
// exists and is not empty, a SQLite file that passes check_results_file. With `must_exist`,
// the file must also exist and hold a kvbench schema; without it the file will be written, so
// it (when it exists) and its directory must be writable by this user. The check writes
// nothing. Throws UsageError naming the option and the path.
void check_results_path(std::string_view option, const std::string& path, bool must_exist);
}  // namespace kv
