// The sample field tables (kvbench/samples.hpp) against the migrated schema, and the two ways a
// sample reaches a results file (kvmon's own INSERT; the link line kvdrive decodes) giving the
// same row.
#include "kvbench/samples.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "kvbench/protocol.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/sqlite.hpp"
#include "servers.hpp"

namespace kv {
namespace {

struct Column {
  std::string type;
  bool notnull = false;
};

std::map<std::string, Column> table_info(Database& db, const std::string& table) {
  std::map<std::string, Column> out;
  Statement st = db.prepare("PRAGMA table_info(" + table + ")");
  while (st.step()) out[st.column_text(1)] = {st.column_text(2), st.column_int(3) != 0};
  return out;
}

template <typename S>
std::string sql_type(const SampleField<S>& f) {
  return std::visit(
      [](auto member) -> std::string {
        using T = std::remove_cvref_t<decltype(std::declval<const S&>().*member)>;
        if constexpr (std::is_same_v<T, std::string>) return "TEXT";
        if constexpr (std::is_same_v<T, OptReal>) return "REAL";
        return "INTEGER";
      },
      f.member);
}

// Every column of the table is a field or one of the writers' own columns, and every field is
// a column of the right type and nullability.
template <typename S, size_t N>
void expect_table_matches_schema(const SampleTable<S>& t, const char* const (&own)[N]) {
  test::TempDir dir;
  Database db = open_results_db(dir.file("r.db"));
  std::map<std::string, Column> columns = table_info(db, t.table);
  ASSERT_FALSE(columns.empty()) << t.table;
  std::set<std::string> listed;
  for (const char* c : own) {
    EXPECT_TRUE(listed.insert(c).second) << t.table << "." << c << " listed twice";
    EXPECT_TRUE(columns.count(c)) << t.table << "." << c << " (own column) is not in the schema";
  }
  for (const SampleField<S>& f : t.fields) {
    EXPECT_TRUE(listed.insert(f.column).second) << t.table << "." << f.column << " listed twice";
    auto it = columns.find(f.column);
    if (it == columns.end()) {
      ADD_FAILURE() << t.table << "." << f.column << " is in the field table, not in the schema";
      continue;
    }
    EXPECT_EQ(it->second.type, sql_type(f)) << t.table << "." << f.column;
    EXPECT_EQ(!it->second.notnull, f.nullable) << t.table << "." << f.column;
  }
  for (const auto& [name, col] : columns) {
    EXPECT_TRUE(listed.count(name))
        << t.table << "." << name << " is in the schema but in no field table: kvmon and the "
        << "--monitor path would leave it NULL";
  }
}

TEST(SampleFields, ProcessTableMatchesTheMigratedSchema) {
  expect_table_matches_schema(kProcessTable, kProcessOwnColumns);
}
TEST(SampleFields, HostTableMatchesTheMigratedSchema) {
  expect_table_matches_schema(kHostTable, kHostOwnColumns);
}
TEST(SampleFields, DiskTableMatchesTheMigratedSchema) {
  expect_table_matches_schema(kDiskTable, kDiskOwnColumns);
}

// Writes `s` twice, once bound from the struct (kvmon) and once from its encoded and parsed
// link line (kvdrive), at rowid 1 and 2; returns the two rows' field values as text.
template <typename S>
std::pair<std::string, std::string> both_paths(const SampleTable<S>& t, const S& s) {
  test::TempDir dir;
  Database db = Database::open(dir.file("t.db"));
  std::string columns = "k INTEGER PRIMARY KEY";
  for (const SampleField<S>& f : t.fields) columns += std::string(", ") + f.column;
  db.exec(std::string("CREATE TABLE ") + t.table + " (" + columns + ")");
  const std::string sql = insert_sql(t, {"k"});
  Statement direct = db.prepare(sql);
  direct.bind(1, 1);
  EXPECT_EQ(bind_fields(direct, 2, t, s), static_cast<int>(t.fields.size()) + 2);
  direct.run();

  proto::Message m(t.verb);
  add_fields(m, t, s);
  std::string line = proto::encode(m);
  line.pop_back();  // '\n'
  auto parsed = proto::parse_message(line);
  EXPECT_TRUE(parsed.ok()) << line;
  Statement linked = db.prepare(sql);
  linked.bind(1, 2);
  bind_fields(linked, 2, t, parsed.value());
  linked.run();

  std::string quoted;
  for (const SampleField<S>& f : t.fields) {
    quoted += std::string(quoted.empty() ? "" : " || ' ' || ") + "quote(" + f.column + ")";
  }
  auto row = [&](int k) {
    Statement q = db.prepare("SELECT " + quoted + " FROM " + t.table + " WHERE k = ?");
    q.bind(1, k);
    return q.step() ? q.column_text(0) : std::string("(no row)");
  };
  return {row(1), row(2)};
}

TEST(SampleFields, KvmonAndTheLinkStoreTheSameProcessRow) {
  ProcessSample s;
  s.rss_kib = 1;
  s.rss_anon_kib = 2;
  s.rss_file_kib = 3;
  s.swap_kib = 0;
  s.vsize_kib = -5;
  s.cpu_user_us = 6;
  s.cpu_system_us = 7;
  s.threads = 8;
  s.fds = 9;
  s.io_read_bytes = 10;
  s.io_write_bytes = 11;
  s.minor_faults = 12;
  s.major_faults = 13;
  s.ctx_voluntary = 14;
  s.ctx_involuntary = 15;                  // rss_shmem_kib and pss_kib unknown
  s.cg_memory_max_bytes = kNoCgroupLimit;  // the cgroup columns (migration 005): a few known
  s.cg_failcnt = 0;
  s.cg_psi_memory_some_avg10 = 1.5;
  auto [kvmon, link] = both_paths(kProcessTable, s);
  std::string cgroup;
  for (const auto& f : kProcessFields) {
    std::string c = f.column;
    if (!c.starts_with("cg_")) continue;
    cgroup += c == "cg_memory_max_bytes"        ? " 9223372036854775807"
              : c == "cg_failcnt"               ? " 0"
              : c == "cg_psi_memory_some_avg10" ? " 1.5"
                                                : " NULL";
  }
  EXPECT_EQ(kvmon, "1 2 3 NULL 0 -5 6 7 8 9 10 11 12 13 14 15 NULL" + cgroup);
  EXPECT_EQ(link, kvmon);
}

TEST(SampleFields, KvmonAndTheLinkStoreTheSameHostRow) {
  HostSample h;
  h.load1 = 0.5;
  h.load5 = 1.25;
  h.mem_total_kib = 100;
  h.mem_available_kib = 50;
  h.swap_total_kib = 0;
  h.swap_free_kib = 0;
  h.pswpin = 1;
  h.pswpout = 2;
  h.pgmajfault = 3;
  h.cpu_user_ticks = 4;
  h.cpu_system_ticks = 5;
  h.cpu_iowait_ticks = 6;
  h.cpu_steal_ticks = 7;
  h.cpu_idle_ticks = 8;
  h.psi_memory_some_avg10 = 0.25;
  h.psi_io_full_avg10 = 12.5;
  h.psi_memory_full_us = 0;  // a stall counter read as 0: known, not NULL
  h.psi_cpu_some_us = 4'000'000'000'000;
  auto [kvmon, link] = both_paths(kHostTable, h);
  EXPECT_EQ(kvmon,
            "0.5 1.25 NULL 100 50 0 0 1 2 3 4 5 6 7 8 0.25 NULL NULL 12.5 NULL NULL 0 NULL NULL "
            "4000000000000");
  EXPECT_EQ(link, kvmon);
}

TEST(SampleFields, KvmonAndTheLinkStoreTheSameDiskRow) {
  auto [kvmon, link] = both_paths(kDiskTable, DiskStat{"nvme0n1", 1, 2, 3, 4, 5});
  EXPECT_EQ(kvmon, "'nvme0n1' 1 3 2 4 5");
  EXPECT_EQ(link, kvmon);
}

}  // namespace
}  // namespace kv
