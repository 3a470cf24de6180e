// What the `kvdrive merge` tests share (merge_schema_test.cpp, merge_test.cpp,
// merge_hosts_test.cpp): the real kvdrive merging files into one.
#pragma once

#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"

namespace kv::test {

inline Outcome merge(const TempDir& dir, const std::string& out,
                     const std::vector<std::string>& in) {
  std::vector<std::string> args = {"merge", "--db", out};
  args.insert(args.end(), in.begin(), in.end());
  return run_kvdrive(dir, args);
}

}  // namespace kv::test
