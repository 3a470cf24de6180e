// Minimal JSON output helpers for kvdrive's machine-readable summaries (output only).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kv::drive {
// A quoted, escaped JSON string.
std::string json_string(std::string_view s);
// A JSON number, or null for nullopt / NaN / infinity.
std::string json_number(std::optional<double> v);
}  // namespace kv::drive
