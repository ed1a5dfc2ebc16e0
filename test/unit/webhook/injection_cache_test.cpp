#include "operator/webhook/injection_cache.hpp"

#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/webhook/admission.hpp"
#include "test_support.hpp"

namespace meshop::webhook {
namespace {

std::shared_ptr<const CachedAnswer> injected(std::string patch64) {
  auto a = std::make_shared<CachedAnswer>();
  a->injected = true;
  a->patch_base64 = std::move(patch64);
  return a;
}

InjectionKey key_for(std::string_view pod, std::string_view revision = "default",
                     std::uint64_t generation = 1, std::string_view ns = "ns",
                     std::string_view path = "/inject") {
  return InjectionCache::key({revision, generation, path, ns, pod});
}

TEST(InjectionCacheKey, EveryInputChangesTheKey) {
  InjectionKey base = key_for("{\"a\":1}");
  EXPECT_EQ(base, key_for("{\"a\":1}"));
  EXPECT_EQ(base.pod_bytes, 7u);
  EXPECT_NE(base, key_for("{\"a\":2}"));
  EXPECT_NE(base, key_for("{\"a\":1}", "canary"));
  EXPECT_NE(base, key_for("{\"a\":1}", "default", 2));
  EXPECT_NE(base, key_for("{\"a\":1}", "default", 1, "other"));
  EXPECT_NE(base, key_for("{\"a\":1}", "default", 1, "ns", "/inject/cluster/c1"));
  // Fields are length-prefixed: moving bytes from one field to the next is another key.
  EXPECT_NE(key_for("x", "default", 1, "ab", "/inject"),
            key_for("x", "default", 1, "a", "b/inject"));
}

TEST(InjectionCache, FindsWhatWasInsertedForTheSameRevisionAndGeneration) {
  InjectionCache cache;
  auto k = key_for("{}");
  EXPECT_EQ(cache.find("default", 1, k), nullptr);
  cache.insert("default", 1, k, injected("cGF0Y2g="));
  auto hit = cache.find("default", 1, k);
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->patch_base64, "cGF0Y2g=");
  EXPECT_EQ(cache.find("default", 1, key_for("{ }")), nullptr);
  auto st = cache.stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 2u);
  EXPECT_EQ(st.entries, 1u);
}

TEST(InjectionCache, ANewerGenerationDropsThatRevisionsEntriesOnly) {
  InjectionCache cache;
  auto a = key_for("{}", "default", 1), b = key_for("{}", "canary", 2);
  cache.insert("default", 1, a, injected("YQ=="));
  cache.insert("canary", 2, b, injected("Yg=="));
  EXPECT_EQ(cache.find("default", 3, key_for("{}", "default", 3)), nullptr);
  EXPECT_EQ(cache.stats().entries, 1u);
  EXPECT_EQ(cache.stats().invalidated, 1u);
  EXPECT_NE(cache.find("canary", 2, b), nullptr);
  // An answer computed on the older configuration, finished after the swap, is not kept.
  cache.insert("default", 1, a, injected("YQ=="));
  EXPECT_EQ(cache.find("default", 1, a), nullptr);
  EXPECT_EQ(cache.stats().entries, 1u);
}

TEST(InjectionCache, EntryBoundEvictsTheLeastRecentlyUsed) {
  InjectionCache cache({.max_entries = 3, .max_bytes = 1 << 20});
  std::vector<InjectionKey> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(key_for("{\"i\":" + std::to_string(i) + "}"));
    cache.insert("default", 1, keys.back(), injected("eA=="));
  }
  ASSERT_NE(cache.find("default", 1, keys[0]), nullptr);  // 0 is now the most recent
  auto k3 = key_for("{\"i\":3}");
  cache.insert("default", 1, k3, injected("eA=="));
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(cache.find("default", 1, keys[1]), nullptr);  // the least recently used
  EXPECT_NE(cache.find("default", 1, keys[0]), nullptr);
  EXPECT_NE(cache.find("default", 1, keys[2]), nullptr);
  EXPECT_NE(cache.find("default", 1, k3), nullptr);
}

TEST(InjectionCache, ByteBoundHoldsAndOversizedAnswersAreNotStored) {
  const std::size_t max_bytes = 64 * 1024;
  InjectionCache cache({.max_entries = 1000, .max_bytes = max_bytes});
  std::string patch(4000, 'p');
  for (int i = 0; i < 100; ++i) {
    cache.insert("default", 1, key_for(std::to_string(i)), injected(patch));
    EXPECT_LE(cache.stats().bytes, max_bytes);
  }
  auto st = cache.stats();
  EXPECT_EQ(st.entries, max_bytes / (patch.size() + InjectionCache::kEntryOverhead + 7));
  EXPECT_GT(st.evictions, 0u);
  EXPECT_NE(cache.find("default", 1, key_for("99")), nullptr);
  EXPECT_EQ(cache.find("default", 1, key_for("0")), nullptr);
  // More than an eighth of the budget: never stored.
  auto big = key_for("big");
  cache.insert("default", 1, big, injected(std::string(max_bytes / 8, 'p')));
  EXPECT_EQ(cache.find("default", 1, big), nullptr);
}

