// A request's latency split into its parts (engine/request_stream.hpp split_latency) and the
// bins that keep them by latency (stats PartBins): the parts add up to the latency, whatever
// is known of the request's way.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/request_stream.hpp"
#include "stats/interval_stats.hpp"

namespace kv::drive {
namespace {

RequestRecord split(const Pending& p, const Stamps& s, int64_t done) {
  RequestRecord r{};
  split_latency(p, s, done, &r);
  return r;
}

TEST(LatencySplit, ClosedLoopPartsAddUpFromTheQueueing) {
  Pending p{};
  p.queued_ns = 1'000;
  const auto r = split(p, {1'400, 9'000}, 9'650);
  EXPECT_EQ(r.parts, RequestRecord::kSendKnown | RequestRecord::kArrivalKnown);
  EXPECT_EQ(r.client_send_ns, 400u);
  EXPECT_EQ(r.wire_ns, 7'600u);
  EXPECT_EQ(r.client_recv_ns, 650u);
  EXPECT_EQ(r.queue_ns, 0u);
  EXPECT_EQ(r.client_send_ns + r.wire_ns + r.client_recv_ns, 9'650u - 1'000u);
}

TEST(LatencySplit, RateModeCountsFromTheIntendedTimeAndTheWindowsWaitIsTheQueue) {
  Pending p{};
  p.intended_ns = 1'000;
  p.queued_ns = 50'000;  // left 49 µs late, 40 µs of it with the window full
  p.queue_ns = 40'000;
  const auto r = split(p, {52'000, 60'000}, 61'000);
  EXPECT_EQ(r.queue_ns, 40'000u);
  EXPECT_EQ(r.client_send_ns, 11'000u);  // the rest of intended -> sent
  EXPECT_EQ(r.wire_ns, 8'000u);
  EXPECT_EQ(r.client_recv_ns, 1'000u);
  EXPECT_EQ(r.queue_ns + r.client_send_ns + r.wire_ns + r.client_recv_ns, 61'000u - 1'000u);
}

TEST(LatencySplit, UnknownStampsLeaveThePartsOutAndNoPartIsNegative) {
  Pending p{};
  p.queued_ns = 1'000;
  EXPECT_EQ(split(p, {}, 5'000).parts, 0);       // never known to have left
  const auto tls = split(p, {2'000, 0}, 5'000);  // no receive stamp (TLS)
  EXPECT_EQ(tls.parts, RequestRecord::kSendKnown);
  EXPECT_EQ(tls.client_send_ns, 1'000u);
  // A stamp a hair before the send (two clocks) or after the read: clamped into the request.
  const auto early = split(p, {2'000, 1'990}, 5'000);
  EXPECT_EQ(early.wire_ns, 0u);
  EXPECT_EQ(early.client_recv_ns, 3'000u);
  const auto late = split(p, {2'000, 6'000}, 5'000);
  EXPECT_EQ(late.wire_ns, 3'000u);
  EXPECT_EQ(late.client_recv_ns, 0u);
  // A queue longer than the wait it is part of is cut to it.
  Pending q{};
  q.intended_ns = 1'000;
  q.queued_ns = 3'000;
  q.queue_ns = 9'000;
  const auto c = split(q, {3'000, 4'000}, 4'500);
  EXPECT_EQ(c.queue_ns, 2'000u);
  EXPECT_EQ(c.client_send_ns, 0u);
}

TEST(PartBins, EachLatencyLandsInTheBinWhoseBoundHoldsIt) {
  for (uint64_t ns : {0ull, 1ull, 2ull, 3ull, 4ull, 5ull, 6ull, 7ull, 1000ull, 1499ull, 1536ull,
                      65'535ull, 1'000'000'000ull}) {
    const int b = PartBins::bin_of(ns);
    EXPECT_LE(ns, PartBins::bin_upper_ns(b)) << ns;
    if (b > 0) {
      EXPECT_GT(ns, PartBins::bin_upper_ns(b - 1)) << ns;
    }
  }
  EXPECT_EQ(PartBins::bin_of(uint64_t{1} << 62), PartBins::kBins - 1);
}

TEST(PartBins, APercentilesBinHasTheMeanPartsOfItsRequestsAndMergingAddsThem) {
  PartBins a, b;
  for (int i = 0; i < 98; ++i) a.record(100'000, 0, 10'000, 80'000, 10'000);  // 0.1 ms
  a.record(10'000'000, 0, 9'000'000, 500'000, 500'000);                       // 10 ms, kvdrive's
  b.record(10'500'000, 0, 9'500'000, 500'000, 500'000);
  a.merge(b);
  EXPECT_EQ(a.count(), 100u);
  const PartBins::Bin* p50 = a.at_quantile(0.5);
  ASSERT_NE(p50, nullptr);
  EXPECT_EQ(p50->count, 98u);
  const PartBins::Bin* p99 = a.at_quantile(0.99);
  ASSERT_NE(p99, nullptr);
  EXPECT_EQ(p99->count, 2u);
  EXPECT_EQ(p99->client_send_ns, 18'500'000u);
  EXPECT_EQ(p99->client_send_ns + p99->wire_ns + p99->client_recv_ns + p99->queue_ns,
            p99->latency_ns);
  EXPECT_EQ(PartBins{}.at_quantile(0.99), nullptr);
}

}  // namespace
}  // namespace kv::drive
