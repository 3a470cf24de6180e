// Bad input for the real kvdrive binary, continued: config files; report's options and output
// files; results files that are not whole, read-only or in a directory kvdrive cannot write;
// subcommands; and the same arguments with good values, which reach the store. Each row must
// exit 2, print one line naming the option and the value, and write nothing
// (bad_input_util.hpp); no store runs.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bad_input_util.hpp"
#include "kvbench/schema.hpp"
#include "results/results_writer.hpp"

namespace kv::drive {
namespace {

TEST_F(KvdriveBadInput, ConfigFiles) {
  std::filesystem::create_directory(dir_.file("adir"));
  auto with = [&](const std::string& file) {
    return std::vector<std::string>{"--config", file, "run", "--db", kDb, "--target", target_};
  };
  std::vector<Case> cases;
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"[run]\nbogus = 1\n", {"unknown key 'bogus' in [run]"}},
      {"[run]\nkeys = 1000\nvalue_size = 10\n", {"unknown key 'value_size' in [run]"}},
      {"[other]\nkeys = 5\n", {"unknown section [other]"}},
      {"keys = 5\n", {"unknown key 'keys'"}},
      {"this is [ not toml\n", {"unknown key 'this is [ not toml'"}},
      {"[run]\nkeys = [1, 2]\n", {"--keys"}},
      {"[run]\ntimeout = \"0\"\n", {"--timeout", "'0'"}},
      {"[run]\nmax-errors = \"x\"\n", {"--max-errors", "'x'"}},
      {"[run]\nprocesses = 0\n", {"--processes", "'0'"}},
      {"[run]\nscale = 2\n", {"--scale", "--scenario"}},
      {"[run]\nmonitor = \"nohost\"\n", {"--monitor", "'nohost'"}},
      {"[run]\nscenario = \"no-such-scenario\"\n", {"unknown scenario 'no-such-scenario'"}},
      {"[report]\nformat = \"xml\"\n", {"--format", "xml"}},
  };
  int n = 0;
  for (const auto& [text, expect] : files) {
    std::string file = write_file("bad" + std::to_string(n++) + ".toml", text);
    std::vector<std::string> want = expect;
    if (text.find("[report]") != std::string::npos) {
      cases.push_back({{"--config", file, "report", "--db", previous_}, want});
      continue;
    }
    if (want.front().find("unknown") != std::string::npos &&
        want.front().find("scenario") == std::string::npos)
      want.push_back("--config " + in_quotes(file));
    cases.push_back({with(file), want});
  }
  // A key given twice named neither file nor line ("At Most 1 required but received 2").
  std::string dup = write_file("dup.toml", "[run]\nkeys = 10\n# a comment\nkeys = 20\n");
  cases.push_back(
      {with(dup),
       {"--config " + in_quotes(dup), "key 'keys' in [run] on line 2 and again on line 4"}});
  std::string dup_dotted = write_file("dup2.toml", "[run]\nthreads = 1\n\n\"threads\" = 2\n");
  cases.push_back(
      {with(dup_dotted), {"--config " + in_quotes(dup_dotted), "'threads'", "line 2", "line 4"}});
  // A bad value from the file names the file and its line, not only the option.
  std::string bad_value = write_file("value.toml", "[run]\nthreads = 2\nkeys = \"ten\"\n");
  cases.push_back(
      {with(bad_value), {"--keys", "'ten'", "from --config " + in_quotes(bad_value) + ", line 3"}});
  // Unknown keys say their line too.
  std::string unknown = write_file("unknown.toml", "[run]\nkeys = 10\nbogus = 1\n");
  cases.push_back({with(unknown), {"unknown key 'bogus' in [run] (line 3)"}});
  // A UTF-8 byte order mark made "[run]" an invisible unknown key: it is dropped now, so what
  // the file says is what counts (an unknown key, a bad combination).
  std::string bom = write_file("bom.toml", "\xef\xbb\xbf[run]\nbogus = 1\n");
  cases.push_back({with(bom), {"unknown key 'bogus' in [run] (line 2)"}});
  std::string bom_values = write_file("bom2.toml", "\xef\xbb\xbf[run]\nkeys = 3\nthreads = 4\n");
  cases.push_back({with(bom_values), {"--threads (4) must not exceed --keys (3)"}});
  std::string latin1 = write_file("latin1.toml", "[run]\nname = \"caf\xe9\"\n");
  cases.push_back({with(latin1), {"--config " + in_quotes(latin1), "line 2 is not UTF-8"}});
  // Not a regular file, or too large: /dev/zero grew kvdrive to 900 MB, a FIFO hung it.
  const std::string fifo = dir_.file("fifo.toml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& f : {std::string("/dev/zero"), fifo})
    cases.push_back({with(f), {"--config " + in_quotes(f), "not a regular file"}});
  std::string big = write_file("big.toml", "[run]\n" + std::string(1 << 20, '#') + "\n");
  cases.push_back({with(big), {"--config " + in_quotes(big), "larger than 1 MiB"}});
  // A target from the file only (the command line's --target would override it).
  std::string target_file = write_file("target.toml", "[run]\ntarget = \"bogus://x:1\"\n");
  cases.push_back(
      {{"--config", target_file, "run", "--db", kDb}, {"invalid target 'bogus://x:1'"}});
  std::string db_file = write_file("db.toml", "[run]\ndb = \"" + dir_.file("adir") + "\"\n");
  cases.push_back({{"--config", db_file, "run", "--target", target_}, {"--db", "is a directory"}});
  // The file itself.
  cases.push_back({with(dir_.file("missing.toml")), {"--config", "missing.toml", "no such file"}});
  cases.push_back({with(dir_.file("adir")), {"--config", "adir", "is a directory"}});
  cases.push_back({with(""), {"--config", "empty file name"}});
  if (geteuid() != 0) {  // root reads anything
    std::string locked = write_file("locked.toml", "[run]\nkeys = 10\n");
    chmod(locked.c_str(), 0);
    cases.push_back({with(locked), {"--config", "locked.toml", "cannot read"}});
  }
  // After the subcommand it is not an option of `run` (CLI11 reads it at the app level).
  cases.push_back(
      {run_args({"--config", write_file("late.toml", "[run]\nkeys = 10\n")}), {"--config"}});
  check_all(cases);
}

TEST_F(KvdriveBadInput, ReportOptions) {
  std::filesystem::create_directory(dir_.file("adir"));
  std::string garbage = write_file("garbage.db", "this is not a results file\n");
  std::string empty = write_file("empty.db", "");
  std::string other = dir_.file("other.db");
  Database::open(other).exec("CREATE TABLE t (x)");  // SQLite, but not a results file
  const std::string other_bytes = slurp(other);
  std::vector<Case> cases;
  for (const auto& [db, expect] :
       std::vector<std::pair<std::string, std::string>>{{dir_.file("missing.db"), "no such file"},
                                                        {dir_.file("adir"), "is a directory"},
                                                        {garbage, "not a SQLite file"},
                                                        {empty, "is empty"},
                                                        {other, "not a kvbench results file"},
                                                        {"", "empty file name"}})
    cases.push_back({{"report", "--db", db}, {"--db", expect}});
  cases.push_back({{"report"}, {"--db is required"}});
  for (const char* v : {"abc", "-1", "0", "99999999999999999999", "1e400", "", "1.5"})
    cases.push_back({{"report", "--db", previous_, "--run", v}, names("run", v)});
  cases.push_back({{"report", "--db", previous_, "--run", "99"}, {"no run 99"}});
  for (const char* v : {"xml", "", "TEXT", "0"})
    cases.push_back({{"report", "--db", previous_, "--format", v}, {"--format", v}});
  cases.push_back({{"report", "--db", previous_, "--html", ""}, {"--html"}});
  // compare: the file, the groups or runs, the figures
  cases.push_back({{"compare"}, {"--db is required"}});
  cases.push_back({{"compare", "--db", dir_.file("missing.db")}, {"--db", "no such file"}});
  cases.push_back({{"compare", "--db", previous_}, {"--db", "no repeat group", "--repeat"}});
  cases.push_back({{"compare", "--db", previous_, "--group", "nope"},
                   {"--group", "'nope'", "no such repeat group"}});
  cases.push_back({{"compare", "--db", previous_, "--group", ""}, {"--group"}});
  cases.push_back({{"compare", "--db", previous_, "--group", "a", "--group", "b", "--group", "c"},
                   {"--group", "one or two"}});
  cases.push_back(
      {{"compare", "--db", previous_, "--group", "a", "--run", "1"}, {"--group", "--run"}});
  cases.push_back({{"compare", "--db", previous_, "--run", "99"}, {"--run 99", "no such run"}});
  cases.push_back({{"compare", "--db", previous_, "--run", "x"}, names("run", "x")});
  // compare with a baseline: its file, its runs or group, and B named once
  cases.push_back({{"compare", "--db", previous_, "--baseline", dir_.file("missing.db")},
                   {"--baseline", "no such file"}});
  cases.push_back({{"compare", "--db", previous_, "--baseline", previous_},
                   {"--baseline", "no repeat group", "--baseline-run"}});
  cases.push_back({{"compare", "--db", previous_, "--baseline-run", "99", "--run", "1"},
                   {"--baseline-run 99", "no such run"}});
  cases.push_back(
      {{"compare", "--db", previous_, "--baseline-run", "0"}, names("baseline-run", "0")});
  cases.push_back({{"compare", "--db", previous_, "--baseline-run", "1", "--baseline-group", "g"},
                   {"--baseline-group", "--baseline-run"}});
  cases.push_back({{"compare", "--db", previous_, "--baseline-group", "nope", "--run", "1"},
                   {"--baseline-group", "'nope'", "no such repeat group"}});
  cases.push_back(
      {{"compare", "--db", previous_, "--baseline", previous_, "--group", "a", "--group", "b"},
       {"--group", "twice", "baseline"}});
  for (const char* v : {"x", "-1", "101", "", "5%%", "1e999"})
    cases.push_back({{"compare", "--db", previous_, "--min-effect", v}, names("min-effect", v)});
  for (const char* v : {"100", "40%", "abc"})
    cases.push_back({{"compare", "--db", previous_, "--confidence", v}, names("confidence", v)});
  cases.push_back({{"compare", "--db", previous_, "--format", "xml"}, {"--format", "xml"}});
  cases.push_back({{"compare", "--db", previous_, "--percentiles", "100"}, {"--percentiles"}});
  // mrc: the trace, its lines, the numbers
  std::ofstream(dir_.file("bad-trace.csv")) << "0,a,1,10,1,set,0\n1,b,1,20,1,fetch,0\n";
  cases.push_back({{"mrc"}, {"--trace is required"}});
  cases.push_back({{"mrc", "--trace", dir_.file("missing.csv")}, {"--trace", "no such file"}});
  cases.push_back({{"mrc", "--trace", dir_.file("bad-trace.csv")},
                   {"--trace", "bad-trace.csv:2:", "operation 'fetch'"}});
  for (const char* v : {"0", "x", "-1", ""})
    cases.push_back(
        {{"mrc", "--trace", dir_.file("bad-trace.csv"), "--max-keys", v}, names("max-keys", v)});
  cases.push_back(
      {{"mrc", "--trace", dir_.file("bad-trace.csv"), "--format", "xml"}, {"--format", "xml"}});
  cases.push_back(
      {{"mrc", "--trace", dir_.file("bad-trace.csv"), "--name", "x"}, {"--name", "--db"}});
  cases.push_back({{"mrc", "--trace", dir_.file("bad-trace.csv"), "--db", dir_.file("adir")},
                   {"--db", "adir"}});
  // gen-trace: the numbers
  for (const auto& [option, v] :
       std::vector<std::pair<std::string, std::string>>{{"requests", "0"},
                                                        {"requests", "x"},
                                                        {"keys", "0"},
                                                        {"zipf", "-1"},
                                                        {"zipf", "x"},
                                                        {"writes", "1.5"},
                                                        {"deletes", "-0.1"},
                                                        {"value-size", "0"},
                                                        {"value-size", "2M"},
                                                        {"value-size", "1K:5,2K:5"},
                                                        {"rate", "0"},
                                                        {"ttl", "1.5s"},
                                                        {"seed", "-1"}})
    cases.push_back({{"gen-trace", "--" + option, v}, names(option, v)});
  cases.push_back(
      {{"gen-trace", "--writes", "0.6", "--deletes", "0.6"}, {"--writes", "--deletes"}});
  // check: the files, the objectives
  const std::vector<std::string> check = {"check", "--db", previous_, "--baseline", previous_};
  const auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> args = check;
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };
  cases.push_back({{"check", "--db", previous_, "--max-regression", "throughput=5%"},
                   {"--baseline is required"}});
  cases.push_back({{"check", "--db", previous_, "--baseline", dir_.file("missing.db"),
                    "--max-regression", "throughput=5%"},
                   {"--baseline", "no such file"}});
  cases.push_back({with({}), {"--max-regression is required"}});
  for (const char* v : {"throughput", "x=5%", "p100=5%", "pq=5%", "throughput=5%,throughput=6%",
                        "throughput=-1%", "p99=abc", "", "p99=5%,"})
    cases.push_back({with({"--max-regression", v}), {"--max-regression"}});
  cases.push_back({with({"--max-regression", "throughput=5%"}), {"--db", "no repeat group"}});
  cases.push_back({with({"--max-regression", "throughput=5%", "--group", "nope"}),
                   {"--db", "no repeat group 'nope'"}});
  cases.push_back(
      {{"report", "--db", previous_, "--html", dir_.file("adir")}, {"--html", "is a directory"}});
  cases.push_back({{"report", "--db", previous_, "--html", dir_.file("nodir/r.html")},
                   {"--html", "no such directory"}});
  // --html onto the results file (or its -wal/-shm, also through a symlink or a hard link)
  // truncated it to 0 bytes.
  std::filesystem::create_symlink(previous_, dir_.file("link.db"));
  std::filesystem::create_hard_link(previous_, dir_.file("hard.db"));
  for (const std::string& html : {previous_, dir_.file("link.db"), dir_.file("hard.db"),
                                  previous_ + "-wal", previous_ + "-shm", previous_ + "-journal"})
    cases.push_back({{"report", "--db", previous_, "--html", html},
                     {"--html", in_quotes(html), "results file"}});
  cases.push_back(
      {{"report", "--db", dir_.file("link.db"), "--html", previous_}, {"--html", "results file"}});
  cases.push_back({{"report", "--db", previous_, "--bogus"}, {"--bogus"}});
  cases.push_back({{"report", "--db", previous_, "--keys", "5"}, {"--keys"}});
  // An output option never replaces a file kvbench did not write: another SQLite file (above
  // all another results file), a text file, a CSV with another header; --force does.
  const std::string other_results = dir_.file("other_results.db");
  std::filesystem::copy_file(previous_, other_results);
  const std::string notes = write_file("notes.txt", "my notes\n");
  std::filesystem::create_directory(dir_.file("csv"));
  const std::string csv = write_file("csv/runs.csv", "a,b\n1,2\n");
  for (const std::string& file : {other_results, other, notes}) {
    const std::string what = file == notes ? "" : "(it is a SQLite database)";
    cases.push_back({{"report", "--db", previous_, "--html", file},
                     {"--html", in_quotes(file), "is not a kvbench HTML report", what, "--force"}});
    cases.push_back({{"report", "--db", previous_, "--json-out", file},
                     {"--json-out", in_quotes(file), "is not a kvbench JSON document", what}});
    cases.push_back({{"run", "--db", kDb, "--target", target_, "--json-out", file},
                     {"--json-out", in_quotes(file), "is not a kvbench JSON document", what}});
  }
  cases.push_back({{"report", "--db", previous_, "--format", "csv", "--out", dir_.file("csv")},
                   {"--out", "runs.csv", "is not kvbench's CSV of that table"}});
  const std::string other_results_bytes = slurp(other_results);
  check_all(cases);
  EXPECT_TRUE(slurp(other_results) == other_results_bytes) << "an output replaced a results file";
  EXPECT_EQ(slurp(notes), "my notes\n");
  EXPECT_EQ(slurp(csv), "a,b\n1,2\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir_.file("csv")),
                          std::filesystem::directory_iterator()),
            1)
      << "--out wrote other tables before it refused one";
  // Its own outputs are replaced; with --force, anything.
  const std::string html = dir_.file("r.html");
  for (int i = 0; i < 2; ++i) {
    auto r = run_kvdrive(dir_, {"report", "--db", previous_, "--html", html});
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  auto forced = run_kvdrive(dir_, {"report", "--db", previous_, "--html", notes, "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(slurp(notes).find("<title>kvbench report"), std::string::npos);
  EXPECT_TRUE(slurp(other) == other_bytes) << "report wrote into a file that is not a results file";
  EXPECT_TRUE(slurp(empty).empty()) << "report wrote into an empty file";
  EXPECT_TRUE(slurp(previous_) == previous_bytes_) << "report --html overwrote the results file";
  EXPECT_FALSE(std::filesystem::exists(dir_.file("missing.db")));
}

// A results file that is not whole: refused before any connection, for run and report alike,
// and left exactly as it was (a dropped table got traffic sent and a run written; a foreign
// -wal was replayed into the file, which then failed integrity_check; a truncated file exited 1).
TEST_F(KvdriveBadInput, DamagedResultsFiles) {
  auto copy_of_previous = [&](const std::string& name, const std::string& sql) {
    std::string path = dir_.file(name);
    std::filesystem::copy_file(previous_, path);
    if (!sql.empty()) Database::open(path).exec(sql);
    return path;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {copy_of_previous("no_table.db", "DROP TABLE store_stats"),
       {"table 'store_stats' is missing"}},
      {copy_of_previous("no_view.db", "DROP VIEW phase_summary"),
       {"view 'phase_summary' is missing"}},
      {copy_of_previous("no_column.db", "ALTER TABLE runs DROP COLUMN name"),
       {"table 'runs'", "'name"}},
      {copy_of_previous("bad_view.db",
                        "DROP VIEW phase_report; CREATE VIEW phase_report AS SELECT 1 AS x"),
       {"view 'phase_report'"}},
      {copy_of_previous("newer.db", "PRAGMA user_version = 999"), {"schema version 999", "newer"}},
      {copy_of_previous("foreign_sqlite.db", "PRAGMA user_version = 0"),
       {"not a kvbench results file"}},
  };
  // Cut short: the header says more pages than the file holds.
  std::string cut = copy_of_previous("truncated.db", "");
  std::filesystem::resize_file(cut, 8192);
  files.push_back({cut, {"truncated"}});
  // A -wal from another results file with another history (this one's own -wal, left by a
  // writer that died, is taken: KvdriveFaults.KilledMidRunLeavesAnIntactFileAndAnIncompleteRun).
  std::string victim = copy_of_previous("victim.db", "");
  {
    std::string donor = dir_.file("donor.db");
    // A file used for a while: each session that grew it moved page 1's change counter on
    // (SQLite cannot tell a -wal's file; with the same counter only quick_check could).
    for (int i = 0; i < 10; ++i) {
      Database db = open_results_db(donor);
      ResultsWriter writer(db);
      writer.end_run(writer.begin_run(RunInfo{std::string(5000, 'd'), "kvdrive run ...", "{}", 2,
                                              "", 1.0, "", 0, 1, "", 0, 0}),
                     "completed", "");
    }
    Database db = open_results_db(donor);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    ResultsWriter writer(db);
    for (int i = 0; i < 20; ++i)
      writer.end_run(writer.begin_run(RunInfo{std::string(2000, 'd'), "kvdrive run ...", "{}", 3,
                                              "", 1.0, "", 0, 1, "", 0, 0}),
                     "completed", "");
    std::filesystem::copy_file(donor + "-wal", victim + "-wal");  // while it is still open
  }
  files.push_back({victim, {"-wal", "belongs to another file"}});
  // The -wal of a file from its creation on (never checkpointed): its change counter can match
  // this file's, its schema cookie starts below it. Replayed, it replaces the whole file.
  std::string victim2 = copy_of_previous("victim2.db", "");
  {
    std::string donor = dir_.file("young.db");
    Database db = Database::open(donor);
    db.exec("PRAGMA wal_autocheckpoint = 0");
    schema::migrate(db);
    ResultsWriter writer(db);
    writer.end_run(
        writer.begin_run(RunInfo{"young", "kvdrive run ...", "{}", 3, "", 1.0, "", 0, 1, "", 0, 0}),
        "completed", "");
    std::filesystem::copy_file(donor + "-wal", victim2 + "-wal");
  }
  files.push_back({victim2, {"-wal", "belongs to another file"}});

  // The same -wal beside a file that does not exist yet, or is empty: SQLite would make the
  // new file out of it.
  std::filesystem::copy_file(victim + "-wal", dir_.file("orphan.db-wal"));
  expect_refused({"run", "--db", dir_.file("orphan.db"), "--target", target_},
                 {"--db", "orphan.db-wal", "move it away"});
  EXPECT_FALSE(std::filesystem::exists(dir_.file("orphan.db")));
  std::ofstream(dir_.file("empty.db")).flush();
  std::filesystem::copy_file(victim + "-wal", dir_.file("empty.db-wal"));
  expect_refused({"run", "--db", dir_.file("empty.db"), "--target", target_},
                 {"--db", "empty.db-wal", "move it away"});
  EXPECT_TRUE(slurp(dir_.file("empty.db")).empty());

  for (const auto& [file, expect] : files) {
    const std::string bytes = slurp(file);
    const std::string wal = std::filesystem::exists(file + "-wal") ? slurp(file + "-wal") : "";
    std::vector<std::string> want = expect;
    want.push_back("--db " + in_quotes(file));
    expect_refused({"run", "--db", file, "--target", target_}, want);
    expect_refused({"report", "--db", file}, want);
    EXPECT_TRUE(slurp(file) == bytes) << file << " changed";
    if (!wal.empty()) {
      EXPECT_TRUE(slurp(file + "-wal") == wal) << file << "-wal changed";
    } else {
      EXPECT_FALSE(std::filesystem::exists(file + "-wal")) << file;
    }
    EXPECT_FALSE(std::filesystem::exists(file + "-shm")) << file;
  }
  // What the foreign -wal would have done: opened, the file is damaged or lost its own run.
  for (const auto& f : {victim, victim2}) {
    bool kept = false;
    try {
      Database replayed = open_results_db(f);
      auto check = replayed.prepare("PRAGMA quick_check(1)");
      auto runs = replayed.prepare("SELECT count(*) FROM runs WHERE name = 'earlier'");
      kept = check.step() && check.column_text(0) == "ok" && runs.step() && runs.column_int(0) == 1;
    } catch (const SqliteError&) {
      // database disk image is malformed
    }
    EXPECT_FALSE(kept) << f << ": the -wal was harmless after all: the test shows nothing";
  }
}

// kvdrive report on a file it cannot write (a read-only filesystem, or a read-only file in a
// read-only directory): read as immutable, nothing created beside it; a file of an older schema
// is upgraded in a copy in memory, the file left as it was.
TEST_F(KvdriveBadInput, ReportReadsAResultsFileOnAReadOnlyFilesystem) {
  const std::string src = dir_.file("src"), ro = dir_.file("ro");
  std::filesystem::create_directory(src);
  std::filesystem::create_directory(ro);
  std::filesystem::copy_file(previous_, src + "/r.db");
  kv::test::make_schema_018(src + "/r.db");
  const std::string bytes = slurp(src + "/r.db");
  const std::string log = dir_.file("report.log");
  int code = 0;
  std::string db;
  if (geteuid() == 0) {  // root writes through permissions: a read-only bind mount instead
    db = ro + "/r.db";
    const std::string script = "mount --bind '" + src + "' '" + ro +
                               "' && mount -o remount,bind,ro '" + ro + "' || exit 77; touch '" +
                               ro + "/probe' 2>/dev/null && exit 78; exec '" + kv::test::kKvdrive +
                               "' report --db '" + db + "'";
    kv::test::Process p({"/usr/bin/unshare", "-m", "/bin/sh", "-c", script}, log);
    code = p.wait(30'000);
    if (code == 77) GTEST_SKIP() << "cannot make a read-only bind mount here: " << slurp(log);
    ASSERT_NE(code, 78) << "the mount is not read-only";
  } else {
    db = src + "/r.db";
    chmod(db.c_str(), 0444);
    chmod(src.c_str(), 0555);
    kv::test::Process p({kv::test::kKvdrive, "report", "--db", db}, log);
    code = p.wait(30'000);
    chmod(src.c_str(), 0755);
  }
  const std::string out = slurp(log);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\"earlier\""), std::string::npos) << out;
  EXPECT_NE(out.find("a copy in memory): upgrading schema from version 18"), std::string::npos)
      << out;
  EXPECT_TRUE(slurp(src + "/r.db") == bytes);
  EXPECT_FALSE(std::filesystem::exists(src + "/r.db-wal"));
  EXPECT_FALSE(std::filesystem::exists(src + "/r.db-shm"));
}

TEST_F(KvdriveBadInput, Subcommands) {
  std::vector<Case> cases = {
      {{},
       {"missing subcommand", "run, report, compare, check, mrc, gen-trace, merge or scenarios"}},
      {{"bogus"}, {"unknown subcommand 'bogus'"}},
      {{"Run"}, {"unknown subcommand 'Run'"}},
      {{"--bogus"}, {"--bogus"}},
      {{"scenarios", "extra"}, {"extra"}},
      {{"scenarios", "--bogus"}, {"--bogus"}},
  };
  check_all(cases);
}

// The same arguments with good values get past the checks and fail only at the unreachable
// store: exit 1, and still nothing written. Proves the rows above fail for their bad value.
TEST_F(KvdriveBadInput, GoodValuesReachTheStore) {
  for (const std::string& db : {previous_, dir_.file("new.db")}) {
    Outcome out =
        kv::test::run_kvdrive(dir_, {"run", "--db", db, "--target", target_, "--keys", "1k",
                                     "--threads", "2", "--timeout", "1s", "--max-errors", "5"});
    EXPECT_EQ(out.exit_code, 1) << out.output;
    EXPECT_NE(out.output.find("cannot connect"), std::string::npos) << out.output;
    EXPECT_TRUE(slurp(previous_) == previous_bytes_);
    EXPECT_FALSE(std::filesystem::exists(dir_.file("new.db")));
  }
}

// A results file kvdrive cannot write: in a directory it may not write, or read-only itself.
// Refused before any connection, saying which and what to do (SQLite's "unable to open
// database file" came after the stores had been reached). As root, run as nobody.
TEST_F(KvdriveBadInput, AResultsFileItCannotWriteIsNamedBeforeAnyConnection) {
  std::filesystem::permissions(dir_.path(), std::filesystem::perms::all);
  const std::string locked = dir_.file("locked"), open = dir_.file("open");
  std::filesystem::create_directory(locked);
  std::filesystem::create_directory(open);
  const std::string frozen = open + "/frozen.db";
  std::filesystem::copy_file(previous_, frozen);
  ::chmod(frozen.c_str(), 0444);
  ::chmod(locked.c_str(), 0555);
  ::chmod(open.c_str(), 0777);
  for (const auto& [db, expect] : std::vector<std::pair<std::string, std::string>>{
           {locked + "/new.db",
            "cannot create it: the directory '" + locked + "' is not writable by this user"},
           {frozen, "is read-only for this user: make it writable (chmod u+w)"}}) {
    std::vector<std::string> args = {kv::test::kKvdrive, "run", "--db", db, "--target", target_};
    if (::geteuid() == 0)
      args.insert(args.begin(),
                  {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"});
    const std::string log = dir_.file(db == frozen ? "frozen.log" : "locked.log");
    kv::test::Process p(args, log);
    EXPECT_EQ(p.wait(30'000), 2) << slurp(log);
    const std::string out = slurp(log);
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_NE(out.find("--db '" + db + "': " + expect), std::string::npos) << out;
  }
  EXPECT_FALSE(std::filesystem::exists(locked + "/new.db"));
  EXPECT_TRUE(slurp(frozen) == previous_bytes_);
}

}  // namespace
}  // namespace kv::drive
