// RAII wrappers for SQLite: a connection, prepared statements, and write transactions that
// wait out other writers. Not thread-safe: one thread owns a Database and its Statements.
// Every failure throws SqliteError with the SQLite message and what was being done.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace kv {

class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
  int code() const noexcept { return code_; }  // the SQLite extended result code

 private:
  int code_;
};

class Statement;

class Database {
 public:
  // Opens (creating if needed) the file at `path` in WAL mode with a busy timeout, so several
  // processes can write it; does not touch the schema (see open_results_db in schema.hpp).
  static Database open(const std::string& path, int busy_timeout_ms = 10'000);
  // Opens an existing file read-only, leaving it exactly as it was (no WAL switch, no schema).
  static Database open_read_only(const std::string& path, int busy_timeout_ms = 10'000);
  // Opens an existing file as immutable (URI immutable=1): no locks, no -shm, and a -wal is
  // not read. For files on a read-only filesystem, where SQLite cannot open a WAL-mode file
  // otherwise.
  static Database open_immutable(const std::string& path);
  // A copy of this database in memory (SQLite's online backup), named `label` in messages; for
  // changing what was opened read-only without touching the file. Throws SqliteError.
  Database copy_in_memory(const std::string& label) const;

  Database(Database&&) noexcept = default;
  Database& operator=(Database&&) noexcept = default;
  ~Database();

  // Runs one or more statements without results. Throws SqliteError.
  void exec(std::string_view sql);
  Statement prepare(std::string_view sql);
  int64_t last_insert_rowid() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_.get(); }
  // PRAGMA user_version.
  int user_version();

 private:
  struct Closer {
    void operator()(sqlite3* db) const noexcept;
  };
  Database(std::unique_ptr<sqlite3, Closer> db, std::string path);
  std::unique_ptr<sqlite3, Closer> db_;
  std::string path_;
};

class Statement {
 public:
  Statement(Statement&&) noexcept = default;
  Statement& operator=(Statement&&) noexcept = default;
  ~Statement();

  // Binds by 1-based index. std::nullopt binds NULL.
  Statement& bind(int index, int64_t v);
  Statement& bind(int index, int v) { return bind(index, static_cast<int64_t>(v)); }
  Statement& bind(int index, double v);
  Statement& bind(int index, std::string_view v);
  Statement& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  Statement& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
  Statement& bind_null(int index);
  // Binds column `col` of the current row of `from` (another statement, possibly of another
  // database) exactly as stored: its type and value, bit for bit.
  Statement& bind_column(int index, const Statement& from, int col);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& v) {
    return v ? bind(index, *v) : bind_null(index);
  }

  // Steps once: true if a row is available, false when done. Throws on error.
  bool step();
  // Steps to the end (for statements without results), then resets for reuse.
  void run();
  void reset();

  bool is_null(int col) const;
  int64_t column_int(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;
  int column_count() const;
  std::string column_name(int col) const;
  std::optional<int64_t> column_opt_int(int col) const;
  std::optional<double> column_opt_double(int col) const;

 private:
  friend class Database;
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const noexcept;
  };
  Statement(sqlite3_stmt* stmt, sqlite3* db);
  void check_bind(int rc, int index);
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  sqlite3* db_;
};

// A write transaction: BEGIN IMMEDIATE (waiting for other writers, retried while the database
// is busy), COMMIT on commit(), ROLLBACK if destroyed uncommitted.
class WriteTransaction {
 public:
  explicit WriteTransaction(Database& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit();

 private:
  Database& db_;
  bool open_ = true;
};

}  // namespace kv
