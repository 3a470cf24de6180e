#include "util/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "util/utf8.hpp"

namespace kv::drive {

std::string read_text_file(std::string_view what, const std::string& path, size_t max_bytes) {
  auto bad = [&](const std::string& why) {
    throw UsageError(std::string(what) + " '" + path + "': " + why);
  };
  // O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused just below.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) bad("no such file");
    bad(std::string("cannot read it: ") + std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) bad(std::string("cannot read it: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) bad("is a directory");
  if (!S_ISREG(st.st_mode)) bad("not a regular file");
  if (static_cast<uint64_t>(st.st_size) > max_bytes)
    bad("larger than " + format_size(max_bytes) + " (" + std::to_string(st.st_size) + " bytes)");
  std::string text;
  text.resize(max_bytes + 1);  // one more: a file that grew since fstat is still seen
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      if (errno == EISDIR) bad("is a directory");
      bad(std::string("cannot read it: ") + std::strerror(errno));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > max_bytes) bad("larger than " + format_size(max_bytes));
  text.resize(got);
  if (text.rfind("\xef\xbb\xbf", 0) == 0) text.erase(0, 3);
  const size_t at = invalid_utf8_at(text);
  if (at != std::string::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02x",
                  static_cast<unsigned>(static_cast<unsigned char>(text[at])));
    bad("line " + std::to_string(line) + " is not UTF-8 (byte " + byte + ")");
  }
  return text;
}

}  // namespace kv::drive
