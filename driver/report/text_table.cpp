#include "report/text_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

namespace kv::drive {
namespace {
bool numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s == "-" ||
                        (s[0] == '-' && s.size() > 1));
}
}  // namespace

void TextTable::print(std::ostream& out) const {
  std::vector<size_t> width(header_.size());
  for (size_t c = 0; c < header_.size(); ++c) width[c] = header_[c].size();
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  // A column is right-aligned (header included) when every cell in it is a number.
  std::vector<bool> right(width.size(), !rows_.empty());
  right[0] = false;
  for (const auto& r : rows_)
    for (size_t c = 1; c < r.size() && c < right.size(); ++c)
      if (!numeric(r[c])) right[c] = false;
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < width.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      std::string pad(width[c] - cell.size(), ' ');
      if (c) out << "  ";
      out << (right[c] ? pad + cell : (c + 1 == width.size() ? cell : cell + pad));
    }
    out << '\n';
  };
  line(header_);
  for (const auto& r : rows_) line(r);
}

}  // namespace kv::drive
