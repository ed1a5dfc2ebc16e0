#include "operator/kube/update.hpp"

#include <random>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace meshop::kube {

Task<Result<rapidjson::Document>> update_with_retry(Client& client, ResourceType type,
                                                    std::string ns, std::string name,
                                                    Mutator mutate, const rapidjson::Value* cached,
                                                    RetryOnConflict policy) {
  rapidjson::Document object;
  if (cached != nullptr) {
    object.CopyFrom(*cached, object.GetAllocator());
  } else {
    auto got = co_await client.get(type, ns, name);
    if (!got) co_return got.error();
    object = std::move(*got);
  }
  std::minstd_rand rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    if (!mutate(object)) co_return std::move(object);
    // Each co_await in its own statement: g++ 12 mis-compiles awaits inside conditions.
    Result<rapidjson::Document> written;
    if (policy.status) {
      written = co_await client.update_status(type, object);
    } else {
      written = co_await client.update(type, object);
    }
    if (written || !written.error().is(ErrorKind::kConflict) || attempt >= policy.attempts)
      co_return written;

    // Someone else wrote first: wait a moment, then start again from the server's copy.
    auto pause = policy.backoff.count() > 0
                     ? std::chrono::microseconds(
                           policy.backoff.count() * 1000 +
                           static_cast<long>(rng() % (policy.backoff.count() * 200 + 1)) -
                           policy.backoff.count() * 100)
                     : std::chrono::microseconds(0);
    boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor);
    timer.expires_after(pause);
    co_await timer.async_wait(boost::asio::use_awaitable);
    auto fresh = co_await client.get(type, ns, name);
    if (!fresh) co_return fresh.error();
    object = std::move(*fresh);
  }
}

}  // namespace meshop::kube
