// Result<T>: a value or an Error, for expected runtime failures (a vanished pid, a refused
// connection). Setup and configuration failures throw instead and are caught once in main.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace kv {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // Precondition: ok(). Throws std::logic_error otherwise (a programming error).
  T& value() & {
    check();
    return std::get<0>(v_);
  }
  const T& value() const& {
    check();
    return std::get<0>(v_);
  }
  T&& value() && {
    check();
    return std::get<0>(std::move(v_));
  }
  // Precondition: !ok().
  const Error& error() const { return std::get<1>(v_); }

 private:
  void check() const {
    if (!ok()) throw std::logic_error("Result::value() on error: " + std::get<1>(v_).message);
  }
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace kv
