// --mix-key-pattern and --mix-value-size: ops of a mixed phase with a key pattern or value
// sizes of their own.
#include <algorithm>
#include <string>

#include "kvbench/usage_error.hpp"
#include "workload/workload.hpp"

namespace kv::drive {
namespace {

// "OP=TEXT;OP=TEXT" → each op's TEXT parsed by `parse`, into its built-in op's slot.
template <typename T, typename Parse>
std::array<std::optional<T>, kBuiltinOps> parse_by_op(std::string_view text, const char* what,
                                                      bool values, Parse parse) {
  std::array<std::optional<T>, kBuiltinOps> out;
  const auto bad = [&](std::string_view part, const std::string& why) {
    throw UsageError("'" + std::string(text) + "': '" + std::string(part) + "' " + why);
  };
  for (size_t pos = 0; pos <= text.size();) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view part = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t eq = part.find('=');
    if (eq == std::string_view::npos)
      bad(part, std::string("is not OP=") + what + " (ops separated by ';')");
    const std::string_view name = part.substr(0, eq);
    const std::optional<OpType> op = parse_op_name(name);
    if (!op || op == OpType::backfill || op == OpType::mget)
      bad(name, "is not an operation of --mix (set, get, delete, incr, ...)");
    if (values && !op_has_value(*op) && op != OpType::mset)
      bad(name,
          "sends no value (value sizes are for set, add, replace, append, prepend, cas, mset)");
    auto& slot = out[static_cast<size_t>(*op)];
    if (slot) bad(part, "names an operation twice");
    try {
      slot = parse(part.substr(eq + 1));
    } catch (const UsageError& e) {
      bad(name, std::string("has ") + e.what());
    }
  }
  return out;
}

template <typename T, typename Describe>
std::string text_by_op(const std::array<std::optional<T>, kBuiltinOps>& by_op, Describe describe) {
  std::string out;
  for (size_t i = 0; i < by_op.size(); ++i) {
    if (!by_op[i]) continue;
    if (!out.empty()) out += ';';
    out += op_name(static_cast<OpType>(i));
    out += '=';
    out += describe(*by_op[i]);
  }
  return out;
}

}  // namespace

std::array<std::optional<KeyPattern>, kBuiltinOps> parse_mix_patterns(std::string_view text) {
  return parse_by_op<KeyPattern>(text, "PATTERN", false, parse_key_pattern);
}

std::array<std::optional<ValueSizes>, kBuiltinOps> parse_mix_values(std::string_view text) {
  return parse_by_op<ValueSizes>(text, "SIZES", true, parse_value_sizes);
}

std::string mix_patterns_text(const std::array<std::optional<KeyPattern>, kBuiltinOps>& p) {
  return text_by_op(p, key_pattern_name);
}

std::string mix_values_text(const std::array<std::optional<ValueSizes>, kBuiltinOps>& v) {
  return text_by_op(v, [](const ValueSizes& s) { return s.describe(); });
}

uint64_t WorkloadSpec::largest_value() const {
  uint64_t m = values.largest();
  if (has_mixed_phase())
    for (const auto& v : mix_values)
      if (v) m = std::max(m, v->largest());
  return m;
}

}  // namespace kv::drive
