// Owning pointers for hiredis's objects: the deleters, defined once for every file that uses
// hiredis (the store-stats poller's blocking connection, the cluster topology, the RESP codec).
#pragma once

#include <hiredis/hiredis.h>

#include <memory>

namespace kv::drive {

struct RedisContextFree {
  void operator()(redisContext* c) const noexcept { redisFree(c); }
};
struct RedisReplyFree {
  void operator()(void* r) const noexcept { freeReplyObject(r); }
};
struct RedisReaderFree {
  void operator()(redisReader* r) const noexcept { redisReaderFree(r); }
};
using RedisContextPtr = std::unique_ptr<redisContext, RedisContextFree>;
using RedisReplyPtr = std::unique_ptr<redisReply, RedisReplyFree>;
using RedisReaderPtr = std::unique_ptr<redisReader, RedisReaderFree>;

}  // namespace kv::drive
