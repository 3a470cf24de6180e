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
  // The table on one line per row. With `width` > 0 and a table wider than that, the headers
  // wrap at their spaces (bottom-aligned), then the columns of `narrow_first` (indices, in that
  // order) are left out one at a time until it fits. Returns the headers of those left out.
  std::vector<std::string> print(std::ostream& out, size_t width = 0,
                                 const std::vector<size_t>& narrow_first = {}) const;
  // The columns the table needs with wrapped headers and every column shown.
  size_t narrowest() const;

 private:
  std::vector<size_t> cell_widths() const;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// `text` (each of its lines) broken at its spaces into lines of at most `width` columns (a longer
// word stays whole), each line after the first led by `indent`; joined by '\n', with no final
// newline. Width 0: the text as it is.
std::string wrap_words(const std::string& text, size_t width, const std::string& indent = "");

}  // namespace kv::drive
