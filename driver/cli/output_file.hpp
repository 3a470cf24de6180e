// Report files written whole or not at all: into a temporary file beside the target, renamed
// over it once complete, so a failure never leaves half a page nor destroys an older one.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace kv::drive {

// Calls `write` with a stream, then puts what it wrote at `path` in one rename (a symlink at
// `path` is followed: the file it points to is replaced). `before_rename` runs just before the
// rename (a last check that `path` is still safe to replace). The new file gets the old one's
// permissions, or 0666 minus the umask. Throws std::runtime_error naming `path` (the temporary
// file is removed); exceptions of `write` and `before_rename` pass through, nothing renamed.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::function<void()>& before_rename = {});

// What an output option writes, as check_replaceable recognises it in a file already there.
enum class OutputKind {
  html,  // kvdrive report --html: its <title> begins "kvbench report"
  json,  // --json-out: a document whose first member is "format": "kvbench-results"
  csv,   // report --out DIR: a table whose first line is the header kvdrive writes for it
};

// Refuses to let `option` replace `path` unless it is absent, empty, or recognisably kvbench's
// own output of `kind` (for csv: its first line is `csv_header`); `force` replaces anything.
// Throws UsageError naming the option, the file and what it is (a SQLite database is named as
// one): no output option replaces a file kvbench did not write.
void check_replaceable(std::string_view option, const std::string& path, OutputKind kind,
                       bool force, std::string_view csv_header = {});

}  // namespace kv::drive
