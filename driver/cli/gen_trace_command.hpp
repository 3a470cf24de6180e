// `kvdrive gen-trace`: writes a synthetic cache trace (workload/trace.hpp's format) to standard
// output, for `run --trace` and `mrc --trace` without a production trace. CLI11 stays in the
// .cpp.
#pragma once

#include <string>

#include "workload/trace.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class GenTraceCommand {
 public:
  explicit GenTraceCommand(CLI::App& app);
  GenTraceCommand(const GenTraceCommand&) = delete;
  GenTraceCommand& operator=(const GenTraceCommand&) = delete;

  bool parsed() const;
  void check();  // UsageError
  int execute();

 private:
  CLI::App* sub_ = nullptr;
  std::string requests_ = "100000", keys_ = "10000", zipf_ = "1", writes_ = "0.1", deletes_ = "0",
              value_size_ = "100", rate_ = "10000", ttl_ = "0", seed_ = "1";
  TraceSpec spec_;
  bool cache_aside_ = false;
};

}  // namespace kv::drive
