#include "progress.hpp"

#include <unistd.h>

namespace kv::drive {

ProgressLine::ProgressLine(bool wanted) : enabled_(wanted && isatty(STDERR_FILENO) == 1) {}

void ProgressLine::update(const std::string& text) {
  if (!enabled_) return;
  std::string line = "\r\033[K" + text;
  if (::write(STDERR_FILENO, line.data(), line.size()) > 0) drawn_ = true;
}

void ProgressLine::finish() {
  if (!enabled_ || !drawn_) return;
  const char clear[] = "\r\033[K";
  if (::write(STDERR_FILENO, clear, sizeof clear - 1) > 0) drawn_ = false;
}

}  // namespace kv::drive
