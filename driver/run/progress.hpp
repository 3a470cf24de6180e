// A live progress line on stderr, redrawn once per second; silent when stderr is not a terminal.
// The line is fitted to the terminal's width, read again at every update (TIOCGWINSZ on stderr),
// so a resized window is followed within a second: it never wraps, so each redraw overwrites the
// last one and finish() leaves no fragment above what follows.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace kv::drive {

// One piece of the progress line. Pieces are shown in order, two spaces apart; when the line is
// too wide, the piece with the lowest priority is dropped first (the rightmost of equal ones),
// until it fits; then pieces dropped that fit in what is left come back, highest priority first.
// A first piece still too wide alone is cut to the width.
struct ProgressField {
  std::string text;
  int priority = 0;
};

// Priorities used by kvdrive's line (higher = kept longer): the phase's label, then the elapsed
// time, req/s, errors when there are any, p99, the request count, errors when zero, the store's
// own memory, and kvmon's figures (one piece per process, the last dropped first).
namespace progress_priority {
inline constexpr int kLabel = 100;
inline constexpr int kElapsed = 90;
inline constexpr int kRate = 80;
inline constexpr int kErrors = 75;
inline constexpr int kP99 = 70;
inline constexpr int kCount = 60;
inline constexpr int kNoErrors = 50;
inline constexpr int kStoreMemory = 40;
inline constexpr int kMonitored = 30;
}  // namespace progress_priority

// Appends the pieces of `text`, separated by two or more spaces, each with `priority` minus its
// position (so later ones go first). Leading and trailing spaces are ignored.
void add_progress_fields(std::vector<ProgressField>& fields, std::string_view text, int priority);

// The line shown for `fields` in at most `columns` columns (UTF-8 code points count one column
// each); columns 0 = no limit (width unknown).
std::string fit_progress_line(const std::vector<ProgressField>& fields, size_t columns);

// The columns of the terminal on `fd`, or 0 if it is not a terminal or does not say.
size_t terminal_columns(int fd);

class ProgressLine {
 public:
  explicit ProgressLine(bool wanted);
  ~ProgressLine() { finish(); }
  // Redraws the line, fitted to one column less than the terminal's width (a line that fills
  // the last column makes some terminals wrap).
  void update(const std::vector<ProgressField>& fields);
  void update(const std::string& text) { update(std::vector<ProgressField>{{text, 0}}); }
  // Clears the line (so later output starts on a clean line).
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace kv::drive
