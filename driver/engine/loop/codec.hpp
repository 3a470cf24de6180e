// One link's wire codec (loop/event_link.hpp): writes its requests into the link's output
// buffer and reads their replies, in the target's protocol: RESP, memcached text or memcached
// binary (the store/ codecs underneath). Sockets are none of its business; a reset() gives a
// new connection a clean decoder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kvbench/op_type.hpp"
#include "store/memcached_codec.hpp"
#include "store/resp_codec.hpp"
#include "workload/workload.hpp"

namespace kv::drive::loop {

enum class Wire { resp, text, binary };

class Codec {
 public:
  // `commands`: the run's --command templates (ops command0..), which RESP links send.
  explicit Codec(Wire wire, const std::vector<CommandTemplate>* commands = nullptr);
  Wire wire() const noexcept { return wire_; }

  // Appends a request of `op` (an mget: `key` holds its keys separated by spaces; a store expiring
  // after ttl_s, 0: never; a touch setting that expiry; incr and decr by 1; a cas with the unique
  // `cas`; a --command with `key` and `value` in its placeholders); false when the protocol cannot
  // carry it (memcached: a key empty, too long, or with spaces in text, a --command; Redis:
  // prepend), and nothing appended.
  bool append(std::string& out, OpType op, std::string_view key, std::string_view value,
              uint32_t ttl_s, uint64_t cas = 0);
  // An mset (RESP only): MSET of the keys in `keys` (separated by spaces), each with its value in
  // `values`; false on another wire, or when the counts differ, and nothing appended.
  bool append_mset(std::string& out, std::string_view keys,
                   const std::vector<std::string_view>& values) const;
  // What the reply to a request of `op` is judged as.
  static store::Op reply_kind(OpType op) noexcept;
  // writes=split: how many bytes of the store of `op` just appended (`appended` of them, its
  // key `key` and value `value`) come before the value's data.
  size_t set_head(OpType op, size_t appended, std::string_view key, std::string_view value) const;

  // Takes what one read returned; false on a protocol error (the link fails).
  bool feed(std::string_view bytes);
  // The next whole reply to a request of kind `op`: `reply` with its verdict and value (valid
  // until the next call), need_more, or protocol_error.
  store::ReadStatus next(store::Op op, store::Verdict* verdict, std::string_view* value);
  // The cas unique of the reply next() returned last (memcached; 0 where it had none).
  uint64_t last_cas() const;
  // Of the reply to an mget that next() returned last: its keys found and their values' bytes.
  struct Multi {
    uint32_t found = 0;
    uint64_t bytes = 0;
  };
  Multi last_multi() const noexcept { return multi_; }
  size_t buffered() const;  // bytes fed and not yet a reply
  void reset();             // a new connection: nothing buffered

 private:
  Wire wire_;
  const std::vector<CommandTemplate>* commands_;
  uint32_t opaque_ = 0;  // memcached binary: each request's, in order
  std::unique_ptr<store::RespDecoder> resp_;
  std::optional<store::mc::TextDecoder> text_;
  std::optional<store::mc::BinaryDecoder> binary_;
  store::RespReply resp_reply_;
  store::mc::TextReply text_reply_;
  store::mc::BinaryReply binary_reply_;
  Multi multi_;
  // A binary mget's replies so far: its getkq hits (and whether one failed) before the noop.
  struct PendingMulti {
    uint32_t found = 0;
    uint64_t bytes = 0;
    bool failed = false;
  } pending_multi_;
  store::ReadStatus next_binary_multi(store::Verdict* verdict, std::string_view* value);
};

}  // namespace kv::drive::loop
