#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "kvbench/usage_error.hpp"

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

// The first bytes of `path` (up to 4 KiB): enough to recognise what wrote it.
std::string head_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return head;
}

bool is_ours(std::string_view head, OutputKind kind, std::string_view csv_header) {
  switch (kind) {
    case OutputKind::html:
      return head.substr(0, 1024).find("<title>kvbench report") != std::string_view::npos;
    case OutputKind::json: {
      const size_t at = head.find_first_not_of(" \t\r\n");
      if (at == std::string_view::npos || head[at] != '{') return false;
      std::string compact;  // the first member, whitespace left out
      for (size_t i = at; i < head.size() && compact.size() < 40; ++i)
        if (head[i] != ' ' && head[i] != '\t' && head[i] != '\r' && head[i] != '\n')
          compact += head[i];
      return compact.rfind(R"({"format":"kvbench-results")", 0) == 0;
    }
    case OutputKind::csv:
      return !csv_header.empty() && head.substr(0, head.find('\n')) == csv_header;
  }
  return false;
}

const char* kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::html:
      return "a kvbench HTML report";
    case OutputKind::json:
      return "a kvbench JSON document";
    case OutputKind::csv:
      return "kvbench's CSV of that table";
  }
  return "kvbench's";
}

}  // namespace

void check_replaceable(std::string_view option, const std::string& path, OutputKind kind,
                       bool force, std::string_view csv_header) {
  if (force) return;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::is_empty(path, ec) ||
      std::filesystem::is_directory(path, ec))
    return;  // nothing to lose (a directory is refused by check_output_path)
  const std::string head = head_of(path);
  if (is_ours(head, kind, csv_header)) return;
  const bool sqlite = head.rfind(std::string("SQLite format 3\0", 16), 0) == 0;
  throw UsageError(std::string(option) + " '" + path + "': exists and is not " + kind_name(kind) +
                   (sqlite ? " (it is a SQLite database)" : "") +
                   ": kvdrive replaces only its own output (choose another name, or --force)");
}

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
