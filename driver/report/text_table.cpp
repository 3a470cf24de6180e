#include "report/text_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace kv::drive {
namespace {

bool numeric(const std::string& s) {
  return !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s == "-" ||
                        (s[0] == '-' && s.size() > 1));
}

std::vector<std::string> words_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

size_t longest_word(const std::string& s) {
  size_t n = 0;
  for (const auto& w : words_of(s)) n = std::max(n, w.size());
  return n;
}

// Greedy lines of at most `width` (a longer word alone on its line).
std::vector<std::string> wrap_lines(const std::string& s, size_t width) {
  std::vector<std::string> lines;
  for (const auto& w : words_of(s)) {
    if (!lines.empty() && lines.back().size() + 1 + w.size() <= width)
      lines.back() += " " + w;
    else
      lines.push_back(w);
  }
  if (lines.empty()) lines.emplace_back();
  return lines;
}

}  // namespace

std::vector<size_t> TextTable::cell_widths() const {
  std::vector<size_t> width(header_.size(), 0);
  for (const auto& r : rows_)
    for (size_t c = 0; c < r.size() && c < width.size(); ++c)
      width[c] = std::max(width[c], r[c].size());
  return width;
}

size_t TextTable::narrowest() const {
  const auto cells = cell_widths();
  size_t total = 0;
  for (size_t c = 0; c < header_.size(); ++c)
    total += std::max(cells[c], longest_word(header_[c])) + (c ? 2 : 0);
  return total;
}

std::vector<std::string> TextTable::print(std::ostream& out, size_t max_width,
                                          const std::vector<size_t>& narrow_first) const {
  const size_t n = header_.size();
  const std::vector<size_t> cells = cell_widths();
  std::vector<bool> keep(n, true);
  bool wrap = false;
  auto needed = [&] {
    size_t total = 0, shown = 0;
    for (size_t c = 0; c < n; ++c) {
      if (!keep[c]) continue;
      total += std::max(cells[c], wrap ? longest_word(header_[c]) : header_[c].size());
      ++shown;
    }
    return total + (shown ? 2 * (shown - 1) : 0);
  };
  std::vector<std::string> left_out;
  if (max_width > 0 && needed() > max_width) {
    wrap = true;
    for (size_t c : narrow_first) {
      if (needed() <= max_width) break;
      if (c == 0 || c >= n || !keep[c]) continue;
      keep[c] = false;
      left_out.push_back(header_[c]);
    }
  }
  std::vector<size_t> width(n);
  std::vector<std::vector<std::string>> head(n);
  size_t head_lines = 1;
  for (size_t c = 0; c < n; ++c) {
    width[c] = std::max(cells[c], wrap ? longest_word(header_[c]) : header_[c].size());
    head[c] = wrap ? wrap_lines(header_[c], width[c]) : std::vector<std::string>{header_[c]};
    if (keep[c]) head_lines = std::max(head_lines, head[c].size());
  }
  // A column is right-aligned (header included) when every cell in it is a number.
  std::vector<bool> right(n, !rows_.empty());
  right[0] = false;
  for (const auto& r : rows_)
    for (size_t c = 1; c < r.size() && c < n; ++c)
      if (!numeric(r[c])) right[c] = false;
  size_t last = 0;
  for (size_t c = 0; c < n; ++c)
    if (keep[c]) last = c;
  auto line = [&](auto cell_at) {
    std::string text;
    for (size_t c = 0; c < n; ++c) {
      if (!keep[c]) continue;
      const std::string cell = cell_at(c);
      std::string pad(width[c] - std::min(width[c], cell.size()), ' ');
      if (c > 0) text += "  ";
      text += right[c] ? pad + cell : (c == last ? cell : cell + pad);
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << '\n';
  };
  for (size_t l = 0; l < head_lines; ++l)
    line([&](size_t c) {  // bottom-aligned: a shorter header on the last lines
      const size_t skip = head_lines - head[c].size();
      return l < skip ? std::string() : head[c][l - skip];
    });
  for (const auto& r : rows_) line([&](size_t c) { return c < r.size() ? r[c] : std::string(); });
  return left_out;
}

std::string wrap_words(const std::string& text, size_t width, const std::string& indent) {
  if (width == 0 || text.size() <= width) return text;
  if (const size_t nl = text.find('\n'); nl != std::string::npos)  // each line on its own
    return wrap_words(text.substr(0, nl), width, indent) + "\n" +
           wrap_words(text.substr(nl + 1), width, indent);
  std::string out;
  size_t col = 0;
  bool has_word = false;  // on the current line
  for (const auto& w : words_of(text)) {
    if (has_word && col + 1 + w.size() > width) {
      out += "\n" + indent;
      col = indent.size();
      has_word = false;
    }
    if (has_word) {
      out += ' ';
      ++col;
    }
    out += w;
    col += w.size();
    has_word = true;
  }
  return out;
}

}  // namespace kv::drive
