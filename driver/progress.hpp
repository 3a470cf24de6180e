// A live progress line on stderr, redrawn once per second; silent when stderr is not a terminal.
#pragma once

#include <string>

namespace kv::drive {

class ProgressLine {
 public:
  explicit ProgressLine(bool wanted);
  ~ProgressLine() { finish(); }
  void update(const std::string& text);
  // Clears the line (so later output starts on a clean line).
  void finish();

 private:
  bool enabled_;
  bool drawn_ = false;
};

}  // namespace kv::drive
