// Test helper: opens a results file (migrating it if new) and writes N event rows, each in its
// own short transaction, as kvmon and kvdrive do. Usage: kv_db_writer FILE SOURCE N
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "kvbench/clock.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/sqlite.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: kv_db_writer FILE SOURCE N\n");
    return 2;
  }
  try {
    auto db = kv::open_results_db(argv[1]);
    auto ins = db.prepare("INSERT INTO events(ts_us, source, kind, message) VALUES (?, ?, ?, ?)");
    int n = std::atoi(argv[3]);
    for (int i = 0; i < n; ++i) {
      kv::WriteTransaction tx(db);
      ins.bind(1, kv::now_ts_us())
          .bind(2, argv[2])
          .bind(3, "test")
          .bind(4, std::to_string(i))
          .run();
      tx.commit();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kv_db_writer: %s\n", e.what());
    return 1;
  }
  return 0;
}
