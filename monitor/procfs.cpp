#include "procfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <utility>

#include "proc_parsers.hpp"

namespace kv::mon {
namespace {

FileText read_fd(int fd) {
  FileText out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      out.text.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      out.err = errno;
      break;
    }
  }
  ::close(fd);
  return out;
}

FileText read_at(int dirfd, const char* name) {
  int fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileText{errno, {}};
  return read_fd(fd);
}

// Calls fn(name) for each entry of the directory opened from dirfd/name except . and ..;
// returns errno (0 on success).
template <typename Fn>
int for_each_entry(int dirfd, const char* name, Fn&& fn) {
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    int err = errno;
    ::close(fd);
    return err;
  }
  while (dirent* e = ::readdir(dir)) {
    std::string_view n = e->d_name;
    if (n != "." && n != "..") fn(n, ::dirfd(dir));
  }
  ::closedir(dir);
  return 0;
}

}  // namespace

OpenFile::OpenFile(int dirfd, const char* name)
    : fd_(::openat(dirfd, name, O_RDONLY | O_CLOEXEC)), err_(fd_ < 0 ? errno : 0) {}

OpenFile::OpenFile(OpenFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      err_(other.err_),
      buf_(std::move(other.buf_)),
      text_(std::exchange(other.text_, {})) {}

OpenFile& OpenFile::operator=(OpenFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    err_ = other.err_;
    buf_ = std::move(other.buf_);
    text_ = std::exchange(other.text_, {});
  }
  return *this;
}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool OpenFile::read() {
  text_ = {};
  if (fd_ < 0) return false;  // err_ holds why it could not be opened
  if (buf_.size() < 4096) buf_.resize(4096);
  size_t len = 0;
  for (;;) {
    if (len == buf_.size()) buf_.resize(buf_.size() * 2);
    size_t room = buf_.size() - len;
    ssize_t n = ::pread(fd_, buf_.data() + len, room, static_cast<off_t>(len));
    if (n > 0) {
      len += static_cast<size_t>(n);
      if (static_cast<size_t>(n) < room) break;  // short: the end (saves a pread per file)
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      err_ = errno;
      return false;
    }
  }
  err_ = 0;
  text_ = std::string_view(buf_.data(), len);
  return true;
}

bool OpenFile::read_prefix(size_t max_bytes) {
  text_ = {};
  if (fd_ < 0) return false;
  if (buf_.size() < max_bytes) buf_.resize(max_bytes);
  ssize_t n;
  do {
    n = ::pread(fd_, buf_.data(), max_bytes, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    err_ = errno;
    return false;
  }
  err_ = 0;
  std::string_view got(buf_.data(), static_cast<size_t>(n));
  size_t last_nl = got.rfind('\n');
  text_ = last_nl == std::string_view::npos ? std::string_view() : got.substr(0, last_nl + 1);
  return true;
}

OpenDir::OpenDir(int dirfd, const char* name) {
  int fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    err_ = errno;
    return;
  }
  dir_ = ::fdopendir(fd);
  if (dir_ == nullptr) {
    err_ = errno;
    ::close(fd);
  }
}

OpenDir::OpenDir(OpenDir&& other) noexcept
    : dir_(std::exchange(other.dir_, nullptr)), err_(other.err_) {}

OpenDir& OpenDir::operator=(OpenDir&& other) noexcept {
  if (this != &other) {
    if (dir_ != nullptr) ::closedir(dir_);
    dir_ = std::exchange(other.dir_, nullptr);
    err_ = other.err_;
  }
  return *this;
}

OpenDir::~OpenDir() {
  if (dir_ != nullptr) ::closedir(dir_);
}

std::optional<int64_t> OpenDir::count() {
  if (dir_ == nullptr) return std::nullopt;
  ::rewinddir(dir_);
  int64_t n = 0;
  errno = 0;
  while (dirent* e = ::readdir(dir_)) {
    std::string_view name = e->d_name;
    if (name != "." && name != "..") ++n;
  }
  if (errno != 0) {
    err_ = errno;
    return std::nullopt;
  }
  return n;
}

bool OpenDir::numbers(std::vector<int64_t>& out) {
  out.clear();
  if (dir_ == nullptr) return false;
  ::rewinddir(dir_);
  errno = 0;
  while (dirent* e = ::readdir(dir_)) {
    if (auto n = parse_int(std::string_view(e->d_name))) out.push_back(*n);
  }
  if (errno != 0) {
    err_ = errno;
    return false;
  }
  std::sort(out.begin(), out.end());
  return true;
}

std::optional<int64_t> OpenDir::stat_size() {
  struct stat st {};
  if (dir_ == nullptr) return std::nullopt;
  if (::fstat(::dirfd(dir_), &st) != 0) {
    err_ = errno;
    return std::nullopt;
  }
  return static_cast<int64_t>(st.st_size);
}

bool OpenFile::exists() const {
  struct stat st {};
  return fd_ >= 0 && ::fstat(fd_, &st) == 0 && st.st_nlink > 0;
}

