#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace kv::drive {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& doing, int err) {
  throw std::runtime_error("could not write " + path + ": " + doing + ": " + std::strerror(err));
}

// Removes the temporary file unless it was renamed into place.
struct TempFile {
  std::string path;
  int fd = -1;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!path.empty()) ::unlink(path.c_str());
  }
};

mode_t new_file_mode(const std::string& target) {
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) return st.st_mode & 07777;
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::function<void()>& before_rename) {
  namespace fs = std::filesystem;
  std::ostringstream text;
  write(text);
  const std::string body = std::move(text).str();

  std::error_code ec;
  std::string target = path;
  if (fs::is_symlink(path, ec)) target = fs::weakly_canonical(path, ec).string();
  if (ec) target = path;
  fs::path p(target);
  TempFile tmp;
  std::string name =
      ".";  // appended, not "." + string: GCC 12 -O3 warns -Wrestrict (false positive)
  name += p.filename().string();
  name += ".XXXXXX";
  std::string pattern = (p.parent_path() / name).string();
  tmp.fd = ::mkstemp(pattern.data());
  if (tmp.fd < 0) fail(path, "cannot create a temporary file in its directory", errno);
  tmp.path = pattern;
  if (::fchmod(tmp.fd, new_file_mode(target)) != 0) fail(path, "fchmod", errno);
  for (size_t done = 0; done < body.size();) {
    ssize_t n = ::write(tmp.fd, body.data() + done, body.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, "write", errno);
    done += static_cast<size_t>(n);
  }
  if (::fsync(tmp.fd) != 0) fail(path, "fsync", errno);
  int fd = tmp.fd;
  tmp.fd = -1;
  if (::close(fd) != 0) fail(path, "close", errno);
  if (before_rename) before_rename();
  if (::rename(tmp.path.c_str(), target.c_str()) != 0) fail(path, "rename", errno);
  tmp.path.clear();
}

}  // namespace kv::drive
