// The checks of an existing results file made before anything is written or sent: its header
// against its size (truncation), its -wal (one that does not belong to it), its schema
// against a freshly migrated database, and opening it read-only on a read-only filesystem.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/usage_error.hpp"

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
// cumulative checksums hold, up to the last commit frame (the WAL format of
// sqlite.org/fileformat2). A complete, consistent -wal of another file passes all of that and is
// replayed, which is what destroys a file; what can tell it apart is page 1's change counter
// (below).
struct WalFrame {
  uint32_t page;
  size_t hash;                             // of the page image
  uint32_t change_counter, schema_cookie;  // page 1 only: offsets 24 and 40
};
struct WalInfo {
  bool has_frames = false;  // at least one committed frame
  uint32_t page_size = 0;
  std::vector<WalFrame> frames;  // the committed ones, in order
};

size_t page_hash(const unsigned char* page, size_t size) {
  return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(page), size));
}

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
      uint32_t a = big_endian ? be32(p + i)
                              : (uint32_t{p[i + 3]} << 24 | uint32_t{p[i + 2]} << 16 |
                                 uint32_t{p[i + 1]} << 8 | p[i]);
      uint32_t b = big_endian ? be32(p + i + 4)
                              : (uint32_t{p[i + 7]} << 24 | uint32_t{p[i + 6]} << 16 |
                                 uint32_t{p[i + 5]} << 8 | p[i + 4]);
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
  std::vector<WalFrame> pending;  // frames of a transaction not yet committed
  for (off_t at = 32;; at += static_cast<off_t>(frame.size())) {
    if (::pread(fd, frame.data(), frame.size(), at) != static_cast<ssize_t>(frame.size())) break;
    if (be32(frame.data() + 8) != be32(h + 16) || be32(frame.data() + 12) != be32(h + 20)) break;
    sum(frame.data(), 8);
    sum(frame.data() + 24, page_size);
    if (s0 != be32(frame.data() + 16) || s1 != be32(frame.data() + 20)) break;
    const unsigned char* page = frame.data() + 24;
    const uint32_t pgno = be32(frame.data());
    pending.push_back({pgno, page_hash(page, page_size), pgno == 1 ? be32(page + 24) : 0,
                       pgno == 1 ? be32(page + 40) : 0});
    if (be32(frame.data() + 4) != 0) {  // a commit frame: what came before it counts
      w.has_frames = true;
      w.frames.insert(w.frames.end(), pending.begin(), pending.end());
      pending.clear();
    }
  }
  return w;
}

// Whether the file was checkpointed from this -wal up to frame `k` (an image of page 1 equal
// to the file's): then every page with a frame at or before `k` holds, in the file, one of its
// images from its last frame at or before `k` up to the next image of page 1 (where the
// checkpoint must have stopped). Two kvbench files made by the same migrations share their
// page 1 byte for byte; their other pages tell them apart.
bool checkpointed_from(const WalInfo& wal, size_t k, int fd) {
  size_t next1 = wal.frames.size();
  for (size_t i = k + 1; i < wal.frames.size(); ++i)
    if (wal.frames[i].page == 1) {
      next1 = i;
      break;
    }
  std::map<uint32_t, size_t> last;  // page -> its last frame at or before k
  for (size_t i = 0; i <= k; ++i) last[wal.frames[i].page] = i;
  std::vector<unsigned char> page(wal.page_size);
  for (const auto& [pgno, from] : last) {
    const off_t at = static_cast<off_t>(pgno - 1) * wal.page_size;
    if (::pread(fd, page.data(), page.size(), at) != static_cast<ssize_t>(page.size()))
      return false;
    const size_t hash = page_hash(page.data(), page.size());
    bool found = false;
    for (size_t i = from; i < next1 && !found; ++i)
      found = wal.frames[i].page == pgno && wal.frames[i].hash == hash;
    if (!found) return false;
  }
  return true;
}

