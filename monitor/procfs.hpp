// Access to /proc and /sys through one injectable root (as in oomd), so that the samplers and
// target resolution run in tests against fixture trees. Reads report errno (FileText::err,
// err()): on the sampling path that is the status, as OpStatus is on kvdrive's request path,
// so "permission denied" (stored as NULL) is told apart from a value of zero and a vanished
// process from an unreadable one. Thread-safety: ProcFs and PidDir hold no state beyond their
// root or descriptor, so their const methods may be called from any thread; OpenFile, OpenDir
// and ChildrenWatch keep buffers and are used by one thread at a time.
#pragma once

#include <dirent.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kv::mon {

// The text of a file, or the errno that stopped reading it.
struct FileText {
  int err = 0;  // 0 on success
  std::string text;
  bool ok() const { return err == 0; }
};

// A file kept open and re-read from offset 0 (pread) each time: a sampler reading the same
// /proc files every tick saves their open and close, and reuses one buffer instead of
// allocating. /proc files regenerate their text on a read at offset 0. A file of a process
// (/proc/PID/stat) refers to that process only: once it has exited, reads fail with ESRCH even
// if the pid is reused. Move-only.
class OpenFile {
 public:
  OpenFile() = default;
  // Opens `name` relative to directory `dirfd` (AT_FDCWD: a path). A failure is kept in err().
  OpenFile(int dirfd, const char* name);
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&& other) noexcept;
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile();

  bool is_open() const { return fd_ >= 0; }
  // Reads the whole file again; true on success. On failure err() is the errno (also when the
  // file could not be opened) and text() is empty. A read that returns less than the buffer
  // holds is taken as the end of the file (procfs generates a file whole; one pread per read).
  bool read();
  // Like read(), but one pread of at most `max_bytes`, and text() ends after the last whole
  // line. For files generated line by line as they are read (seq_file: /proc/vmstat), whose
  // wanted lines come first, this saves generating the rest.
  bool read_prefix(size_t max_bytes);
  int err() const { return err_; }
  // False once the file has been deleted (its link count is 0). Meaningful outside procfs only.
  bool exists() const;
  // The text of the last successful read; valid until the next read().
  std::string_view text() const { return text_; }

 private:
  int fd_ = -1;
  int err_ = 0;
  std::string buf_;
  std::string_view text_;
};

// A directory kept open and listed again each time (rewinddir), e.g. /proc/PID/fd. Move-only.
class OpenDir {
 public:
  OpenDir() = default;
  // Opens `name` relative to directory `dirfd`. A failure is kept in err().
  OpenDir(int dirfd, const char* name);
  OpenDir(OpenDir&& other) noexcept;
  OpenDir& operator=(OpenDir&& other) noexcept;
  OpenDir(const OpenDir&) = delete;
  OpenDir& operator=(const OpenDir&) = delete;
  ~OpenDir();

  bool is_open() const { return dir_ != nullptr; }
  int err() const { return err_; }
  // Entries other than . and ..; nullopt (err() set) when it cannot be listed.
  std::optional<int64_t> count();
  // The size fstat reports: for /proc/PID/fd on Linux >= 6.2 the number of open fds, found
  // without listing them (see ProcFs::fd_dir_size_is_count); nullopt (err() set) on failure.
  std::optional<int64_t> stat_size();
  // The entries that are numbers (a task/ directory's thread ids), in `out` (cleared first,
  // its capacity kept), ascending; false (err() set) when it cannot be listed.
  bool numbers(std::vector<int64_t>& out);
  int fd() const { return dir_ != nullptr ? ::dirfd(dir_) : -1; }

 private:
  DIR* dir_ = nullptr;
  int err_ = 0;
};

