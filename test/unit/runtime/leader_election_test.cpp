#include "operator/runtime/leader_election.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "test/unit/runtime/test_util.hpp"

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;
using testing::run_ready;
using testing::spawn;
namespace asio = boost::asio;
using LeaseAnswer = api::Result<StoredLease>;
using api::ErrorKind;
using api::make_error;

// An in-memory Lease with resourceVersion checks. Every call yields once (asio::post) so
// concurrent candidates interleave the way real requests do.
class FakeLeaseLock final : public LeaseLock {
 public:
  explicit FakeLeaseLock(Clock& clock, asio::any_io_executor ex)
      : clock_(clock), ex_(ex), hang_(clock.make_timer(ex)) {}

  asio::awaitable<LeaseAnswer> get() override {
    co_await pause();
    if (fail) co_return make_error(ErrorKind::kServiceUnavailable, "injected failure");
    if (!exists) co_return make_error(ErrorKind::kNotFound, "not found");
    co_return StoredLease{record, std::to_string(rv)};
  }
  asio::awaitable<LeaseAnswer> create(const LeaseRecord& r) override {
    co_await pause();
    if (fail) co_return make_error(ErrorKind::kServiceUnavailable, "injected failure");
    if (exists) co_return make_error(ErrorKind::kAlreadyExists, "already exists");
    exists = true;
    record = r;
    ++rv;
    ++writes;
    co_return StoredLease{record, std::to_string(rv)};
  }
  asio::awaitable<LeaseAnswer> update(const LeaseRecord& r, const std::string& v) override {
    co_await pause();
    if (fail) co_return make_error(ErrorKind::kServiceUnavailable, "injected failure");
    if (!exists) co_return make_error(ErrorKind::kNotFound, "not found");
    if (v != std::to_string(rv)) co_return make_error(ErrorKind::kConflict, "conflict");
    record = r;
    ++rv;
    ++writes;
    co_return StoredLease{record, std::to_string(rv)};
  }
  std::string describe() const override { return "kube-system/meshop"; }

  void unhang() {
    hang = false;
    hang_->cancel();
  }

  // Another process writes the lease.
  void external_write(LeaseRecord r) {
    exists = true;
    record = std::move(r);
    ++rv;
  }

  bool exists = false;
  bool fail = false;
  bool hang = false;
  LeaseRecord record;
  int rv = 0;
  int writes = 0;

 private:
  asio::awaitable<void> pause() {
    co_await asio::post(ex_, asio::use_awaitable);
    while (hang) {
      hang_->expires_never();
      co_await hang_->wait();
    }
  }
  Clock& clock_;
  asio::any_io_executor ex_;
  std::unique_ptr<Timer> hang_;
};

struct LeaderTest : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  FakeLeaseLock lock{clock, ioc.get_executor()};

  std::unique_ptr<LeaderElector> make(const std::string& id, RuntimeMetrics* m = nullptr) {
    return std::make_unique<LeaderElector>(lock, clock, ioc.get_executor(),
                                           LeaderElectionConfig{.identity = id}, m);
  }
  bool attempt(LeaderElector& e) {
    std::optional<bool> r;
    spawn(ioc, [&]() -> asio::awaitable<void> { r = co_await e.try_acquire_or_renew(); });
    run_ready(ioc);
    EXPECT_TRUE(r.has_value());
    return r.value_or(false);
  }
  LeaseRecord other(const std::string& renew_time = "2026-01-01T00:00:00.000000Z") {
    return {"other", 15, renew_time, renew_time, 3};
  }
};

TEST_F(LeaderTest, CreatesAMissingLease) {
  auto e = make("me");
  EXPECT_TRUE(attempt(*e));
  EXPECT_TRUE(e->is_leader());
  EXPECT_EQ(lock.record.holder_identity, "me");
  EXPECT_EQ(lock.record.lease_duration_seconds, 15);
  EXPECT_EQ(lock.record.lease_transitions, 0);
  EXPECT_FALSE(lock.record.renew_time.empty());
}

