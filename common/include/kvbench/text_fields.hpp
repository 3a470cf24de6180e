// Lines, fields and strict integers of line-oriented text (/proc and cgroup files, a store's
// text protocol): the helpers kvmon's parsers and the test fake store share. Header-only; no
// allocation but split_fields' vector of fields (kvmon's per-tick parsers use first_fields and
// for_each_field instead).
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string_view>
#include <system_error>
#include <vector>

namespace kv {

// Calls fn(line) for each line of text, without its '\n'; a last line without one counts.
template <typename Fn>
void for_each_line(std::string_view text, Fn&& fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

// Calls fn(index, field) for each field of `s`: runs of characters other than spaces and tabs
// (empty fields are never passed), without allocating; returns how many fields there were.
template <typename Fn>
size_t for_each_field(std::string_view s, Fn&& fn) {
  size_t n = 0, i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) fn(n++, s.substr(i, j - i));
    i = j;
  }
  return n;
}

// The fields of `s`, as for_each_field finds them, in a vector.
inline std::vector<std::string_view> split_fields(std::string_view s) {
  std::vector<std::string_view> out;
  for_each_field(s, [&](size_t, std::string_view f) { out.push_back(f); });
  return out;
}

// The first N fields of `s`, without allocating (kvmon's parsers run every tick); `total`
// counts every field of `s`, kept or not.
template <size_t N>
struct FirstFields {
  std::array<std::string_view, N> field{};
  size_t total = 0;
};
template <size_t N>
FirstFields<N> first_fields(std::string_view s) {
  FirstFields<N> out;
  out.total = for_each_field(s, [&](size_t i, std::string_view f) {
    if (i < N) out.field[i] = f;
  });
  return out;
}

// `s` without spaces, tabs, carriage returns and newlines at either end.
inline std::string_view trim_blanks(std::string_view s) {
  constexpr std::string_view kBlanks = " \t\r\n";
  const size_t b = s.find_first_not_of(kBlanks);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kBlanks) - b + 1);
}

// A decimal integer (optional leading '-') that is the whole of `text`; nullopt for anything
// else (empty, a sign alone, trailing bytes, out of int64's range).
inline std::optional<int64_t> parse_int(std::string_view text) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || text.empty() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace kv