// Whether a -wal fits the file whose page 1 is `page1`, as far as it can be told:
//  - checkpointed from this -wal: see checkpointed_from;
//  - otherwise the -wal continues the file: a connection writing page 1 stores in it the change
//    counter of the page 1 it last read plus one (SQLite's pager_write_changecounter), and keeps
//    that number while page 1 stays cached, so the first image holds the file's counter + 1 or
//    the file's counter; and the schema cookie (offset 40) only grows, so no image holds less
//    than the file's (a -wal from another file's creation does).
// A -wal that never wrote page 1 cannot be told apart; one that passes is still read through
// (quick_check) before anything replays it.
bool wal_fits(const WalInfo& wal, const std::vector<unsigned char>& page1,
              const std::string& path) {
  std::vector<size_t> images;  // indexes of the frames of page 1
  for (size_t i = 0; i < wal.frames.size(); ++i)
    if (wal.frames[i].page == 1) images.push_back(i);
  if (images.empty()) return true;
  const size_t hash = page_hash(page1.data(), page1.size());
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    bool checkpointed = false;
    for (size_t k : images)
      if (!checkpointed && wal.frames[k].hash == hash) checkpointed = checkpointed_from(wal, k, fd);
    ::close(fd);
    if (checkpointed) return true;
  }
  const uint32_t counter = be32(page1.data() + 24), cookie = be32(page1.data() + 40);
  const uint32_t first = wal.frames[images.front()].change_counter;
  if (first != counter && first != counter + 1) return false;
  for (size_t k : images)
    if (wal.frames[k].schema_cookie < cookie) return false;
  return true;
}

// The first image of page 1 in the -wal, for messages.
const WalFrame* first_page1(const WalInfo& wal) {
  for (const auto& f : wal.frames)
    if (f.page == 1) return &f;
  return nullptr;
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
      throw UsageError(obj.type + " '" + name + "' does not work: " + why);
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
    // Neither existed: the file was read immutable, which creates neither, so any -wal or -shm
    // there now is another process's (one that opened the file meanwhile: removing them would
    // cut its connection off its own -wal: "disk I/O error", its changes lost).
    if (none_existed() || (existed_[0] && existed_[1])) return;
    if (open_elsewhere(path_)) return;
    for (int i = 0; i < 2; ++i)
      if (!existed_[i]) ::unlink((path_ + kSuffix[i]).c_str());
  }

 private:
  static constexpr const char* kSuffix[2] = {"-wal", "-shm"};
  std::string path_;
  bool existed_[2];
};

std::string column_name(const std::string& described) {
  return described.substr(0, described.find(' '));
}

}  // namespace

void check_results_schema(Database& db, int version) {
  Database expected_db = Database::open(":memory:");
  if (version == schema::latest_version())
    expected_db.exec(schema::latest_schema_sql());  // the migrations' result, made at build time
  else
    schema::migrate(expected_db, version);
  const std::string where = " (schema version " + std::to_string(version) + ")";
  const Schema expected = schema_objects(expected_db, true);
  // Kept for the loop: find() points into it (into a temporary it dangled: ASan/TSan
  // heap-use-after-free at every start of kvmon and kvdrive).
  const Schema actual_names = schema_objects(db, false);
  for (const auto& [name, want] : expected) {  // first what is missing, by name alone
    const SchemaObject* got = find(actual_names, name);
    if (got == nullptr) throw UsageError(want.type + " '" + name + "' is missing" + where);
    if (got->type != want.type)
      throw UsageError("'" + name + "' is a " + got->type + ", not a " + want.type + where);
  }
  const Schema actual = schema_objects(db, true);
  for (const auto& [name, want] : expected) {
    const SchemaObject& got = *find(actual, name);
    for (size_t i = 0; i < want.columns.size(); ++i) {
      if (i >= got.columns.size())
        throw UsageError(want.type + " '" + name + "' lacks column '" +
                         column_name(want.columns[i]) + "'" + where);
      if (got.columns[i] != want.columns[i])
        throw UsageError(want.type + " '" + name + "': column " + std::to_string(i + 1) + " is '" +
                         got.columns[i] + "', expected '" + want.columns[i] + "'" + where);
    }
    if (got.columns.size() > want.columns.size())
      throw UsageError(want.type + " '" + name +
                       "' has a column this version does not "
                       "make: '" +
                       column_name(got.columns[want.columns.size()]) + "'" + where);
  }
}

