// What the store codecs (driver/store/) cost per request: writing a command into a connection's
// output buffer, and decoding a reply from bytes as they come off a socket (a batch of 16
// replies fed at once, as a pipelined read would). For RESP also hiredis's reader with its
// default reply objects (a malloc'd redisReply per reply, freed by freeReplyObject), the way
// kvdrive's redis client and hiredis contexts use it, to show what the allocation-free objects
// save. Values of 100 B and 10 KB. Run: ninja -C build codec_bench && build/bench/codec_bench
#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "store/memcached_codec.hpp"
#include "store/resp_codec.hpp"

namespace {

namespace store = kv::drive::store;
namespace mc = kv::drive::store::mc;
constexpr int kBatch = 16;
const std::string kKey = "key:000000012345";

void BM_RespWriteSet(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v'), out;
  out.reserve(value.size() + 128);
  for (auto _ : state) {
    out.clear();
    store::resp::append_set(out, kKey, value);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_RespWriteSet)->Arg(100)->Arg(10240);

void BM_RespWriteGet(benchmark::State& state) {
  std::string out;
  out.reserve(128);
  for (auto _ : state) {
    out.clear();
    store::resp::append_get(out, kKey);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_RespWriteGet);

std::string resp_hits(size_t value_bytes) {
  std::string bytes;
  for (int i = 0; i < kBatch; ++i) store::resp::append_bulk(bytes, std::string(value_bytes, 'v'));
  return bytes;
}

// Per iteration: one GET hit reply decoded (a batch of 16 fed every 16 iterations).
void BM_RespParseHit(benchmark::State& state) {
  std::string batch = resp_hits(static_cast<size_t>(state.range(0)));
  store::RespDecoder d;
  store::RespReply r;
  for (auto _ : state) {
    if (d.next(&r) != store::ReadStatus::reply) {
      d.feed(batch);
      d.next(&r);
    }
    benchmark::DoNotOptimize(r.text.data());
  }
}
BENCHMARK(BM_RespParseHit)->Arg(100)->Arg(10240);

// The same bytes fed as a socket read loop would: 16 KiB per read, drained before the next
// read (measured slower than one feed of the whole batch for 10 KB values: docs/performance.md
// "Codecs").
void BM_RespParseHitReads(benchmark::State& state) {
  std::string batch = resp_hits(static_cast<size_t>(state.range(0)));
  constexpr size_t kRead = 16384;
  store::RespDecoder d;
  store::RespReply r;
  size_t at = 0;
  for (auto _ : state) {
    while (d.next(&r) != store::ReadStatus::reply) {
      size_t n = std::min(kRead, batch.size() - at);
      d.feed(std::string_view(batch).substr(at, n));
      at = (at + n) % batch.size();
    }
    benchmark::DoNotOptimize(r.text.data());
  }
}
BENCHMARK(BM_RespParseHitReads)->Arg(100)->Arg(10240);

void BM_RespParseStatus(benchmark::State& state) {
  std::string batch;
  for (int i = 0; i < kBatch; ++i) batch += "+OK\r\n";
  store::RespDecoder d;
  store::RespReply r;
  for (auto _ : state) {
    if (d.next(&r) != store::ReadStatus::reply) {
      d.feed(batch);
      d.next(&r);
    }
    benchmark::DoNotOptimize(r.kind);
  }
}
BENCHMARK(BM_RespParseStatus);

// The same with hiredis's default reply objects (allocated per reply, freed after use).
void BM_HiredisDefaultParseHit(benchmark::State& state) {
  std::string batch =
      state.range(0) == 0 ? std::string() : resp_hits(static_cast<size_t>(state.range(0)));
  if (batch.empty())
    for (int i = 0; i < kBatch; ++i) batch += "+OK\r\n";
  redisReader* reader = redisReaderCreate();
  reader->maxbuf = 1 << 20;
  for (auto _ : state) {
    void* reply = nullptr;
    redisReaderGetReply(reader, &reply);
    if (reply == nullptr) {
      redisReaderFeed(reader, batch.data(), batch.size());
      redisReaderGetReply(reader, &reply);
    }
    benchmark::DoNotOptimize(static_cast<redisReply*>(reply)->str);
    freeReplyObject(reply);
  }
  redisReaderFree(reader);
}
BENCHMARK(BM_HiredisDefaultParseHit)->Arg(0)->Arg(100)->Arg(10240);

// The floor for any codec that copies a value once: one memcpy of the value.
void BM_Memcpy(benchmark::State& state) {
  std::string from(static_cast<size_t>(state.range(0)), 'v'), to(from.size(), ' ');
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), from.size());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Memcpy)->Arg(100)->Arg(10240);

void BM_McTextWriteSet(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v'), out;
  out.reserve(value.size() + 128);
  for (auto _ : state) {
    out.clear();
    mc::append_text_set(out, kKey, value, 0, 0);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_McTextWriteSet)->Arg(100)->Arg(10240);

void BM_McTextWriteGet(benchmark::State& state) {
  std::string out;
  out.reserve(128);
  for (auto _ : state) {
    out.clear();
    mc::append_text_get(out, kKey);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_McTextWriteGet);

void BM_McTextParseHit(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v'), batch;
  for (int i = 0; i < kBatch; ++i)
    batch +=
        "VALUE " + kKey + " 0 " + std::to_string(value.size()) + "\r\n" + value + "\r\nEND\r\n";
  mc::TextDecoder d;
  mc::TextReply r;
  for (auto _ : state) {
    if (d.next(mc::TextOp::get, &r) != store::ReadStatus::reply) {
      d.feed(batch);
      d.next(mc::TextOp::get, &r);
    }
    benchmark::DoNotOptimize(r.value.data());
  }
}
BENCHMARK(BM_McTextParseHit)->Arg(100)->Arg(10240);

void BM_McTextParseStored(benchmark::State& state) {
  std::string batch;
  for (int i = 0; i < kBatch; ++i) batch += "STORED\r\n";
  mc::TextDecoder d;
  mc::TextReply r;
  for (auto _ : state) {
    if (d.next(mc::TextOp::storage, &r) != store::ReadStatus::reply) {
      d.feed(batch);
      d.next(mc::TextOp::storage, &r);
    }
    benchmark::DoNotOptimize(r.kind);
  }
}
BENCHMARK(BM_McTextParseStored);

void BM_McBinaryWriteSet(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v'), out;
  out.reserve(value.size() + 128);
  uint32_t opaque = 0;
  for (auto _ : state) {
    out.clear();
    mc::append_binary_set(out, kKey, value, opaque++);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_McBinaryWriteSet)->Arg(100)->Arg(10240);

void BM_McBinaryParseHit(benchmark::State& state) {
  std::string value(static_cast<size_t>(state.range(0)), 'v'), batch;
  for (int i = 0; i < kBatch; ++i) {
    std::string h(24, '\0');
    h[0] = static_cast<char>(0x81);
    h[4] = 4;
    uint32_t body = static_cast<uint32_t>(4 + value.size());
    for (int b = 0; b < 4; ++b) h[8 + b] = static_cast<char>((body >> (24 - 8 * b)) & 0xff);
    batch += h + std::string(4, '\0') + value;
  }
  mc::BinaryDecoder d;
  mc::BinaryReply r;
  for (auto _ : state) {
    if (d.next(&r) != store::ReadStatus::reply) {
      d.feed(batch);
      d.next(&r);
    }
    benchmark::DoNotOptimize(r.value.data());
  }
}
BENCHMARK(BM_McBinaryParseHit)->Arg(100)->Arg(10240);

}  // namespace

BENCHMARK_MAIN();