TEST(InjectionCache, ZeroLimitsDisableIt) {
  InjectionCache cache({.max_entries = 0, .max_bytes = 1 << 20});
  EXPECT_FALSE(cache.enabled());
  cache.insert("default", 1, key_for("{}"), injected("eA=="));
  EXPECT_EQ(cache.find("default", 1, key_for("{}")), nullptr);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(InjectionCache, ConcurrentFindAndInsertKeepTheBounds) {
  InjectionCache cache({.max_entries = 50, .max_bytes = 1 << 20});
  std::atomic<int> found{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, &found, t] {
      for (int i = 0; i < 2000; ++i) {
        auto k = key_for(std::to_string((i * 7 + t) % 120));
        if (cache.find("default", 1, k))
          ++found;
        else
          cache.insert("default", 1, k, injected("eA=="));
      }
    });
  }
  for (auto& th : threads)
    th.join();
  auto st = cache.stats();
  EXPECT_LE(st.entries, 50u);
  EXPECT_EQ(st.hits, static_cast<std::uint64_t>(found.load()));
  EXPECT_EQ(st.hits + st.misses, 8000u);
}

// --- request.object's bytes ---------------------------------------------------------------

std::string object_of(const std::string& body) {
  auto r = request_object_range(body);
  if (!r) return "<none>";
  return body.substr(r->first, r->second - r->first);
}

TEST(RequestObjectRange, IsTheObjectsTextExactlyAsSent) {
  std::string pod = R"({ "metadata" : {"name":"a}\"{","labels":{"x":"}"}}, "spec":{"c":[{},[]]} })";
  EXPECT_EQ(object_of(R"({"kind":"AdmissionReview","request":{"uid":"u","object":)" + pod +
                      R"(,"oldObject":{"x":1}}})"),
            pod);
  // Members before and after, nested "object" keys elsewhere, whitespace.
  EXPECT_EQ(object_of(R"({"object":{"no":1},"request":{"x":{"object":{"no":2}},"object" :)" + pod +
                      " }}"),
            pod);
}

TEST(RequestObjectRange, TakesTheFirstMemberAsFindMemberDoes) {
  EXPECT_EQ(object_of(R"({"request":{"object":{"a":1},"object":{"b":2}},"request":{"object":{}}})"),
            R"({"a":1})");
}

TEST(RequestObjectRange, NoneWithoutAnObjectOrValidJson) {
  EXPECT_EQ(object_of(R"({"request":{"object":[1]}})"), "<none>");
  EXPECT_EQ(object_of(R"({"request":{"object":null,"object":{"a":1}}})"), "<none>");
  EXPECT_EQ(object_of(R"({"request":{"uid":"u"}})"), "<none>");
  EXPECT_EQ(object_of(R"({"request":{"object":{"a":)"), "<none>");
  EXPECT_EQ(object_of(R"([{"request":{"object":{}}}])"), "<none>");
  EXPECT_EQ(object_of(""), "<none>");
}

// --- serve() with memoization (fake engine) --------------------------------------------------

class MemoizedServeTest : public ::testing::Test {
 protected:
  MemoizedServeTest() : metrics(registry), engine(testing::fake_engine()) {
    auto inject = engine.inject;
    engine.inject = [this, inject](const RevisionConfig& c, const inject::PodRequest& r) {
      ++engine_calls;
      return inject(c, r);
    };
    engine.memoizable = [this](const RevisionConfig&) { return memoizable; };
    for (const char* rev : {"default", "canary"}) {
      RevisionConfig c;
      c.revision = rev;
      store.publish(c);
    }
  }

  HttpReply post(const std::string& body, const std::string& target = "/inject") {
    HttpRequest r;
    r.method = "POST";
    r.target = target;
    r.content_type = "application/json";
    r.body = body;
    return serve(AdmissionContext{store, engine, &metrics, "default", &cache}, r);
  }
  double counter(const char* result) { return metrics.injection_cache.with({result}).Value(); }

  metrics::Registry registry;
  WebhookMetrics metrics;
  Engine engine;
  RevisionStore store;
  InjectionCache cache;
  int engine_calls = 0;
  bool memoizable = true;
};

std::string with_uid(std::string reply, const std::string& from, const std::string& to) {
  auto at = reply.find("\"uid\":\"" + from + "\"");
  if (at != std::string::npos) reply.replace(at + 7, from.size(), to);
  return reply;
}

