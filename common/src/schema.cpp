#include "kvbench/schema.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "kvbench/log.hpp"
#include "kvbench/recovery.hpp"
#include "kvbench/usage_error.hpp"

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
                               ", newer than this kvbench understands (" + std::to_string(target) +
                               "): upgrade kvbench to open it");
    }
    if (current == target) {
      tx.commit();
      return;
    }
    const Migration& m = migrations().at(static_cast<size_t>(current));
    if (initial > 0 && current == initial) {
      log_info() << db.path() << ": upgrading schema from version " << current << " to " << target;
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

void check_output_path(std::string_view option, const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw UsageError(std::string(option) + " '" + path + "': is a directory");
  fs::path dir = fs::path(path).parent_path();
  if (!dir.empty() && !fs::is_directory(dir, ec))
    throw UsageError(std::string(option) + " '" + path + "': no such directory '" + dir.string() +
                     "'");
}

void check_not_results_file(std::string_view option, const std::string& path,
                            const std::string& results_path) {
  namespace fs = std::filesystem;
  auto refuse = [&](const std::string& companion) {
    const bool main_file = companion == results_path;
    throw UsageError(std::string(option) + " '" + path + "': is " +
                     (main_file ? "the results file '" : "the results file's '") + companion +
                     "' (writing it would destroy results)");
  };
  struct stat out {};
  const bool out_exists = ::stat(path.c_str(), &out) == 0;
  std::error_code ec;
  const fs::path out_name = fs::weakly_canonical(path, ec);
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    const std::string companion = results_path + suffix;
    struct stat st {};
    if (out_exists && ::stat(companion.c_str(), &st) == 0 && st.st_dev == out.st_dev &&
        st.st_ino == out.st_ino)
      refuse(companion);
    // Not there yet, but SQLite may create it while the report is written: beside the name as
    // given and beside the file a symlink points to.
    std::error_code ec2;
    const fs::path beside_link = fs::weakly_canonical(companion, ec2);
    const fs::path beside_file =
        fs::weakly_canonical(fs::weakly_canonical(results_path, ec2).string() + suffix, ec2);
    if (!ec && !ec2 && (beside_link == out_name || beside_file == out_name)) refuse(companion);
  }
}

namespace {

// A results file is written with its -wal and -shm beside it: the file, if it exists, and its
// directory must be writable. Says which is not, and what to do, in a user's words (SQLite
// said "unable to open database file" or "attempt to write a readonly database", after the
// stores had been connected to).
void check_writable(std::string_view option, const std::string& path, bool exists) {
  namespace fs = std::filesystem;
  auto bad = [&](const std::string& why) {
    throw UsageError(std::string(option) + " '" + path + "': " + why);
  };
  const fs::path parent = fs::path(path).parent_path();
  const std::string dir = parent.empty() ? std::string(".") : parent.string();
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    const bool rofs = errno == EROFS;
    // Appended piece by piece: GCC 12 at -O3 warns -Wrestrict (a false positive) on a chain.
    std::string why = exists ? "its directory '" : "cannot create it: the directory '";
    why += dir;
    why += rofs ? "' is on a read-only filesystem" : "' is not writable by this user";
    if (exists) why += " (SQLite keeps the file's -wal and -shm beside it)";
    why += ": give a file in a directory you can write";
    if (exists) why += ", or read it with kvdrive report";
    bad(why);
  }
  if (exists && ::access(path.c_str(), W_OK) != 0)
    bad(errno == EROFS ? std::string("is on a read-only filesystem: give another file, or read "
                                     "it with kvdrive report")
                       : std::string("is read-only for this user: make it writable (chmod u+w), "
                                     "give another file, or read it with kvdrive report"));
}

}  // namespace

void check_results_path(std::string_view option, const std::string& path, bool must_exist) {
  namespace fs = std::filesystem;
  auto bad = [&](const std::string& why) {
    throw UsageError(std::string(option) + " '" + path + "': " + why);
  };
  if (path.empty()) throw UsageError(std::string(option) + ": empty file name");
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (fs::is_directory(st)) bad("is a directory");
  if (!fs::exists(st)) {
    if (must_exist) bad("no such file");
    check_output_path(option, path);
    check_writable(option, path, false);
    check_no_orphan_wal(option, path);
    return;
  }
  if (!fs::is_regular_file(st)) bad("not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) bad("cannot read it");
  char magic[16] = {};
  in.read(magic, sizeof magic);
  if (in.gcount() == 0) {
    if (must_exist) bad("is empty, not a results file");
    check_writable(option, path, true);
    check_no_orphan_wal(option, path);
    return;  // an empty file is an empty SQLite database
  }
  if (in.gcount() != sizeof magic || std::memcmp(magic, "SQLite format 3", sizeof magic) != 0)
    bad("not a SQLite file");
  check_results_file(option, path, must_exist);
  if (!must_exist) check_writable(option, path, true);  // it will be written (run, merge, kvmon)
}
}  // namespace kv
