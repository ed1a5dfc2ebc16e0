#include "operator/runtime/informer.hpp"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "test/unit/runtime/fake_source.hpp"
#include "test/unit/runtime/test_util.hpp"

namespace meshop::runtime {
namespace {

using namespace std::chrono_literals;
using testing::make_bookmark;
using testing::make_obj;
using testing::run_ready;
using testing::spawn;
namespace asio = boost::asio;
using State = Informer::State;
using Step = Informer::StepResult;

template <class... D>
std::vector<rapidjson::Document> items(D... d) {
  std::vector<rapidjson::Document> v;
  (v.push_back(std::move(d)), ...);
  return v;
}

struct InformerTest : ::testing::Test {
  asio::io_context ioc;
  ManualClock clock;
  testing::FakeSource source{clock, ioc.get_executor()};
  Store store;
  std::vector<std::string> events;
  Informer informer{"test", ioc.get_executor(),
                    clock,  source,
                    store,  {.backoff = {}, .random01 = [] { return 0.0; }}};

  void SetUp() override {
    store.add_handlers({
        .on_add = [this](const Object& o) { events.push_back("add " + object_key(*o)); },
        .on_update = [this](const Object&,
                            const Object& o) { events.push_back("update " + object_key(*o)); },
        .on_delete = [this](const Object& o) { events.push_back("delete " + object_key(*o)); },
    });
  }