TEST_F(LeaderTest, WaitsOutAnotherHoldersLeaseMeasuredFromLocalObservation) {
  // The remote renewTime is years in the past: a comparison with our clock would call the
  // lease expired at once. Only our own observation counts.
  lock.external_write(other("2001-01-01T00:00:00.000000Z"));
  auto e = make("me");
  EXPECT_FALSE(attempt(*e));
  clock.advance(14s);
  EXPECT_FALSE(attempt(*e)) << "taken before leaseDurationSeconds since we first saw it";
  clock.advance(1s);
  EXPECT_TRUE(attempt(*e));
  EXPECT_EQ(lock.record.holder_identity, "me");
  EXPECT_EQ(lock.record.lease_transitions, 4) << "a change of holder counts a transition";
}

TEST_F(LeaderTest, ARenewingHolderKeepsTheLeaseWhateverItsTimestampsSay) {
  auto e = make("me");
  lock.external_write(other("2099-01-01T00:00:00.000000Z"));
  EXPECT_FALSE(attempt(*e));
  for (int i = 0; i < 10; ++i) {
    clock.advance(10s);
    // The holder renews: the record changes, which restarts our expiry clock.
    lock.external_write(other("2001-01-01T00:00:" + std::to_string(10 + i) + ".000000Z"));
    EXPECT_FALSE(attempt(*e)) << "round " << i;
  }
  clock.advance(15s);  // the holder stopped renewing
  EXPECT_TRUE(attempt(*e));
}

TEST_F(LeaderTest, ReleasedLeaseIsTakenWithoutWaiting) {
  lock.external_write({"", 1, "", "", 3});
  auto e = make("me");
  EXPECT_TRUE(attempt(*e));
}

TEST_F(LeaderTest, TwoCandidatesRacingForAnExpiredLeaseElectExactlyOne) {
  lock.external_write(other());
  auto a = make("a");
  auto b = make("b");
  EXPECT_FALSE(attempt(*a));
  EXPECT_FALSE(attempt(*b));
  clock.advance(16s);
  std::optional<bool> ra, rb;
  spawn(ioc, [&]() -> asio::awaitable<void> { ra = co_await a->try_acquire_or_renew(); });
  spawn(ioc, [&]() -> asio::awaitable<void> { rb = co_await b->try_acquire_or_renew(); });
  run_ready(ioc);
  ASSERT_TRUE(ra && rb);
  EXPECT_NE(*ra, *rb) << "exactly one candidate must win";
  EXPECT_EQ(lock.record.holder_identity, *ra ? "a" : "b");
  EXPECT_EQ(a->is_leader(), *ra);
  EXPECT_EQ(b->is_leader(), *rb);
}

TEST_F(LeaderTest, RenewKeepsTheAcquireTimeAndTransitions) {
  auto e = make("me");
  ASSERT_TRUE(attempt(*e));
  LeaseRecord first = lock.record;
  clock.advance(2s);
  ASSERT_TRUE(attempt(*e));
  EXPECT_EQ(lock.record.acquire_time, first.acquire_time);
  EXPECT_EQ(lock.record.lease_transitions, first.lease_transitions);
  EXPECT_NE(lock.record.renew_time, first.renew_time);
}

struct RenewRun {
  bool acquired = false;
  bool renew_returned = false;
};

TEST_F(LeaderTest, LosesTheLeaseWhenRenewalsFailForTheRenewDeadline) {
  metrics::Registry registry;
  RuntimeMetrics m(registry);
  auto e = make("me", &m);
  RenewRun run;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    run.acquired = co_await e->acquire();
    co_await e->renew();
    run.renew_returned = true;
  });
  run_ready(ioc);
  ASSERT_TRUE(run.acquired);
  EXPECT_EQ(m.leader_status.with({"kube-system/meshop"}).Value(), 1);
  testing::advance_through(clock, ioc, 20s);
  EXPECT_FALSE(run.renew_returned) << "healthy renewals must keep the lease";
  lock.fail = true;
  testing::advance_through(clock, ioc, 9s);
  EXPECT_FALSE(run.renew_returned) << "lost before the 10 s renew deadline";
  EXPECT_TRUE(e->is_leader());
  testing::advance_through(clock, ioc, 3s);
  EXPECT_TRUE(run.renew_returned);
  EXPECT_TRUE(e->lost());
  EXPECT_FALSE(e->is_leader());
  EXPECT_EQ(m.leader_status.with({"kube-system/meshop"}).Value(), 0);
}

