#include "kvbench/sqlite.hpp"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "kvbench/log.hpp"

namespace kv {
namespace {

[[noreturn]] void raise(sqlite3* db, int rc, std::string_view doing) {
  std::string msg = std::string(doing) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  if (file && *file && doing.find(file) == std::string_view::npos)
    msg = std::string(file) + ": " + msg;
  throw SqliteError(msg, db ? sqlite3_extended_errcode(db) : rc);
}

bool is_busy(int rc) { return (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED; }

// Runs `sql`, retrying while another process holds the lock beyond the busy timeout: a writer
// must wait for its turn, never lose rows. Gives up after `max_wait` with the SQLite error.
void exec_retrying(sqlite3* db, const char* sql, std::chrono::seconds max_wait) {
  auto deadline = std::chrono::steady_clock::now() + max_wait;
  bool warned = false;
  for (;;) {
    int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    if (!is_busy(rc) || std::chrono::steady_clock::now() > deadline) raise(db, rc, sql);
    if (!warned) {
      log_warn() << "database is locked by another process; waiting (" << sql << ")";
      warned = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

void Database::Closer::operator()(sqlite3* db) const noexcept { sqlite3_close_v2(db); }
void Statement::Finalizer::operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }

Database::Database(std::unique_ptr<sqlite3, Closer> db, std::string path)
    : db_(std::move(db)), path_(std::move(path)) {}
Database::~Database() = default;

Database Database::open(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) raise(raw, rc, "cannot open database '" + path + "'");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  Database d(std::move(db), path);
  // Switching to WAL needs a moment of exclusive access: retry while another process has it.
  exec_retrying(raw, "PRAGMA journal_mode=WAL", std::chrono::seconds(60));
  d.exec("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON");
  return d;
}

Database Database::open_read_only(const std::string& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) raise(raw, rc, "cannot open database '" + path + "'");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return Database(std::move(db), path);
}

Database Database::open_immutable(const std::string& path) {
  std::string uri = "file:";
  for (char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      uri += buf;
    } else {
      uri += c;
    }
  }
  uri += "?immutable=1";
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(uri.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) raise(raw, rc, "cannot open database '" + path + "'");
  sqlite3_extended_result_codes(raw, 1);
  return Database(std::move(db), path);
}

Database Database::copy_in_memory(const std::string& label) const {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  std::unique_ptr<sqlite3, Closer> db(raw);
  if (rc != SQLITE_OK) raise(raw, rc, "cannot open a database in memory for '" + label + "'");
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_backup* backup = sqlite3_backup_init(raw, "main", db_.get(), "main");
  if (backup == nullptr) raise(raw, sqlite3_errcode(raw), "cannot copy '" + path_ + "'");
  rc = sqlite3_backup_step(backup, -1);
  sqlite3_backup_finish(backup);
  if (rc != SQLITE_DONE) raise(db_.get(), rc, "cannot copy '" + path_ + "' into memory");
  Database d(std::move(db), label);
  d.exec("PRAGMA foreign_keys=ON");
  return d;
}

void Database::exec(std::string_view sql) {
  std::string s(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_.get(), s.c_str(), nullptr, nullptr, &err);
  if (rc != SQLITE_OK) {
    std::string msg = err ? err : sqlite3_errstr(rc);
    sqlite3_free(err);
    throw SqliteError(path_ + ": " + msg, sqlite3_extended_errcode(db_.get()));
  }
}

Statement Database::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) raise(db_.get(), rc, "cannot prepare '" + std::string(sql) + "'");
  return Statement(stmt, db_.get());
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_.get()); }

int Database::user_version() {
  Statement s = prepare("PRAGMA user_version");
  s.step();
  return static_cast<int>(s.column_int(0));
}

Statement::Statement(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
Statement::~Statement() = default;

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) raise(db_, rc, "cannot bind parameter " + std::to_string(index));
}
Statement& Statement::bind(int index, int64_t v) {
  check_bind(sqlite3_bind_int64(stmt_.get(), index, v), index);
  return *this;
}
Statement& Statement::bind(int index, double v) {
  check_bind(sqlite3_bind_double(stmt_.get(), index, v), index);
  return *this;
}
Statement& Statement::bind(int index, std::string_view v) {
  check_bind(
      sqlite3_bind_text(stmt_.get(), index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT),
      index);
  return *this;
}
Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(stmt_.get(), index), index);
  return *this;
}
Statement& Statement::bind_column(int index, const Statement& from, int col) {
  check_bind(sqlite3_bind_value(stmt_.get(), index, sqlite3_column_value(from.stmt_.get(), col)),
             index);
  return *this;
}

bool Statement::step() {
  int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  std::string sql = sqlite3_sql(stmt_.get());
  sqlite3_reset(stmt_.get());
  raise(db_, rc, "'" + sql + "'");
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

bool Statement::is_null(int col) const {
  return sqlite3_column_type(stmt_.get(), col) == SQLITE_NULL;
}
int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_.get(), col); }
double Statement::column_double(int col) const { return sqlite3_column_double(stmt_.get(), col); }
std::string Statement::column_text(int col) const {
  const unsigned char* t = sqlite3_column_text(stmt_.get(), col);
  return t ? std::string(reinterpret_cast<const char*>(t)) : std::string();
}
int Statement::column_count() const { return sqlite3_column_count(stmt_.get()); }
std::string Statement::column_name(int col) const {
  const char* n = sqlite3_column_name(stmt_.get(), col);
  return n ? n : "";
}
std::optional<int64_t> Statement::column_opt_int(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_int(col);
}
std::optional<double> Statement::column_opt_double(int col) const {
  if (is_null(col)) return std::nullopt;
  return column_double(col);
}

WriteTransaction::WriteTransaction(Database& db) : db_(db) {
  exec_retrying(db.handle(), "BEGIN IMMEDIATE", std::chrono::seconds(300));
}

WriteTransaction::~WriteTransaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void WriteTransaction::commit() {
  exec_retrying(db_.handle(), "COMMIT", std::chrono::seconds(300));
  open_ = false;
}

}  // namespace kv