  // Runs one step() to completion (the fake source answers without waiting).
  Step step() {
    std::optional<Step> result;
    spawn(ioc, [&]() -> asio::awaitable<void> { result = co_await informer.step(); });
    run_ready(ioc);
    EXPECT_TRUE(result.has_value()) << "step() did not complete";
    return result.value_or(Step::kError);
  }
};

TEST_F(InformerTest, ListsFromCacheThenWatchesFromTheListVersion) {
  source.script_list("10", items(make_obj("ns", "a", "5"), make_obj("ns", "b", "7")));
  source.script_watch();
  EXPECT_EQ(informer.state(), State::kEmpty);
  EXPECT_FALSE(informer.has_synced());
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(source.list_rvs, (std::vector<std::string>{"0"}));
  EXPECT_EQ(informer.state(), State::kListed);
  EXPECT_TRUE(informer.has_synced());
  EXPECT_EQ(store.keys(), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(source.watch_rvs, (std::vector<std::string>{"10"}));
  EXPECT_EQ(informer.state(), State::kWatching);
  ASSERT_EQ(source.watch_timeouts.size(), 1u);
  EXPECT_GE(source.watch_timeouts[0], 300);
  EXPECT_LT(source.watch_timeouts[0], 600);
}

TEST_F(InformerTest, WatchEventsApplyToTheStoreAndAdvanceTheVersion) {
  source.script_list("10", {});
  auto* stream = source.script_watch();
  step();
  step();
  stream->push(WatchNext::event(EventType::kAdded, make_obj("ns", "a", "11")));
  stream->push(WatchNext::event(EventType::kModified, make_obj("ns", "a", "12")));
  stream->push(WatchNext::event(EventType::kAdded, make_obj("ns", "b", "13")));
  stream->push(WatchNext::event(EventType::kDeleted, make_obj("ns", "b", "14")));
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(events,
            (std::vector<std::string>{"add ns/a", "update ns/a", "add ns/b", "delete ns/b"}));
  EXPECT_EQ(informer.resource_version(), "14");
  EXPECT_EQ(store.keys(), (std::vector<std::string>{"ns/a"}));
}

TEST_F(InformerTest, BookmarkOnlyAdvancesTheVersion) {
  source.script_list("10", items(make_obj("ns", "a", "5")));
  auto* stream = source.script_watch();
  step();
  step();
  events.clear();
  stream->push(WatchNext::event(EventType::kBookmark, make_bookmark("99")));
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(informer.resource_version(), "99");
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(store.keys(), (std::vector<std::string>{"ns/a"}));
  EXPECT_EQ(informer.state(), State::kWatching);
}

TEST_F(InformerTest, CleanEndReWatchesFromTheLastVersionWithoutRelisting) {
  source.script_list("10", {});
  auto* first = source.script_watch();
  source.script_watch();
  step();
  step();
  first->push(WatchNext::event(EventType::kAdded, make_obj("ns", "a", "15")));
  first->push(WatchNext::end());
  step();
  clock.advance(300s);  // the server's timeoutSeconds
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(informer.state(), State::kListed);
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(source.watch_rvs, (std::vector<std::string>{"10", "15"}));
  EXPECT_EQ(source.list_rvs.size(), 1u);
  EXPECT_EQ(informer.state(), State::kWatching);
}

TEST_F(InformerTest, AVeryShortEmptyWatchIsAnErrorSoItBacksOff) {
  source.script_list("10", {});
  auto* stream = source.script_watch();
  step();
  step();
  clock.advance(999ms);
  stream->push(WatchNext::end());
  EXPECT_EQ(step(), Step::kError);
  EXPECT_EQ(informer.state(), State::kListed) << "still re-watches from rv, no relist";
}

TEST_F(InformerTest, GoneEventRelistsFromTheLastVersionAndDropsMissedDeletes) {
  source.script_list("10", items(make_obj("ns", "a", "5"), make_obj("ns", "b", "6")));
  auto* stream = source.script_watch();
  step();
  step();
  stream->push(WatchNext::event(EventType::kBookmark, make_bookmark("20")));
  stream->push(
      WatchNext::fail(api::make_error(api::ErrorKind::kGone, "too old resource version: 20 (30)")));
  step();
  EXPECT_EQ(step(), Step::kError);
  EXPECT_TRUE(informer.last_error().is(api::ErrorKind::kGone));
  EXPECT_EQ(informer.state(), State::kEmpty);
  events.clear();
  // While disconnected b was deleted and c created: the relist must converge.
  source.script_list("40", items(make_obj("ns", "a", "5"), make_obj("ns", "c", "35")));
  source.script_watch();
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(source.list_rvs, (std::vector<std::string>{"0", "20"}));
  EXPECT_EQ(store.keys(), (std::vector<std::string>{"ns/a", "ns/c"}));
  std::sort(events.begin(), events.end());
  EXPECT_EQ(events, (std::vector<std::string>{"add ns/c", "delete ns/b"}));
  step();
  EXPECT_EQ(source.watch_rvs.back(), "40");
}

TEST_F(InformerTest, GoneOnListFallsBackToAQuorumRead) {
  source.script_list("10", {});
  source.script_watch_error(api::make_error(api::ErrorKind::kGone, "410 Gone"));
  step();
  EXPECT_EQ(step(), Step::kError);
  EXPECT_EQ(informer.state(), State::kEmpty);
  source.script_list(api::make_error(api::ErrorKind::kGone, "410 Gone"));
  EXPECT_EQ(step(), Step::kError);
  source.script_list("50", {});
  EXPECT_EQ(step(), Step::kProgress);
  EXPECT_EQ(source.list_rvs, (std::vector<std::string>{"0", "10", ""}));
  EXPECT_EQ(informer.resource_version(), "50");
}

TEST_F(InformerTest, OtherWatchErrorsReWatchWithoutRelisting) {
  source.script_list("10", {});
  source.script_watch_error(api::make_error(api::ErrorKind::kTransport, "connection refused"));
  auto* stream = source.script_watch();
  step();
  EXPECT_EQ(step(), Step::kError);
  EXPECT_EQ(informer.state(), State::kListed);
  step();
  stream->push(WatchNext::fail(api::make_error(api::ErrorKind::kTransport, "connection reset")));
  EXPECT_EQ(step(), Step::kError);
  EXPECT_EQ(informer.state(), State::kListed);
  EXPECT_EQ(source.list_rvs.size(), 1u);
}

TEST_F(InformerTest, RunBacksOffBetweenFailuresAndStopEndsIt) {
  source.script_list(api::Error{"apiserver down"});
  source.script_list(api::Error{"apiserver down"});
  source.script_list("10", items(make_obj("ns", "a", "1")));
  auto* stream = source.script_watch();
  bool finished = false;
  spawn(ioc, [&]() -> asio::awaitable<void> {
    co_await informer.run();
    finished = true;
  });
  run_ready(ioc);
  EXPECT_EQ(source.list_rvs.size(), 1u);
  clock.advance(799ms);
  run_ready(ioc);
  EXPECT_EQ(source.list_rvs.size(), 1u) << "retried before the 800 ms backoff";
  clock.advance(1ms);
  run_ready(ioc);
  EXPECT_EQ(source.list_rvs.size(), 2u);
  clock.advance(1599ms);
  run_ready(ioc);
  EXPECT_EQ(source.list_rvs.size(), 2u) << "the second backoff must double";
  clock.advance(1ms);
  run_ready(ioc);
  EXPECT_EQ(source.list_rvs.size(), 3u);
  EXPECT_TRUE(informer.has_synced());
  EXPECT_EQ(informer.state(), State::kWatching);
  stream->push(WatchNext::event(EventType::kAdded, make_obj("ns", "b", "11")));
  run_ready(ioc);
  EXPECT_EQ(store.keys(), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_FALSE(finished);
  informer.stop();
  run_ready(ioc);
  EXPECT_TRUE(finished);
}

}  // namespace
}  // namespace meshop::runtime