bool results_file_writable(const std::string& path) {
  // One construction, no assignment of "." afterwards: GCC 12 at -O3 warned (-Wrestrict, a
  // false positive) on that assignment.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : path.substr(0, slash + 1);
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

Database open_results_for_reading(const std::string& path) {
  Database db = open_results_read_only(path);
  if (db.user_version() >= schema::latest_version()) return db;
  Database copy = db.copy_in_memory(path + " (a copy in memory)");
  schema::migrate(copy);
  return copy;
}

void check_no_orphan_wal(std::string_view option, const std::string& path) {
  if (wal_info(path + "-wal").has_frames && !open_elsewhere(path))
    throw UsageError(std::string(option) + " '" + path + "': a -wal '" + path +
                     "-wal' lies beside an empty or missing file: SQLite would replay "
                     "it into the new file; move it away");
}

void check_results_file(std::string_view option, const std::string& path, bool must_exist) {
  auto bad = [&](const std::string& why) {
    throw UsageError(std::string(option) + " '" + path + "': " + why);
  };
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) return;  // checked by the caller
  const std::string wal_path = path + "-wal";
  const WalInfo wal = wal_info(wal_path);
  const bool live = open_elsewhere(path);
  unsigned char h[100];
  if (!read_exactly(path, h, sizeof h))
    bad("is truncated (" + std::to_string(st.st_size) + " bytes, less than a SQLite header)");
  const uint32_t page_size =
      (uint32_t{h[16]} << 8 | h[17]) == 1 ? 65536 : (uint32_t{h[16]} << 8 | h[17]);
  const uint32_t pages = be32(h + 28);
  // The header's page count is valid when its change counter equals version-valid-for. The
  // file may be shorter only while a -wal still holds the pages (a checkpoint cut short).
  if (!wal.has_frames && page_size >= 512 && pages > 0 && be32(h + 24) == be32(h + 92)) {
    const auto want = static_cast<int64_t>(pages) * page_size;
    if (st.st_size < want || st.st_size % page_size != 0)
      bad("is truncated or damaged: " + std::to_string(st.st_size) +
          " bytes where its header says " + std::to_string(pages) + " pages of " +
          std::to_string(page_size) + " (" + std::to_string(want) + " bytes)");
  }
  std::vector<unsigned char> page1(page_size >= 512 ? page_size : 512);
  const bool page1_read = read_exactly(path, page1.data(), page1.size());
  if (wal.has_frames && !live &&
      (wal.page_size != page_size || (page1_read && !wal_fits(wal, page1, path))))
    bad("its -wal '" + wal_path + "' belongs to another file (" +
        (wal.page_size != page_size
             ? "pages of " + std::to_string(wal.page_size) + " bytes, the file's " +
                   std::to_string(page_size)
             : "its page 1 does not follow the file's: change counter " +
                   std::to_string(first_page1(wal)->change_counter) + " after " +
                   std::to_string(be32(h + 24)) + ", schema cookie " +
                   std::to_string(first_page1(wal)->schema_cookie) + " after " +
                   std::to_string(be32(h + 40))) +
        "); SQLite would replay it into this one: move it away to use the file as last "
        "checkpointed");
  CompanionCleanup cleanup(path);  // declared before the connection: runs after it closed
  try {
    // With neither -wal nor -shm nobody has the file open and there is nothing to replay: read
    // it as immutable, which creates neither. Otherwise read-only, through the -wal.
    Database db =
        cleanup.none_existed() ? Database::open_immutable(path) : open_results_read_only(path);
    // One read transaction: the version and the tables from one snapshot. (Read apart, another
    // process's migration committing between them showed version 4 with 005's columns.)
    db.exec("BEGIN");
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
        bad("damaged when read with its -wal '" + wal_path + "' (" + verdict +
            "): the -wal may "
            "belong to another file; move it away to use the file as last checkpointed");
    }
    check_results_schema(db, version);
  } catch (const SqliteError& e) {
    bad("damaged or not a results file (" + std::string(e.what()) + ")");
  } catch (const UsageError& e) {
    const std::string what = e.what();
    if (what.rfind(std::string(option) + " '", 0) == 0) throw;
    bad("not a complete kvbench results file: " + what);
  }
}

}  // namespace kv
