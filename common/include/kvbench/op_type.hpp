// The operations kvdrive sends, by the names its rows, options and reports use (`op`): the
// memcached protocol's own names; a Redis target sends the equivalent command
// (docs/workloads.md). The order is the schema's: never reorder, only append.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kv {

enum class OpType : uint8_t {
  set = 0,  // SET
  get,      // GET
  del,      // "delete": DEL
  incr,     // INCR (a counter key)
  decr,     // DECR (a counter key)
  add,      // SET NX
  replace,  // SET XX
  append,   // APPEND
  prepend,  // memcached only
  touch,    // EXPIRE
  // --cache-aside: the set of a key a get just missed, on the same connection, as a cache
  // client fills its cache (SET)
  backfill,
  gets,  // memcached only: a get that also returns the key's cas unique
  // memcached only: a store if the key's cas unique is still the one a gets of this connection
  // returned (--mix cas)
  cas,
  // --multi-key-get N: a get of N keys in one request (memcached `get k1 … kN`, binary getkq
  // for each then noop; Redis MGET); its rows' hits and misses count keys
  mget,
  // Redis only: MSET of --multi-key-get keys, each with its value (--mix mset)
  mset,
  // --command TEMPLATE: a run's own commands (Redis), each its own op named after its command
  // word (set_command_names); up to kMaxCommands
  command0,
  command1,
  command2,
  command3,
  command4,
  command5,
  command6,
  command7,
};
inline constexpr size_t kOpTypes = 23;
inline constexpr size_t kBuiltinOps = 15;  // set .. mset: the ops with fixed names
inline constexpr size_t kMaxCommands = kOpTypes - kBuiltinOps;

constexpr bool op_is_command(OpType op) noexcept {
  return static_cast<size_t>(op) >= kBuiltinOps && static_cast<size_t>(op) < kOpTypes;
}
constexpr OpType command_op(size_t i) noexcept { return static_cast<OpType>(kBuiltinOps + i); }
constexpr size_t command_index(OpType op) noexcept { return static_cast<size_t>(op) - kBuiltinOps; }

// "set", "get", "delete", ...; a command op's registered name ("hset"), or "command1".. before
// one is registered.
const char* op_name(OpType op) noexcept;
// The built-in op named `name` (op_name's spelling); nullopt for any other, commands included.
std::optional<OpType> parse_op_name(std::string_view name) noexcept;
// Names command0, command1, ... for this process's rows (at most kMaxCommands names). Call it
// before any thread that records or writes rows starts: op_name reads the names unlocked.
void set_command_names(const std::vector<std::string>& names);

// A request of `op` carries a value (set, add, replace, append, prepend, backfill, cas).
constexpr bool op_has_value(OpType op) noexcept {
  return op == OpType::set || op == OpType::add || op == OpType::replace || op == OpType::append ||
         op == OpType::prepend || op == OpType::backfill || op == OpType::cas;
}
// It acts on a counter key (incr, decr): "<prefix>~n:<index>", holding a decimal number.
constexpr bool op_on_counter(OpType op) noexcept {
  return op == OpType::incr || op == OpType::decr;
}
// A store that refuses it for want of the key (or, for add, for its presence; for cas, for a
// changed unique) answers a miss: memcached NOT_STORED / EXISTS / NOT_FOUND, Redis nil (add,
// replace, append, prepend, cas).
constexpr bool op_is_conditional_store(OpType op) noexcept {
  return op == OpType::add || op == OpType::replace || op == OpType::append ||
         op == OpType::prepend || op == OpType::cas;
}

}  // namespace kv
