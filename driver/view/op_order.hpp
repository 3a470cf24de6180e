// The order reports list a run's operations in: set, get, then the others as kvdrive numbers
// them (kvbench/op_type.hpp), not by name.
#pragma once

#include <string>
#include <string_view>

#include "kvbench/op_type.hpp"

namespace kv::drive::view {

// An SQL expression of the op column `column` ("d.op") that sorts ascending in that order (an
// op of another name sorts first).
inline std::string op_order(std::string_view column) {
  std::string names = ",";
  for (size_t i = 0; i < kOpTypes; ++i) {
    names += op_name(static_cast<OpType>(i));
    names += ',';
  }
  return "instr('" + names + "', ',' || " + std::string(column) + " || ',')";
}

}  // namespace kv::drive::view
