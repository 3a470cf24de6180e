// The kvmon wire protocol (docs/protocol.md): newline-terminated text lines, each a verb followed
// by key=value fields whose values are %XX-escaped. Everything here is a pure function over bytes
// (no sockets), so kvmon's server and kvdrive's link share it and it is unit-tested and fuzzed
// alone. Thread-safety: free functions are reentrant; a LineFramer is used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbench/result.hpp"

namespace kv::proto {

inline constexpr int kVersion = 1;
inline constexpr size_t kMaxRequestBytes = 4096;              // one client → server line
inline constexpr size_t kMaxReplyBytes = size_t{256} * 1024;  // one server → client line
inline constexpr size_t kMaxFields = 128;
inline constexpr size_t kMaxNameBytes = 32;  // a verb or a key
inline constexpr size_t kMaxTokenBytes = 1024;

// Error codes carried by `error code=... msg=...` replies.
inline constexpr std::string_view kErrBadRequest = "bad_request";  // malformed line
inline constexpr std::string_view kErrTooLong = "too_long";        // line over the limit
inline constexpr std::string_view kErrUnknown = "unknown_verb";
inline constexpr std::string_view kErrVersion = "version";
inline constexpr std::string_view kErrAuth = "auth";  // hello missing or bad token
inline constexpr std::string_view kErrBusy = "busy";  // too many clients
inline constexpr std::string_view kErrIdle = "idle";  // idle timeout

struct Field {
  std::string key;
  std::string value;  // unescaped bytes
};

struct Message {
  std::string verb;
  std::vector<Field> fields;  // in order; keys are unique

  Message() = default;
  explicit Message(std::string_view v) : verb(v) {}
  Message& add(std::string_view key, std::string_view value);
  Message& add(std::string_view key, const std::string& value) {
    return add(key, std::string_view(value));
  }
  Message& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  Message& add(std::string_view key, int64_t value);
  Message& add(std::string_view key, int value) { return add(key, static_cast<int64_t>(value)); }
  Message& add(std::string_view key, double value);
  // An empty optional adds nothing: an absent field means NULL.
  template <typename T>
  Message& add(std::string_view key, const std::optional<T>& value) {
    return value ? add(key, *value) : *this;
  }

  const std::string* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }
  // nullopt when the field is absent or not a number of that kind.
  std::optional<int64_t> get_int(std::string_view key) const;
  std::optional<double> get_real(std::string_view key) const;
  // "" when absent.
  std::string get_text(std::string_view key) const;
};

// The line for `m`, with its trailing '\n'. Precondition: verb and keys are valid names.
std::string encode(const Message& m);
// Parses one line (without its '\n'; a trailing '\r' is tolerated). Never throws on bad input:
// returns an Error saying what is wrong.
Result<Message> parse_message(std::string_view line);
// `error code=CODE msg=TEXT`.
Message error_message(std::string_view code, std::string_view text);

// Splits a byte stream into lines of at most max_line_bytes (excluding '\n').
class LineFramer {
 public:
  enum class Status { line, need_more, too_long };
  explicit LineFramer(size_t max_line_bytes) : max_(max_line_bytes) {}
  void feed(std::string_view bytes) { buf_.append(bytes); }
  // Takes the next complete line into *line. too_long is sticky: the stream cannot be resynced.
  Status next(std::string* line);
  size_t buffered() const { return buf_.size() - pos_; }

 private:
  size_t max_;
  std::string buf_;
  size_t pos_ = 0;
  bool broken_ = false;
};

// Compares in time that depends only on the lengths, not on where the bytes differ.
bool constant_time_equal(std::string_view a, std::string_view b);

// A network address as people type it: the one parser of kvdrive's target URIs and --monitor,
// kvmon's --listen and --metrics, and the link's peers.
struct HostPort {
  std::string host;  // without brackets for IPv6
  int port = 0;
};
// "host:port", "1.2.3.4:port", "[::1]:port"; with `default_port` (1..65535) also "host" and
// "[::1]", which get that port. One rule set: an IPv6 address needs [brackets]; the host is not
// empty and holds no space or control character; the port is a number from 1 to 65535. The
// error says which rule `text` broke, in a phrase ("missing port in 'x'").
Result<HostPort> split_host_port(std::string_view text, int default_port = 0);

}  // namespace kv::proto
