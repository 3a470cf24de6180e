// A plain-text table with aligned columns: numbers right-aligned, text left-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace kv::drive {

class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// "12,345" / "1.23" / "-" for NULL-like negatives: formatting helpers for report cells.
std::string fmt_int(double v);
std::string fmt_fixed(double v, int decimals);

}  // namespace kv::drive