TEST_F(MemoizedServeTest, AnIdenticalReviewIsAnsweredFromMemoryWithItsOwnUid) {
  auto first = post(testing::review_body("admission.k8s.io/v1", "u1"));
  auto second = post(testing::review_body("admission.k8s.io/v1", "u2"));
  EXPECT_EQ(engine_calls, 1);
  ASSERT_EQ(second.status, 200);
  EXPECT_NE(second.body.find("\"uid\":\"u2\""), std::string::npos) << second.body;
  EXPECT_EQ(second.body, with_uid(first.body, "u1", "u2"));
  EXPECT_EQ(counter("miss"), 1);
  EXPECT_EQ(counter("hit"), 1);
  EXPECT_EQ(metrics.success.Value(), 2);
  EXPECT_EQ(metrics.requests.Value(), 2);
  // The envelope is the request's: the same pod in a v1beta1 review gets a v1beta1 reply.
  auto beta = post(testing::review_body("admission.k8s.io/v1beta1", "u3"));
  EXPECT_EQ(engine_calls, 1);
  EXPECT_NE(beta.body.find("\"apiVersion\":\"admission.k8s.io/v1beta1\""), std::string::npos);
}

TEST_F(MemoizedServeTest, NamespacesPathsAndRevisionsDoNotShareAnswers) {
  std::string body = testing::review_body("admission.k8s.io/v1", "u1");
  post(body);
  std::string other_ns = body;
  other_ns.replace(other_ns.find("\"namespace\":\"ns\""), 16, "\"namespace\":\"n2\"");
  auto in_other_ns = post(other_ns);
  auto with_envs = post(body, "/inject/cluster/c1");
  auto canary = post(body, "/inject/rev/canary");
  EXPECT_EQ(engine_calls, 4);
  EXPECT_NE(in_other_ns.body, with_uid(post(body).body, "u1", "u1"));
  EXPECT_EQ(engine_calls, 4);  // the first one again: a hit
  auto patch_of = [](const HttpReply& r) {
    auto doc = api::parse_json(r.body);
    return std::string(api::string_at(*doc, {"response", "patch"}));
  };
  EXPECT_NE(patch_of(in_other_ns), patch_of(with_envs));
  EXPECT_NE(patch_of(with_envs), patch_of(canary));
}

TEST_F(MemoizedServeTest, AnotherPodIsAMiss) {
  post(testing::review_body("admission.k8s.io/v1", "u1"));
  std::string body = testing::review_body("admission.k8s.io/v1", "u2");
  body.replace(body.find("app:1"), 5, "app:2");
  post(body);
  EXPECT_EQ(engine_calls, 2);
}

TEST_F(MemoizedServeTest, SkipsAreMemoizedAndCountedEveryTimeFailuresAreNotMemoized) {
  post(testing::review_body("admission.k8s.io/v1", "u1", "skip"));
  auto again = post(testing::review_body("admission.k8s.io/v1", "u2", "skip"));
  EXPECT_EQ(engine_calls, 1);
  EXPECT_NE(again.body.find("\"allowed\":true"), std::string::npos);
  EXPECT_EQ(again.body.find("patch"), std::string::npos);
  EXPECT_EQ(metrics.skip.with({"label_false"}).Value(), 2);

  post(testing::review_body("admission.k8s.io/v1", "u3", "fail"));
  auto failed = post(testing::review_body("admission.k8s.io/v1", "u4", "fail"));
  EXPECT_EQ(engine_calls, 3);
  EXPECT_NE(failed.body.find("boom"), std::string::npos);
  EXPECT_EQ(metrics.failure.with({"template_render"}).Value(), 2);
}

TEST_F(MemoizedServeTest, APublishedConfigurationIsNeverAnsweredFromTheOldOne) {
  auto before = post(testing::review_body("admission.k8s.io/v1", "u1"));
  RevisionConfig c;
  c.revision = "default";
  store.publish(c);
  auto after = post(testing::review_body("admission.k8s.io/v1", "u1"));
  EXPECT_EQ(engine_calls, 2);
  EXPECT_NE(before.body, after.body);  // the fake's patch names the generation
  EXPECT_EQ(cache.stats().invalidated, 1u);
}

TEST_F(MemoizedServeTest, NotMemoizableConfigurationsAlwaysRunTheEngine) {
  memoizable = false;
  post(testing::review_body("admission.k8s.io/v1", "u1"));
  post(testing::review_body("admission.k8s.io/v1", "u2"));
  EXPECT_EQ(engine_calls, 2);
  EXPECT_EQ(counter("hit") + counter("miss"), 0);
}

TEST_F(MemoizedServeTest, BadReviewsAreRefusedBeforeAnyLookup) {
  post(testing::review_body("admission.k8s.io/v1", "u1"));
  std::string not_pod = testing::review_body("admission.k8s.io/v1", "u2");
  not_pod.replace(not_pod.find("\"kind\":\"Pod\"},\"resource\""), 12, "\"kind\":\"Svc\"");
  auto r = post(not_pod);
  EXPECT_NE(r.body.find("\"allowed\":false"), std::string::npos) << r.body;
  EXPECT_EQ(counter("hit"), 0);
}

}  // namespace
}  // namespace meshop::webhook
