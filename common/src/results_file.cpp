// The checks of an existing results file made before anything is written or sent: its header
// against its size (truncation), its -wal (one that does not belong to it), its schema
// against a freshly migrated database, and opening it read-only on a read-only filesystem.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"

namespace kv {
namespace {

uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

bool read_exactly(const std::string& path, unsigned char* buf, size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t got = ::pread(fd, buf, n, 0);
  ::close(fd);
  return got == static_cast<ssize_t>(n);
}

// What SQLite would replay from a -wal: the frames whose salts match the header and whose
// cumulative checksums hold, up to the last commit frame (the WAL format of sqlite.org/fileformat2).
// A complete, consistent -wal of another file passes all of that and is replayed, which is
// what destroys a file; what can tell it apart is page 1's change counter (below).
struct WalInfo {
  bool has_frames = false;                // at least one committed frame
  uint32_t page_size = 0;
  std::vector<uint32_t> page1_counters;  // offset 24 of each committed image of page 1
};

WalInfo wal_info(const std::string& wal_path) {
  WalInfo w;
  int fd = ::open(wal_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return w;
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  unsigned char h[32];
  if (::pread(fd, h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) return w;
  const uint32_t magic = be32(h);
  if ((magic != 0x377f0682 && magic != 0x377f0683) || be32(h + 4) != 3007000) return w;
  const bool big_endian = magic & 1;
  uint32_t s0 = 0, s1 = 0;
  auto sum = [&](const unsigned char* p, size_t n) {
    for (size_t i = 0; i + 8 <= n; i += 8) {
      uint32_t a = big_endian ? be32(p + i) : (uint32_t{p[i + 3]} << 24 | uint32_t{p[i + 2]} << 16 | uint32_t{p[i + 1]} << 8 | p[i]);
      uint32_t b = big_endian ? be32(p + i + 4) : (uint32_t{p[i + 7]} << 24 | uint32_t{p[i + 6]} << 16 | uint32_t{p[i + 5]} << 8 | p[i + 4]);
      s0 += a + s1;
      s1 += b + s0;
    }
  };
  sum(h, 24);
  if (s0 != be32(h + 24) || s1 != be32(h + 28)) return w;
  const uint32_t page_size = be32(h + 8);
  if (page_size < 512 || page_size > 65536 || (page_size & (page_size - 1)) != 0) return w;
  w.page_size = page_size;
  std::vector<unsigned char> frame(24 + page_size);
  std::vector<uint32_t> counters;  // of frames not yet committed
  for (off_t at = 32;; at += static_cast<off_t>(frame.size())) {
    if (::pread(fd, frame.data(), frame.size(), at) != static_cast<ssize_t>(frame.size())) break;
    if (be32(frame.data() + 8) != be32(h + 16) || be32(frame.data() + 12) != be32(h + 20)) break;
    sum(frame.data(), 8);
    sum(frame.data() + 24, page_size);
    if (s0 != be32(frame.data() + 16) || s1 != be32(frame.data() + 20)) break;
    if (be32(frame.data()) == 1) counters.push_back(be32(frame.data() + 24 + 24));
    if (be32(frame.data() + 4) != 0) {  // a commit frame: what came before it counts
      w.has_frames = true;
      w.page1_counters.insert(w.page1_counters.end(), counters.begin(), counters.end());
      counters.clear();
    }
  }
  return w;
}

// Whether a -wal fits the file's page 1. A connection writing page 1 to a -wal stores in it the
// change counter of the page 1 it last read, plus one (SQLite's pager_write_changecounter), and
// keeps that number while it keeps page 1 cached. So the first image of page 1 in this file's
// -wal holds the file's counter + 1, or the file's counter (its writer's earlier page 1 was
// checkpointed before the -wal restarted), or the file's counter appears among them (page 1
// checkpointed from this -wal). A -wal of another file with a different history fails this; one
// that passes is still read through (quick_check) before anything replays it.
bool wal_fits(const WalInfo& wal, uint32_t file_counter) {
  if (wal.page1_counters.empty()) return true;
  const uint32_t first = wal.page1_counters.front();
  if (first == file_counter || first == file_counter + 1) return true;
  for (uint32_t c : wal.page1_counters)
    if (c == file_counter) return true;
  return false;
}

// True if another process has the file open through SQLite: each connection of a WAL-mode file
// holds a read lock on the dead-man-switch byte of the -shm (byte 128, SQLite's unix VFS).
// Such a -wal is being written by its owner, so it belongs to the file.
bool open_elsewhere(const std::string& path) {
  int fd = ::open((path + "-shm").c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lk {};
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  lk.l_start = 128;
  lk.l_len = 1;
  const bool locked = ::fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
  ::close(fd);
  return locked;
}

// Tables and views with their columns ("name type notnull pk"), indexes and triggers by name.
struct SchemaObject {
  std::string type;
  std::vector<std::string> columns;
};

// In the order they are compared: tables, then views, then indexes and triggers, so what is
// missing is named before a view that fails because of it.
using Schema = std::vector<std::pair<std::string, SchemaObject>>;

Schema schema_objects(Database& db, bool columns) {
  Schema out;
  auto s = db.prepare(
      "SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' "
      "ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 ELSE 2 END, name");
  while (s.step()) out.push_back({s.column_text(1), {s.column_text(0), {}}});
  if (!columns) return out;
  auto cols = db.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)");
  for (auto& [name, obj] : out) {
    if (obj.type != "table" && obj.type != "view") continue;
    cols.bind(1, name);
    try {
      while (cols.step())
        obj.columns.push_back(cols.column_text(0) + " " + cols.column_text(1) + " " +
                              cols.column_text(2) + " " + cols.column_text(3));
    } catch (const SqliteError& e) {
      // A view over a dropped table or column does not compile: SQLite's reason, without the
      // statement that asked.
      std::string why = e.what();
      auto at = why.rfind("': ");
      if (at != std::string::npos) why = why.substr(at + 3);
      throw std::invalid_argument(obj.type + " '" + name + "' does not work: " + why);
    }
    cols.reset();
  }
  return out;
}

const SchemaObject* find(const Schema& schema, const std::string& name) {
  for (const auto& [n, obj] : schema)
    if (n == name) return &obj;
  return nullptr;
}

// Removes the -wal and -shm that SQLite created beside a file only read (a read-only
// connection cannot remove them when it closes), unless another process opened it meanwhile.
class CompanionCleanup {
 public:
  explicit CompanionCleanup(std::string path) : path_(std::move(path)) {
    for (int i = 0; i < 2; ++i) existed_[i] = ::access((path_ + kSuffix[i]).c_str(), F_OK) == 0;
  }
  bool none_existed() const { return !existed_[0] && !existed_[1]; }
  ~CompanionCleanup() {
    if (existed_[0] && existed_[1]) return;
    if (open_elsewhere(path_)) return;
    for (int i = 0; i < 2; ++i)
      if (!existed_[i]) ::unlink((path_ + kSuffix[i]).c_str());
  }

 private:
  static constexpr const char* kSuffix[2] = {"-wal", "-shm"};
  std::string path_;
  bool existed_[2];
};

std::string column_name(const std::string& described) { return described.substr(0, described.find(' ')); }

}  // namespace

void check_results_schema(Database& db, int version) {
  Database expected_db = Database::open(":memory:");
  schema::migrate(expected_db, version);
  const std::string where = " (schema version " + std::to_string(version) + ")";
  const Schema expected = schema_objects(expected_db, true);
  // Kept for the loop: find() points into it (into a temporary it dangled: ASan/TSan
  // heap-use-after-free at every start of kvmon and kvdrive).
  const Schema actual_names = schema_objects(db, false);
  for (const auto& [name, want] : expected) {  // first what is missing, by name alone
    const SchemaObject* got = find(actual_names, name);
    if (got == nullptr) throw std::invalid_argument(want.type + " '" + name + "' is missing" + where);
    if (got->type != want.type)
      throw std::invalid_argument("'" + name + "' is a " + got->type + ", not a " + want.type + where);
  }
  const Schema actual = schema_objects(db, true);
  for (const auto& [name, want] : expected) {
    const SchemaObject& got = *find(actual, name);
    for (size_t i = 0; i < want.columns.size(); ++i) {
      if (i >= got.columns.size())
        throw std::invalid_argument(want.type + " '" + name + "' lacks column '" +
                                    column_name(want.columns[i]) + "'" + where);
      if (got.columns[i] != want.columns[i])
        throw std::invalid_argument(want.type + " '" + name + "': column " + std::to_string(i + 1) +
                                    " is '" + got.columns[i] + "', expected '" + want.columns[i] +
                                    "'" + where);
    }
    if (got.columns.size() > want.columns.size())
      throw std::invalid_argument(want.type + " '" + name + "' has a column this version does not "
                                  "make: '" + column_name(got.columns[want.columns.size()]) + "'" + where);
  }
}

bool results_file_writable(const std::string& path) {
  std::string dir = path.substr(0, path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (dir.empty()) dir = ".";
  return ::access(path.c_str(), W_OK) == 0 && ::access(dir.c_str(), W_OK) == 0;
}

Database open_results_read_only(const std::string& path) {
  try {
    Database db = Database::open_read_only(path);
    db.user_version();  // reads the schema: fails here if SQLite cannot read the file this way
    return db;
  } catch (const SqliteError& e) {
    // A WAL-mode file whose directory cannot be written: SQLite cannot create the -shm, so a
    // read-only connection cannot open it. Immutable works, but does not see a -wal's frames.
    if ((e.code() & 0xff) != SQLITE_CANTOPEN && (e.code() & 0xff) != SQLITE_READONLY) throw;
    if (wal_info(path + "-wal").has_frames)
      log_warn() << path << ": read-only, without the changes in " << path
                 << "-wal that were never checkpointed into it";
    Database db = Database::open_immutable(path);
    db.user_version();
    return db;
  }
}

void check_results_file(std::string_view option, const std::string& path, bool must_exist) {
  auto bad = [&](const std::string& why) {
    throw std::invalid_argument(std::string(option) + " '" + path + "': " + why);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) return;  // checked by the caller
  const std::string wal_path = path + "-wal";
  const WalInfo wal = wal_info(wal_path);
  const bool live = open_elsewhere(path);
  unsigned char h[100];
  if (!read_exactly(path, h, sizeof h)) bad("is truncated (" + std::to_string(st.st_size) + " bytes, less than a SQLite header)");
  const uint32_t page_size = (uint32_t{h[16]} << 8 | h[17]) == 1 ? 65536 : (uint32_t{h[16]} << 8 | h[17]);
  const uint32_t pages = be32(h + 28);
  // The header's page count is valid when its change counter equals version-valid-for. The
  // file may be shorter only while a -wal still holds the pages (a checkpoint cut short).
  if (!wal.has_frames && page_size >= 512 && pages > 0 && be32(h + 24) == be32(h + 92)) {
    const auto want = static_cast<int64_t>(pages) * page_size;
    if (st.st_size < want || st.st_size % page_size != 0)
      bad("is truncated or damaged: " + std::to_string(st.st_size) + " bytes where its header says " +
          std::to_string(pages) + " pages of " + std::to_string(page_size) + " (" +
          std::to_string(want) + " bytes)");
  }
  if (wal.has_frames && !live && (wal.page_size != page_size || !wal_fits(wal, be32(h + 24))))
    bad("its -wal '" + wal_path + "' belongs to another file (" +
        (wal.page_size != page_size
             ? "pages of " + std::to_string(wal.page_size) + " bytes, the file's " + std::to_string(page_size)
             : "its page 1 has change counter " + std::to_string(wal.page1_counters.front()) +
                   ", the file's is " + std::to_string(be32(h + 24))) +
        "); SQLite would replay it into this one: move it away to use the file as last checkpointed");
  CompanionCleanup cleanup(path);  // declared before the connection: runs after it closed
  try {
    // With neither -wal nor -shm nobody has the file open and there is nothing to replay: read
    // it as immutable, which creates neither. Otherwise read-only, through the -wal.
    Database db = cleanup.none_existed() ? Database::open_immutable(path) : open_results_read_only(path);
    const int version = db.user_version();
    if (version < 1) {
      auto any = db.prepare("SELECT count(*) FROM sqlite_schema");
      any.step();
      if (must_exist || any.column_int(0) > 0) bad("not a kvbench results file");
      return;
    }
    if (version > schema::latest_version())
      bad("schema version " + std::to_string(version) + ", newer than this kvbench understands (" +
          std::to_string(schema::latest_version()) + "): upgrade kvbench to use it");
    // A -wal left by a writer that died, or copied here: SQLite replays it when the file is
    // opened, a -wal of another file included, and the result is a damaged file. Nobody
    // writes it now, so reading the file through it shows whether it fits.
    if (wal.has_frames && !live) {
      auto check = db.prepare("PRAGMA quick_check(1)");
      std::string verdict = check.step() ? check.column_text(0) : "no answer";
      if (verdict != "ok")
        bad("damaged when read with its -wal '" + wal_path + "' (" + verdict + "): the -wal may "
            "belong to another file; move it away to use the file as last checkpointed");
    }
    check_results_schema(db, version);
  } catch (const SqliteError& e) {
    bad("damaged or not a results file (" + std::string(e.what()) + ")");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    if (what.rfind(std::string(option) + " '", 0) == 0) throw;
    bad("not a complete kvbench results file: " + what);
  }
}

}  // namespace kv
