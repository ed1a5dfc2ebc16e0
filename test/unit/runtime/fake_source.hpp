// A scripted ListWatch for informer tests: each list()/watch() call consumes the next
// scripted answer; a watch stream replays its scripted events and then waits (on the
// ManualClock's timer machinery) until the test pushes more or closes it.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operator/runtime/clock.hpp"
#include "operator/runtime/list_watch.hpp"

namespace meshop::runtime::testing {

inline rapidjson::Document make_obj(const std::string& ns, const std::string& name,
                                    const std::string& rv) {
  rapidjson::Document d;
  std::string json = R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name +
                     R"(","resourceVersion":")" + rv + R"("}})";
  d.Parse(json.c_str());
  return d;
}

inline rapidjson::Document make_bookmark(const std::string& rv) {
  rapidjson::Document d;
  d.Parse((R"({"kind":"ConfigMap","metadata":{"resourceVersion":")" + rv + R"("}})").c_str());
  return d;
}

class FakeStream final : public WatchStream {
 public:
  FakeStream(Clock& clock, boost::asio::any_io_executor ex) : wake_(clock.make_timer(ex)) {}

  void push(WatchNext n) {
    script_.push_back(std::move(n));
    wake_->cancel();
  }
  boost::asio::awaitable<WatchNext> next() override {
    while (script_.empty() && !closed_) {
      wake_->expires_never();
      co_await wake_->wait();
    }
    if (closed_ && script_.empty()) co_return WatchNext::fail(api::Error{"closed"});
    WatchNext n = std::move(script_.front());
    script_.pop_front();
    co_return n;
  }
  void close() override {
    closed_ = true;
    wake_->cancel();
  }

 private:
  std::deque<WatchNext> script_;
  std::unique_ptr<Timer> wake_;
  bool closed_ = false;
};

class FakeSource final : public ListWatch {
 public:
  FakeSource(Clock& clock, boost::asio::any_io_executor ex) : clock_(clock), ex_(std::move(ex)) {}

  void script_list(api::Error e) {
    Scripted s;
    s.error = std::move(e);
    lists_.push_back(std::move(s));
  }
  void script_list(std::string rv, std::vector<rapidjson::Document> items) {
    Scripted s;
    s.rv = std::move(rv);
    s.items = std::move(items);
    lists_.push_back(std::move(s));
  }
  // Scripts a successful watch open; returns the stream so the test can push events.
  FakeStream* script_watch() {
    auto s = std::make_unique<FakeStream>(clock_, ex_);
    FakeStream* raw = s.get();
    watches_.emplace_back(std::move(s));
    return raw;
  }
  void script_watch_error(api::Error e) { watches_.emplace_back(std::move(e)); }

  boost::asio::awaitable<api::Result<ListResult>> list(std::string rv,
                                                       const ItemPreparer& prepare) override {
    list_rvs.push_back(rv);
    if (lists_.empty()) {
      ADD_FAILURE() << "unscripted list(" << rv << ")";
      co_return api::Error{"unscripted"};
    }
    Scripted s = std::move(lists_.front());
    lists_.pop_front();
    if (s.error) co_return *s.error;
    ListResult r;
    r.resource_version = s.rv;
    for (const auto& item : s.items)
      r.items.push_back(prepare(item));
    co_return r;
  }
  boost::asio::awaitable<api::Result<std::unique_ptr<WatchStream>>> watch(
      std::string rv, int timeout_seconds) override {
    watch_rvs.push_back(rv);
    watch_timeouts.push_back(timeout_seconds);
    if (watches_.empty()) {
      ADD_FAILURE() << "unscripted watch(" << rv << ")";
      co_return api::Error{"unscripted"};
    }
    auto r = std::move(watches_.front());
    watches_.pop_front();
    co_return r;
  }

  std::vector<std::string> list_rvs;
  std::vector<std::string> watch_rvs;
  std::vector<int> watch_timeouts;

 private:
  struct Scripted {
    std::optional<api::Error> error;
    std::string rv;
    std::vector<rapidjson::Document> items;
  };
  Clock& clock_;
  boost::asio::any_io_executor ex_;
  std::deque<Scripted> lists_;
  std::deque<api::Result<std::unique_ptr<WatchStream>>> watches_;
};

}  // namespace meshop::runtime::testing
