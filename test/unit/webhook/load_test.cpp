// The webhook under load while everything that changes at run time changes at once: eight
// clients (fresh and keep-alive connections) send reviews of identical and of distinct pods
// to a four-thread server with the real engine and memoized answers, while a control thread
// publishes new configurations of the revision (each stamps its generation into the proxy's
// environment), reloads the serving certificate and renders /metrics. Every answer must be 200
// with its own uid, allowed, and a patch of one of the configurations published so far; a
// memoized answer never outlives its configuration (after the last publish, every answer is
// the last configuration's). hack/sanitize.sh runs this under ThreadSanitizer, where any data
// race fails it; in the normal build it is a quick concurrency test.
#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "api/base64.hpp"
#include "api/json.hpp"
#include "operator/webhook/server.hpp"
#include "test/support/chart_set_sources.hpp"
#include "test_support.hpp"

namespace meshop::webhook {
namespace {

using namespace std::chrono_literals;

std::string review(const std::string& uid, const std::string& pod_name) {
  std::string name =
      pod_name.empty() ? R"("generateName":"web-5d9c-")" : R"("name":")" + pod_name + R"(")";
  return R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":")" +
         uid + R"(","kind":{"group":"","version":"v1","kind":"Pod"},"namespace":"apps",)" +
         R"("operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod","metadata":{)" + name +
         R"(,"labels":{"app":"web"},"annotations":{"sidecar.istio.io/inject":"true"},)" +
         R"("ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d9c",)" +
         R"("uid":"r1","controller":true}]},"spec":{"containers":[{"name":"web",)" +
         R"("image":"nginx:1.25","ports":[{"containerPort":80}]}]}}}})";
}

// The configuration generation an answer's patch was rendered from (-1: no patch / not ours).
int generation_of(const std::string& body, const std::string& uid, std::string* why) {
  auto doc = api::parse_json(body);
  if (!doc.ok()) return *why = "not JSON: " + body.substr(0, 200), -1;
  if (api::string_at(*doc, {"response", "uid"}) != uid) return *why = "uid not " + uid, -1;
  const api::Value* allowed = api::find(*doc, "/response/allowed");
  if (allowed == nullptr || !allowed->IsBool() || !allowed->GetBool())
    return *why = "not allowed: " + body.substr(0, 300), -1;
  auto patch = api::base64_decode(api::string_at(*doc, {"response", "patch"}));
  if (!patch) return *why = "no patch", -1;
  // proxyMetadata LOAD_GENERATION becomes an env var of istio-proxy: {"name":..,"value":"N"}.
  std::string key = R"("name":"LOAD_GENERATION","value":")";
  auto at = patch->find(key);
  if (at == std::string::npos) return *why = "no LOAD_GENERATION in the patch", -1;
  return std::stoi(patch->substr(at + key.size()));
}

TEST(WebhookLoad, AnswersStayRightWhileConfigurationAndCertificateChange) {
  metrics::Registry registry;
  WebhookMetrics metrics(registry);
  std::string dir = testing::make_temp_dir("load");
  testing::TestCert cert_a = testing::make_self_signed("cert-a");
  testing::TestCert cert_b = testing::make_self_signed("cert-b");
  testing::write_file(dir + "/tls.crt", cert_a.cert_pem);
  testing::write_file(dir + "/tls.key", cert_a.key_pem);
  ServingCertificate certificate(dir + "/tls.crt", dir + "/tls.key", &metrics);
  ASSERT_TRUE(certificate.load().ok());

  Engine engine = default_engine();
  RevisionStore store;
  // `announced` is raised before a generation is published, `published` after: an answer may
  // come from a generation between the two while the publish is under way.
  std::atomic<int> published{-1}, announced{-1};
  auto publish = [&](int gen) {
    announced = gen;
    inject::SnapshotSources s = test_support::chart_set_sources();
    s.native_sidecars = inject::NativeSidecars::kDisabled;
    s.mesh =
        "defaultConfig:\n  proxyMetadata:\n    LOAD_GENERATION: \"" + std::to_string(gen) + "\"\n";
    auto snapshot = engine.build(s);
    ASSERT_TRUE(snapshot.ok()) << snapshot.message();
    RevisionConfig c;
    c.revision = "default";
    c.snapshot = std::move(*snapshot);
    c.source = "load-test";
    store.publish(std::move(c));
    published = gen;
  };
  publish(0);

  ServerOptions o;
  o.address = "127.0.0.1:0";
  o.threads = 4;
  WebhookServer server(o, store, certificate, engine, &metrics);
  auto started = server.start();
  ASSERT_TRUE(started.ok()) << started.message();
  const std::vector<std::string> trusted{cert_a.cert_pem, cert_b.cert_pem};

  constexpr int kClients = 8;
  constexpr int kGenerations = 12;
  std::atomic<bool> done{false};
  std::atomic<int> answers{0}, wrong{0}, stale_after_last{0};
  std::mutex why_mu;
  std::string first_why;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::unique_ptr<testing::TlsClient> sticky;
      for (int i = 0; !done; ++i) {
        try {
          if (!sticky || i % 16 == 0)
            sticky = std::make_unique<testing::TlsClient>(server.port(), trusted);
          std::string uid = "c" + std::to_string(c) + "-" + std::to_string(i);
          // Half the pods are identical (a rollout: memoized), half distinct (engine).
          std::string name = i % 2 == 0 ? "" : "web-" + std::to_string(c) + "-" + std::to_string(i);
          int before = published;
          auto r = sticky->post("/inject", "application/json", review(uid, name));
          std::string why;
          int gen = r.status == 200 ? generation_of(r.body, uid, &why) : -1;
          if (r.status != 200) why = "HTTP " + std::to_string(r.status);
          // Answers come from a configuration at least as new as the one published before the
          // request was sent, and never from one not yet published.
          if (gen >= 0 && (gen < before || gen > announced))
            why = "generation " + std::to_string(gen) + " outside [" + std::to_string(before) +
                  ", " + std::to_string(announced.load()) + "]";
          if (!why.empty()) {
            ++wrong;
            std::lock_guard lock(why_mu);
            if (first_why.empty()) first_why = uid + ": " + why;
          } else if (before == kGenerations && gen != kGenerations) {
            ++stale_after_last;
          }
          ++answers;
        } catch (const std::exception& e) {
          ++wrong;
          std::lock_guard lock(why_mu);
          if (first_why.empty()) first_why = std::string("client: ") + e.what();
          sticky.reset();
        }
      }
    });
  }

  auto wait_answers = [&](int n) {
    for (auto until = std::chrono::steady_clock::now() + 120s;
         answers < n && std::chrono::steady_clock::now() < until;)
      std::this_thread::sleep_for(2ms);
  };
  for (int gen = 1; gen <= kGenerations; ++gen) {
    wait_answers(answers + 40);
    publish(gen);
    if (gen == kGenerations / 2) {
      testing::write_file(dir + "/tls.crt", cert_b.cert_pem);
      testing::write_file(dir + "/tls.key", cert_b.key_pem);
      EXPECT_TRUE(certificate.reload_if_changed());
    }
    EXPECT_FALSE(registry.expose().empty());
  }
  wait_answers(answers + 80);
  done = true;
  for (auto& t : clients)
    t.join();
  EXPECT_TRUE(server.stop());

  EXPECT_EQ(wrong.load(), 0) << first_why;
  EXPECT_EQ(stale_after_last.load(), 0);
  EXPECT_GE(answers.load(), kGenerations * 40);
  EXPECT_EQ(metrics.requests.Value(), answers.load());
}

}  // namespace
}  // namespace meshop::webhook
