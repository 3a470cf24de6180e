// The order reports list a run's operations in: set, get, then the others as kvdrive numbers
// them (kvbench/op_type.hpp), not by name.
#pragma once

#include <string>
#include <string_view>

#include "kvbench/op_type.hpp"

namespace kv::drive::view {

// ORDER BY terms for the op column `column` ("d.op") that sort ascending in that order: an op
// of another name (a --command's) after them, by name.
inline std::string op_order(std::string_view column) {
  std::string names = ",";
  for (size_t i = 0; i < kBuiltinOps; ++i) {
    names += op_name(static_cast<OpType>(i));
    names += ',';
  }
  const std::string at = "instr('" + names + "', ',' || " + std::string(column) + " || ',')";
  return "(CASE " + at + " WHEN 0 THEN 1000 ELSE " + at + " END), " + std::string(column);
}

}  // namespace kv::drive::view
