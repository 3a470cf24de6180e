// What the store codecs share: the result of one decode step, the verdict a reply gives the
// request it answers, a tiny FIFO of what each in-flight request expects, and the integer
// formatter the command writers use instead of per-request strings. No I/O, no allocation after
// construction.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kv::drive::store {

// One decode step: a whole reply was taken out of the buffered bytes (`reply`), the bytes end
// inside a reply (`need_more`: feed more, nothing was consumed), or the bytes are not the
// protocol (`protocol_error`: sticky; the connection must be dropped and a new decoder made).
enum class ReadStatus : uint8_t { reply, need_more, protocol_error };

// Calls fn(key) for each key of `keys`, separated by single spaces (a multi-key request's, as
// the engine hands them to a codec); false as soon as fn returns false.
template <typename Fn>
bool for_each_key(std::string_view keys, Fn&& fn) {
  for (size_t at = 0; at <= keys.size();) {
    size_t sp = keys.find(' ', at);
    if (sp == std::string_view::npos) sp = keys.size();
    if (!fn(keys.substr(at, sp - at))) return false;
    at = sp + 1;
  }
  return true;
}

// What a request was, so that its reply can be judged (the codecs match replies to requests in
// order; the caller keeps one Op per request in flight, e.g. in an ExpectFifo).
//   get     a get (GET)
//   set     a store answered STORED / +OK (set, add, replace; NOT_STORED or nil: not stored)
//   other   anything answered OK (handshakes: AUTH, SELECT, ...)
//   del     a delete: DELETED / :1 = hit, NOT_FOUND / :0 = miss
//   arith   incr or decr: the new value (a number line / an integer) = hit, NOT_FOUND = miss
//   touch   a touch: TOUCHED / EXPIRE's :1 = hit, NOT_FOUND / :0 = miss
//   append  append or prepend: memcached STORED (NOT_STORED: not stored); Redis APPEND's
//           integer (the new length) = ok
//   command a --command (Redis): a value (bulk, integer, array) = hit, nil (a missing key or
//           field) = miss, a status (+OK) = ok
// mget: a get of several keys in one request (hit: some key found, miss: none; the codecs say
// how many were found).
enum class Op : uint8_t { get, set, other, del, arith, touch, append, command, mget };

// The verdict of one reply for the request it answers.
//   ok          a set stored, or any other command succeeded
//   hit / miss  a get found / did not find its key
//   not_stored  a conditional store was refused (memcached NOT_STORED / EXISTS / NOT_FOUND,
//               Redis SET NX/XX answered nil)
//   error       the server refused the request (an error reply or a failure status)
//   mismatch    a well-formed reply of the wrong kind for the request (e.g. an integer for a
//               GET): request and reply streams are out of step; drop the connection
enum class Verdict : uint8_t { ok, hit, miss, not_stored, error, mismatch };

const char* verdict_name(Verdict v);

// A fixed-capacity FIFO (ring) of T, for the expectations of the requests in flight on one
// connection. Storage is allocated once by the constructor; push/pop never allocate.
// Not thread-safe (one connection, one thread).
template <typename T>
class ExpectFifo {
 public:
  // capacity: the most requests in flight at once (>= 1).
  explicit ExpectFifo(size_t capacity) : ring_(capacity < 1 ? 1 : capacity) {}
  // False (and nothing queued) when full.
  bool push(const T& v) {
    if (size_ == ring_.size()) return false;
    ring_[(head_ + size_) % ring_.size()] = v;
    ++size_;
    return true;
  }
  // The oldest entry; precondition: !empty().
  const T& front() const { return ring_[head_]; }
  // The i-th oldest entry (0 = front); precondition: i < size().
  T& at(size_t i) { return ring_[(head_ + i) % ring_.size()]; }
  // Removes the oldest entry; precondition: !empty().
  void pop() {
    head_ = (head_ + 1) % ring_.size();
    --size_;
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  size_t capacity() const { return ring_.size(); }
  void clear() { head_ = size_ = 0; }

 private:
  std::vector<T> ring_;
  size_t head_ = 0;
  size_t size_ = 0;
};

// Appends the decimal digits of v to out (no allocation once out's capacity suffices).
inline void append_decimal(std::string& out, uint64_t v) {
  char digits[20];
  auto r = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, static_cast<size_t>(r.ptr - digits));
}

}  // namespace kv::drive::store
