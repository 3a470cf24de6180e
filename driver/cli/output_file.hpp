// Report files written whole or not at all: into a temporary file beside the target, renamed
// over it once complete, so a failure never leaves half a page nor destroys an older one.
#pragma once

#include <functional>
#include <ostream>
#include <string>

namespace kv::drive {

// Calls `write` with a stream, then puts what it wrote at `path` in one rename (a symlink at
// `path` is followed: the file it points to is replaced). `before_rename` runs just before the
// rename (a last check that `path` is still safe to replace). The new file gets the old one's
// permissions, or 0666 minus the umask. Throws std::runtime_error naming `path` (the temporary
// file is removed); exceptions of `write` and `before_rename` pass through, nothing renamed.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                           const std::function<void()>& before_rename = {});

}  // namespace kv::drive