TEST_F(LeaderTest, AHangingRenewalStillLosesAtTheDeadline) {
  auto e = make("me");
  RenewRun run;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    run.acquired = co_await e->acquire();
    co_await e->renew();
    run.renew_returned = true;
  });
  run_ready(ioc);
  ASSERT_TRUE(run.acquired);
  lock.hang = true;
  testing::advance_through(clock, ioc, 9s);
  EXPECT_FALSE(run.renew_returned);
  testing::advance_through(clock, ioc, 2s);
  EXPECT_TRUE(run.renew_returned) << "a request that never returns must not keep us leader";
  EXPECT_TRUE(e->lost());
  lock.hang = false;
}

TEST_F(LeaderTest, LosesAtOnceWhenAnotherHolderTookTheLease) {
  auto e = make("me");
  RenewRun run;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    run.acquired = co_await e->acquire();
    co_await e->renew();
    run.renew_returned = true;
  });
  run_ready(ioc);
  ASSERT_TRUE(run.acquired);
  lock.external_write(other());
  testing::advance_through(clock, ioc, 2s);
  EXPECT_TRUE(run.renew_returned);
  EXPECT_TRUE(e->lost());
}

TEST_F(LeaderTest, ReleaseHandsTheLeaseOverWithinASecond) {
  auto a = make("a");
  auto b = make("b");
  ASSERT_TRUE(attempt(*a));
  EXPECT_FALSE(attempt(*b));
  spawn(ioc, [&]() -> asio::awaitable<void> { co_await a->release(); });
  run_ready(ioc);
  EXPECT_EQ(lock.record.holder_identity, "");
  EXPECT_EQ(lock.record.lease_duration_seconds, 1);
  EXPECT_FALSE(a->is_leader());
  EXPECT_TRUE(attempt(*b)) << "an empty holder is free at once";
}

TEST_F(LeaderTest, ReleaseWaitsForARenewalInFlightInsteadOfConflictingWithIt) {
  auto e = make("me");
  RenewRun run;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    run.acquired = co_await e->acquire();
    co_await e->renew();
    run.renew_returned = true;
  });
  run_ready(ioc);
  ASSERT_TRUE(run.acquired);
  lock.hang = true;
  testing::advance_through(clock, ioc, 2s);  // a renewal is now stuck in the API call
  e->stop();
  run_ready(ioc);
  EXPECT_TRUE(run.renew_returned);
  bool released = false;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    co_await e->release();
    released = true;
  });
  run_ready(ioc);
  EXPECT_FALSE(released);
  lock.unhang();  // the renewal lands (new resourceVersion), then the release uses it
  run_ready(ioc);
  EXPECT_TRUE(released);
  EXPECT_EQ(lock.record.holder_identity, "") << "the release must not lose to the renewal";
  EXPECT_EQ(lock.record.lease_duration_seconds, 1);
}

TEST_F(LeaderTest, StopEndsAcquire) {
  lock.external_write(other());
  auto e = make("me");
  std::optional<bool> acquired;
  spawn(ioc, [&]() -> asio::awaitable<void> { acquired = co_await e->acquire(); });
  testing::advance_through(clock, ioc, 6s);
  EXPECT_FALSE(acquired.has_value());
  e->stop();
  run_ready(ioc);
  ASSERT_TRUE(acquired.has_value());
  EXPECT_FALSE(*acquired);
}

TEST(LeaseJson, RoundTripsTheSpec) {
  rapidjson::Document lease;
  lease.Parse(R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"x"},
                  "spec":{"holderIdentity":"old"}})");
  LeaseRecord r{"me", 15, "2026-11-29T18:00:00.000001Z", "2026-11-29T18:00:02.000000Z", 2};
  lease_record_to_json(r, lease);
  EXPECT_EQ(lease_record_from_json(lease), r);
  EXPECT_STREQ(lease["metadata"]["name"].GetString(), "x");
  LeaseRecord released{"", 1, "", "", 2};
  lease_record_to_json(released, lease);
  EXPECT_TRUE(lease["spec"].HasMember("holderIdentity"));
  EXPECT_EQ(lease_record_from_json(lease), released);
}

TEST(MicroTime, FormatsUtcWithMicroseconds) {
  WallTime t = WallTime{} + std::chrono::seconds(1'764'439'200) + std::chrono::microseconds(42);
  EXPECT_EQ(format_micro_time(t), "2025-11-29T18:00:00.000042Z");
}

}  // namespace
}  // namespace meshop::runtime
