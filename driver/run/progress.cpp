#include "run/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace kv::drive {
namespace {

size_t columns_of(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a UTF-8 continuation byte
  }));
}

// The longest prefix of `s` of at most `columns` code points.
std::string_view cut_to(std::string_view s, size_t columns) {
  size_t seen = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
    if (seen == columns) return s.substr(0, i);
    ++seen;
  }
  return s;
}

}  // namespace

void add_progress_fields(std::vector<ProgressField>& fields, std::string_view text, int priority) {
  size_t i = 0;
  int n = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    if (i == text.size()) break;
    size_t end = text.find("  ", i);
    if (end == std::string_view::npos) end = text.size();
    std::string_view piece = text.substr(i, end - i);
    while (!piece.empty() && piece.back() == ' ') piece.remove_suffix(1);
    fields.push_back({std::string(piece), priority - n++});
    i = end;
  }
}

std::string fit_progress_line(const std::vector<ProgressField>& fields, size_t columns) {
  std::vector<bool> shown(fields.size(), true);
  auto width = [&] {
    size_t w = 0, n = 0;
    for (size_t i = 0; i < fields.size(); ++i)
      if (shown[i]) w += columns_of(fields[i].text) + (n++ > 0 ? 2 : 0);
    return w;
  };
  size_t left = fields.size();
  while (columns > 0 && left > 1 && width() > columns) {
    size_t drop = fields.size();
    for (size_t i = 0; i < fields.size(); ++i)
      if (shown[i] && (drop == fields.size() || fields[i].priority <= fields[drop].priority))
        drop = i;
    shown[drop] = false;
    --left;
  }
  // Dropping goes by priority alone, so a short piece may have gone before a long one that
  // went later: give back, highest priority first, those that fit again.
  for (bool added = true; columns > 0 && added;) {
    added = false;
    size_t best = fields.size();
    const size_t now = width();
    for (size_t i = 0; i < fields.size(); ++i)
      if (!shown[i] && now + 2 + columns_of(fields[i].text) <= columns &&
          (best == fields.size() || fields[i].priority > fields[best].priority))
        best = i;
    if (best < fields.size()) shown[best] = added = true;
  }
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) {
    if (!shown[i]) continue;
    if (!line.empty()) line += "  ";
    line += fields[i].text;
  }
  return columns > 0 ? std::string(cut_to(line, columns)) : line;
}

size_t terminal_columns(int fd) {
  winsize ws{};
  if (::ioctl(fd, TIOCGWINSZ, &ws) != 0) return 0;
  return ws.ws_col;
}

ProgressLine::ProgressLine(bool wanted) : enabled_(wanted && isatty(STDERR_FILENO) == 1) {}

void ProgressLine::update(const std::vector<ProgressField>& fields) {
  if (!enabled_) return;
  const size_t cols = terminal_columns(STDERR_FILENO);
  // An unknown width (0) draws the whole line, as before widths were read.
  std::string line = "\r\033[K";
  line += fit_progress_line(fields, cols > 1 ? cols - 1 : cols);
  if (::write(STDERR_FILENO, line.data(), line.size()) > 0) drawn_ = true;
}

void ProgressLine::finish() {
  if (!enabled_ || !drawn_) return;
  const char clear[] = "\r\033[K";
  if (::write(STDERR_FILENO, clear, sizeof clear - 1) > 0) drawn_ = false;
}

}  // namespace kv::drive
