#include "kvbench/op_type.hpp"

#include <array>

namespace kv {
namespace {

constexpr std::array<const char*, kBuiltinOps> kNames = {
    "set",     "get",   "delete",   "incr", "decr", "add",  "replace", "append",
    "prepend", "touch", "backfill", "gets", "cas",  "mget", "mset"};

std::array<std::string, kMaxCommands>& command_names() {
  static std::array<std::string, kMaxCommands> names = [] {
    std::array<std::string, kMaxCommands> n;
    for (size_t i = 0; i < n.size(); ++i) n[i] = "command" + std::to_string(i + 1);
    return n;
  }();
  return names;
}

}  // namespace

const char* op_name(OpType op) noexcept {
  const auto i = static_cast<size_t>(op);
  if (i < kNames.size()) return kNames[i];
  return op_is_command(op) ? command_names()[command_index(op)].c_str() : "?";
}

std::optional<OpType> parse_op_name(std::string_view name) noexcept {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i]) return static_cast<OpType>(i);
  return std::nullopt;
}

void set_command_names(const std::vector<std::string>& names) {
  for (size_t i = 0; i < kMaxCommands; ++i)
    command_names()[i] = i < names.size() ? names[i] : "command" + std::to_string(i + 1);
}

}  // namespace kv
