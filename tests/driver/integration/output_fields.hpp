// docs/output-fields.md as the tests read it: the documented fields of each table, so a test
// can check that a JSON row has every documented field and no other.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "kvbench/samples.hpp"

namespace kv::test {

// The documented fields per table: `### \`name\`` sections of docs/output-fields.md, rows
// "| `field` | meaning |". A field whose meaning starts "only" is optional; "JSON only" fields
// are JSON's alone.
struct Field {
  std::string name;
  bool optional = false, json_only = false;
};
inline std::map<std::string, std::vector<Field>> documented_fields() {
  std::ifstream in(std::string(KV_SOURCE_DIR) + "/docs/output-fields.md");
  EXPECT_TRUE(in.good());
  std::map<std::string, std::vector<Field>> out;
  std::string line, table;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) == 0) {  // any heading ends a table's section
      table = line.rfind("### `", 0) == 0 ? line.substr(5, line.find('`', 5) - 5) : "";
      continue;
    }
    if (table.empty() || line.rfind("| `", 0) != 0) continue;
    const auto end = line.find('`', 3);
    Field f{line.substr(3, end - 3)};
    const std::string meaning = line.substr(line.find('|', end) + 2);
    f.optional = meaning.rfind("only", 0) == 0;
    f.json_only = meaning.rfind("JSON only", 0) == 0;
    out[table].push_back(f);
  }
  return out;
}

// The fields of `table` with the percentile placeholder (`lat_<p>_us`, `wire_<p>_us` ...)
// expanded for `percentile_names`, and `cg_*` for kvmon's cgroup columns (samples.hpp's
// process field table, in its order).
inline std::vector<Field> expanded(const std::vector<Field>& fields,
                                   const std::vector<std::string>& percentile_names) {
  std::vector<Field> out;
  for (const auto& f : fields) {
    if (f.name == "cg_*") {
      for (const auto& p : kv::kProcessFields)
        if (std::string(p.column).rfind("cg_", 0) == 0) out.push_back({p.column});
      continue;
    }
    const auto at = f.name.find("<p>");
    if (at == std::string::npos) {
      out.push_back(f);
      continue;
    }
    for (const auto& p : percentile_names) {
      Field e = f;
      e.name = f.name.substr(0, at) + p + f.name.substr(at + 3);
      out.push_back(e);
    }
  }
  return out;
}

// Every key of `row` is documented for `table`, every documented (not optional) key is there.
inline void expect_documented(const nlohmann::json& row, const std::vector<Field>& fields,
                              const std::string& table, const std::set<std::string>& extra = {}) {
  std::set<std::string> names;
  for (const auto& f : fields) {
    names.insert(f.name);
    if (!f.optional) {
      EXPECT_TRUE(row.contains(f.name)) << table << "." << f.name;
    }
  }
  for (const auto& [k, v] : row.items())
    EXPECT_TRUE(names.count(k) || extra.count(k)) << table << "." << k << " is not documented";
}

}  // namespace kv::test