// An open /proc/PID directory. Reads through it refer to that process only: if the pid dies
// and is reused, they fail (ESRCH) instead of reading the new process. Move-only.
class PidDir {
 public:
  PidDir() = default;
  PidDir(PidDir&& other) noexcept;
  PidDir& operator=(PidDir&& other) noexcept;
  PidDir(const PidDir&) = delete;
  PidDir& operator=(const PidDir&) = delete;
  ~PidDir();

  bool is_open() const { return fd_ >= 0; }
  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }
  // Opens the file `name` in this directory for repeated reads.
  OpenFile open(const char* name) const { return OpenFile(fd_, name); }
  // Opens the directory `name` (e.g. "fd") in this directory for repeated listing.
  OpenDir open_dir(const char* name) const { return OpenDir(fd_, name); }
  // Reads the file `name` (e.g. "stat", "status", "io") in this directory.
  FileText read(const char* name) const;
  // The targets of the fd/ symlinks ("socket:[1234]", "/var/log/x"); empty when unreadable.
  std::vector<std::string> fd_links() const;
  // Target of the "exe" symlink; empty when unreadable.
  std::string exe() const;

 private:
  friend class ProcFs;
  PidDir(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  int fd_ = -1;
  pid_t pid_ = 0;
};

// The fork children of one process, from task/*/children (a child is listed under the thread
// that forked it), with the directory and those files kept open. task/ is listed again at each
// read, a rewind and one getdents: a thread that exits and another that takes its place leave
// the count the same, and the gone thread's open children file reads empty, not an error.
// Files of threads still there are kept. Move-only.
class ChildrenWatch {
 public:
  explicit ChildrenWatch(PidDir dir) : dir_(std::move(dir)) {}
  // The children's pids, ascending (read when a pid was handed out since the last look).
  std::vector<pid_t> read();

 private:
  struct Thread {
    int64_t tid;
    OpenFile children;
  };
  void list_threads();
  PidDir dir_;
  OpenDir task_;
  std::vector<Thread> threads_;  // ascending tid
  std::vector<int64_t> tids_;    // the last listing (kept for its capacity)
};

class ProcFs {
 public:
  // proc_root: where /proc is (default "/proc"); sys_root: where /sys is.
  explicit ProcFs(std::string proc_root = "/proc", std::string sys_root = "/sys");

  // Reads proc_root + "/" + rel.
  FileText read(const std::string& rel) const;
  // Opens proc_root + "/" + rel for repeated reads.
  OpenFile open(const std::string& rel) const;
  // Opens proc_root/PID; errno on failure (ENOENT when the process does not exist).
  std::optional<PidDir> open_pid(pid_t pid, int* err = nullptr) const;
  // The numeric entries of proc_root (processes), ascending.
  std::vector<pid_t> list_pids() const;
  // True if sys_root/block/<device> exists (a whole disk, not a partition).
  bool is_whole_disk(const std::string& device) const;
  // sys_root/block/<device>/stat, opened (a failure is kept in the OpenFile's err()).
  OpenFile open_block_stat(const std::string& device) const;
  const std::string& proc_root() const { return proc_root_; }
  const std::string& sys_root() const { return sys_root_; }
  // Whether proc_root is a procfs mount. On one that is not (a fixture tree in tests) a file
  // kept open still reads after its process's directory is removed: samplers then check that
  // the file was not deleted, where procfs itself fails the read (ESRCH).
  bool is_procfs() const { return is_procfs_; }
  // Whether fstat of a /proc/PID/fd directory gives its number of entries as the size (Linux
  // 6.2 and later): a few hundred ns where listing the fds of a store with thousands of
  // connections takes that many readdir entries. Checked on proc_root/self/fd at construction.
  bool fd_dir_size_is_count() const { return fd_dir_size_is_count_; }

 private:
  std::string proc_root_;
  std::string sys_root_;
  bool is_procfs_ = false;
  bool fd_dir_size_is_count_ = false;
};

// Reads a whole file by path (for pidfiles). errno on failure.
FileText read_file(const std::string& path);

}  // namespace kv::mon
