// A plain-text table with aligned columns: numbers right-aligned, text left-aligned.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "kvbench/units.hpp"  // fmt_int, fmt_fixed: the cells' number formats

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

}  // namespace kv::drive