PidDir::PidDir(PidDir&& other) noexcept : fd_(std::exchange(other.fd_, -1)), pid_(other.pid_) {}

PidDir& PidDir::operator=(PidDir&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    pid_ = other.pid_;
  }
  return *this;
}

PidDir::~PidDir() {
  if (fd_ >= 0) ::close(fd_);
}

FileText PidDir::read(const char* name) const { return read_at(fd_, name); }

std::vector<std::string> PidDir::fd_links() const {
  std::vector<std::string> out;
  (void)for_each_entry(fd_, "fd", [&](std::string_view name, int fd_dir) {
    char buf[256];
    ssize_t n = ::readlinkat(fd_dir, std::string(name).c_str(), buf, sizeof buf);
    if (n > 0) out.emplace_back(buf, static_cast<size_t>(n));
  });
  return out;
}

std::string PidDir::exe() const {
  char buf[4096];
  ssize_t n = ::readlinkat(fd_, "exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void ChildrenWatch::list_threads() {
  if (!task_.is_open()) task_ = dir_.open_dir("task");
  if (!task_.numbers(tids_)) {
    threads_.clear();
    return;
  }
  // Both ascending: drop the threads gone, open the children file of each new one.
  std::erase_if(threads_, [&](const Thread& t) {
    return !std::binary_search(tids_.begin(), tids_.end(), t.tid);
  });
  size_t at = 0;
  for (int64_t tid : tids_) {
    while (at < threads_.size() && threads_[at].tid < tid) ++at;
    if (at < threads_.size() && threads_[at].tid == tid) continue;
    char name[32];
    std::snprintf(name, sizeof name, "%lld/children", static_cast<long long>(tid));
    threads_.insert(threads_.begin() + static_cast<ptrdiff_t>(at),
                    Thread{tid, OpenFile(task_.fd(), name)});
    ++at;
  }
}

std::vector<pid_t> ChildrenWatch::read() {
  std::vector<pid_t> out;
  if (!dir_.is_open()) return out;
  list_threads();
  for (int attempt = 0; attempt < 2; ++attempt) {
    out.clear();
    bool all_read = true;
    for (Thread& t : threads_) {
      if (!t.children.read()) {
        all_read = false;  // a thread went between the listing and the read
        continue;
      }
      std::string_view rest = t.children.text();
      while (!rest.empty()) {
        size_t sp = rest.find(' ');
        if (auto pid = parse_int(rest.substr(0, sp)); pid && *pid > 0) {
          out.push_back(static_cast<pid_t>(*pid));
        }
        if (sp == std::string_view::npos) break;
        rest.remove_prefix(sp + 1);
      }
    }
    if (all_read) break;
    list_threads();
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

ProcFs::ProcFs(std::string proc_root, std::string sys_root)
    : proc_root_(std::move(proc_root)), sys_root_(std::move(sys_root)) {
  struct statfs sfs {};
  is_procfs_ = ::statfs(proc_root_.c_str(), &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC;
  if (is_procfs_) {
    // This process has at least stdin..stderr or the directory's own fd open: a kernel that
    // counts reports a size > 0 and equal to the listing (older kernels report 0).
    OpenDir self(AT_FDCWD, (proc_root_ + "/self/fd").c_str());
    auto size = self.stat_size();
    auto listed = self.count();
    fd_dir_size_is_count_ = size && listed && *size > 0 && *size == *listed;
  }
}

FileText ProcFs::read(const std::string& rel) const { return read_file(proc_root_ + "/" + rel); }

OpenFile ProcFs::open(const std::string& rel) const {
  return OpenFile(AT_FDCWD, (proc_root_ + "/" + rel).c_str());
}

std::optional<PidDir> ProcFs::open_pid(pid_t pid, int* err) const {
  std::string path = proc_root_ + "/" + std::to_string(pid);
  int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    if (err) *err = errno;
    return std::nullopt;
  }
  if (err) *err = 0;
  return PidDir(fd, pid);
}

std::vector<pid_t> ProcFs::list_pids() const {
  std::vector<int64_t> numbers;
  (void)OpenDir(AT_FDCWD, proc_root_.c_str()).numbers(numbers);
  std::vector<pid_t> out;
  for (int64_t n : numbers)
    if (n > 0) out.push_back(static_cast<pid_t>(n));
  return out;
}

namespace {
std::string block_dir_name(const std::string& device) {
  std::string name = device;
  std::replace(name.begin(), name.end(), '/', '!');  // e.g. cciss/c0d0 is block/cciss!c0d0
  return name;
}
}  // namespace

bool ProcFs::is_whole_disk(const std::string& device) const {
  struct stat st {};
  return ::stat((sys_root_ + "/block/" + block_dir_name(device)).c_str(), &st) == 0;
}

OpenFile ProcFs::open_block_stat(const std::string& device) const {
  return OpenFile(AT_FDCWD, (sys_root_ + "/block/" + block_dir_name(device) + "/stat").c_str());
}

FileText read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return FileText{errno, {}};
  return read_fd(fd);
}

}  // namespace kv::mon
