// The fixture /proc and /sys trees (tests/monitor/fixtures) that the sampler tests
// (sampling_test.cpp) and the target and tracker tests (tracker_test.cpp) read: as they are, or
// as a writable copy a test changes between ticks.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "procfs.hpp"
#include "servers.hpp"

namespace kv::mon {

namespace fs = std::filesystem;

inline const std::string kFixtures = std::string(KV_SOURCE_DIR) + "/tests/monitor/fixtures";

// A writable copy of the fixture tree, for tests that change it between ticks.
struct FixtureCopy {
  kv::test::TempDir dir;
  FixtureCopy() {
    fs::copy(kFixtures, dir.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  std::string proc() const { return dir.path() + "/proc"; }
  std::string sys() const { return dir.path() + "/sys"; }
  void write(const std::string& rel, const std::string& text) const {
    std::ofstream(proc() + "/" + rel) << text;
  }
};

inline ProcFs fixture_fs() { return ProcFs(kFixtures + "/proc", kFixtures + "/sys"); }

}  // namespace kv::mon
