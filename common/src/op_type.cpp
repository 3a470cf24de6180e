#include "kvbench/op_type.hpp"

#include <array>

namespace kv {
namespace {

constexpr std::array<const char*, kOpTypes> kNames = {"set",     "get",   "delete",  "incr",
                                                      "decr",    "add",   "replace", "append",
                                                      "prepend", "touch", "backfill"};

}  // namespace

const char* op_name(OpType op) noexcept {
  const auto i = static_cast<size_t>(op);
  return i < kNames.size() ? kNames[i] : "?";
}

std::optional<OpType> parse_op_name(std::string_view name) noexcept {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<OpType>(i);
  return std::nullopt;
}

}  // namespace kv
