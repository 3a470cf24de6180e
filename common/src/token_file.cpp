#include "kvbench/token_file.hpp"

#include <sys/stat.h>

#include <fstream>
#include <stdexcept>

#include "kvbench/protocol.hpp"
#include "kvbench/usage_error.hpp"

namespace kv {

TokenFile read_token_file(const std::string& path, const std::string& option) {
  const std::string what = option + " '" + path + "'";
  // A regular file, read no further than a token can reach: /dev/zero or a FIFO would otherwise
  // be read without end.
  struct stat file {};
  if (path.empty() || ::stat(path.c_str(), &file) != 0) throw UsageError(what + ": cannot read it");
  if (!S_ISREG(file.st_mode)) throw UsageError(what + ": not a regular file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + ": cannot read it");
  std::string token(proto::kMaxTokenBytes + 2, '\0');
  in.read(token.data(), static_cast<std::streamsize>(token.size()));
  token.resize(static_cast<size_t>(in.gcount()));
  if (size_t nl = token.find('\n'); nl != std::string::npos) {
    token.resize(nl);
  } else if (token.size() > proto::kMaxTokenBytes) {
    throw UsageError(what + ": the token is longer than " + std::to_string(proto::kMaxTokenBytes) +
                     " bytes");
  }
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t')) {
    token.pop_back();
  }
  if (token.empty()) throw UsageError(what + ": the first line is empty");
  if (token.size() < kMinTokenBytes) {
    throw UsageError(what + ": the token is " + std::to_string(token.size()) + " bytes; at least " +
                     std::to_string(kMinTokenBytes) +
                     " are needed (e.g. openssl rand -hex 16 > FILE)");
  }
  if (token.size() > proto::kMaxTokenBytes) {
    throw UsageError(what + ": the token is longer than " + std::to_string(proto::kMaxTokenBytes) +
                     " bytes");
  }
  TokenFile out{std::move(token), {}};
  struct stat st {};
  if (stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH))) {
    out.warning = what + " is readable by " +
                  std::string((st.st_mode & S_IROTH) ? "anyone" : "its group") + " (mode " +
                  std::to_string((st.st_mode >> 6) & 7) + std::to_string((st.st_mode >> 3) & 7) +
                  std::to_string(st.st_mode & 7) + "): chmod 600 it";
  }
  return out;
}

}  // namespace kv
