// Small text files named by the user (config files, scenario files), read with bounds: a
// device, a FIFO or a huge file is refused instead of read forever.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kv::drive {

// Config and scenario files are a few hundred bytes; 1 MiB is far beyond any real one.
inline constexpr size_t kMaxTextFileBytes = size_t{1} << 20;

// Reads the file at `path` whole. Refuses (UsageError "<what> '<path>': ...") a
// path that is missing, a directory or not a regular file (/dev/zero, a FIFO: opened without
// blocking), larger than `max_bytes`, or not UTF-8 (naming the line). A leading UTF-8 byte
// order mark is dropped (editors on Windows write one; it would make the first key unknown).
std::string read_text_file(std::string_view what, const std::string& path,
                           size_t max_bytes = kMaxTextFileBytes);

// A line of such a file without its leading and trailing blanks (spaces, tabs, a CR).
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace kv::drive
