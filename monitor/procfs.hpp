// Access to /proc and /sys through one injectable root (as in oomd), so that the samplers and
// target resolution run in tests against fixture trees. Reads report errno, so "permission
// denied" (stored as NULL) is told apart from a value of zero. Not thread-safe per object only
// in the sense that it holds no state beyond the roots: const methods may be called from any thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kv::mon {

// The text of a file, or the errno that stopped reading it.
struct FileText {
  int err = 0;  // 0 on success
  std::string text;
  bool ok() const { return err == 0; }
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
  // Reads the file `name` (e.g. "stat", "status", "io") in this directory.
  FileText read(const char* name) const;
  // Number of entries in fd/; nullopt (with *err set) when it cannot be listed.
  std::optional<int64_t> count_fds(int* err) const;
  // The targets of the fd/ symlinks ("socket:[1234]", "/var/log/x"); empty when unreadable.
  std::vector<std::string> fd_links() const;
  // The pids of this process's children (from task/*/children: a child is listed under the
  // thread that forked it); empty when unreadable.
  std::vector<pid_t> children() const;
  // Target of the "exe" symlink; empty when unreadable.
  std::string exe() const;

 private:
  friend class ProcFs;
  PidDir(int fd, pid_t pid) : fd_(fd), pid_(pid) {}
  int fd_ = -1;
  pid_t pid_ = 0;
};

class ProcFs {
 public:
  // proc_root: where /proc is (default "/proc"); sys_root: where /sys is.
  explicit ProcFs(std::string proc_root = "/proc", std::string sys_root = "/sys");

  // Reads proc_root + "/" + rel.
  FileText read(const std::string& rel) const;
  // Opens proc_root/PID; errno on failure (ENOENT when the process does not exist).
  std::optional<PidDir> open_pid(pid_t pid, int* err = nullptr) const;
  // The numeric entries of proc_root (processes), ascending.
  std::vector<pid_t> list_pids() const;
  // True if sys_root/block/<device> exists (a whole disk, not a partition).
  bool is_whole_disk(const std::string& device) const;
  const std::string& proc_root() const { return proc_root_; }

 private:
  std::string proc_root_;
  std::string sys_root_;
};

// Reads a whole file by path (for pidfiles). errno on failure.
FileText read_file(const std::string& path);

}  // namespace kv::mon
