#include "operator/webhook/server.hpp"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "test_support.hpp"

namespace meshop::webhook {
namespace {

using testing::review_body;
using testing::TlsClient;

class ServerTest : public ::testing::Test {
 protected:
  ServerTest()
      : metrics(registry),
        dir(testing::make_temp_dir("tls")),
        cert_a(testing::make_self_signed("cert-a")),
        cert_b(testing::make_self_signed("cert-b")),
        certificate(dir + "/tls.crt", dir + "/tls.key", &metrics) {
    testing::write_file(dir + "/tls.crt", cert_a.cert_pem);
    testing::write_file(dir + "/tls.key", cert_a.key_pem);
    RevisionConfig c;
    c.revision = "default";
    store.publish(c);
  }

  void start(unsigned threads = 2) {
    ASSERT_FALSE(certificate.load());
    ServerOptions o;
    o.address = "127.0.0.1:0";
    o.threads = threads;
    server =
        std::make_unique<WebhookServer>(o, store, certificate, testing::fake_engine(), &metrics);
    auto err = server->start();
    ASSERT_FALSE(err) << *err;
  }

  std::vector<std::string> trusted() const { return {cert_a.cert_pem, cert_b.cert_pem}; }

  metrics::Registry registry;
  WebhookMetrics metrics;
  std::string dir;
  testing::TestCert cert_a, cert_b;
  ServingCertificate certificate;
  RevisionStore store;
  std::unique_ptr<WebhookServer> server;
};

TEST_F(ServerTest, AnswersReviewsOverTlsOnOneKeepAliveConnection) {
  start();
  TlsClient client(server->port(), trusted());
  EXPECT_EQ(client.peer_common_name(), "cert-a");
  for (const char* version : {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"}) {
    auto r = client.post("/inject", "application/json", review_body(version, "u1"));
    EXPECT_EQ(r.status, 200);
    EXPECT_TRUE(r.keep_alive);
    EXPECT_NE(r.body.find(std::string("\"apiVersion\":\"") + version + "\""), std::string::npos);
    EXPECT_NE(r.body.find("\"uid\":\"u1\",\"allowed\":true"), std::string::npos) << r.body;
  }
  EXPECT_EQ(client.get("/ready").status, 200);
  EXPECT_EQ(client.get("/nope").status, 404);
  EXPECT_EQ(client.post("/inject", "text/plain", "{}").status, 415);
  EXPECT_EQ(client.post("/inject/cluster/c1", "application/json", "").status, 400);
  EXPECT_TRUE(client.open());
}

TEST_F(ServerTest, OversizedBodyGets400AndTheConnectionCloses) {
  start();
  TlsClient client(server->port(), trusted());
  std::string body(kMaxRequestBodyBytes + 100, ' ');
  auto r = client.post("/inject", "application/json", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, "Request entity too large: limit is 6291456\n");
  EXPECT_FALSE(r.keep_alive);
  // A body of exactly the limit is read and answered (a review padded with spaces).
  TlsClient second(server->port(), trusted());
  std::string review = review_body("admission.k8s.io/v1", "at-limit");
  review.resize(kMaxRequestBodyBytes, ' ');
  auto ok = second.post("/inject", "application/json", review);
  EXPECT_EQ(ok.status, 200);
  EXPECT_NE(ok.body.find("\"uid\":\"at-limit\""), std::string::npos) << ok.body.substr(0, 200);
}

TEST_F(ServerTest, RefusesTlsBelow12) {
  start();
  EXPECT_ANY_THROW(TlsClient(server->port(), trusted(), TLS1_1_VERSION));
}

TEST_F(ServerTest, ConcurrentClientsAllGetTheirOwnAnswers) {
  start(4);
  constexpr int kClients = 8, kRequests = 50;
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c) {
    threads.emplace_back([&, c] {
      TlsClient client(server->port(), trusted());
      for (int i = 0; i < kRequests; ++i) {
        std::string uid = "c" + std::to_string(c) + "-" + std::to_string(i);
        auto r =
            client.post("/inject", "application/json", review_body("admission.k8s.io/v1", uid));
        if (r.status == 200 && r.body.find("\"uid\":\"" + uid + "\"") != std::string::npos) ++good;
      }
    });
  }
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(good.load(), kClients * kRequests);
  EXPECT_EQ(metrics.requests.value(), kClients * kRequests);
}

TEST_F(ServerTest, CertificateReloadMidTrafficFailsNoRequest) {
  start(2);
  std::atomic<bool> done{false};
  std::atomic<int> failures{0}, requests{0};
  std::atomic<int> saw_b{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < 4; ++c) {
    threads.emplace_back([&] {
      // New connections all the time (they pick up the current certificate) and one long-lived
      // connection that started before the reload and must keep working.
      TlsClient sticky(server->port(), trusted());
      while (!done) {
        try {
          TlsClient fresh(server->port(), trusted());
          if (fresh.peer_common_name() == "cert-b") ++saw_b;
          auto r1 =
              fresh.post("/inject", "application/json", review_body("admission.k8s.io/v1", "f"));
          auto r2 =
              sticky.post("/inject", "application/json", review_body("admission.k8s.io/v1", "s"));
          requests += 2;
          if (r1.status != 200 || r2.status != 200) ++failures;
        } catch (const std::exception&) {
          ++failures;
        }
      }
      if (sticky.peer_common_name() != "cert-a") ++failures;
    });
  }
  while (requests < 40)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // A half-written pair (new cert, old key) is refused and the old context stays.
  testing::write_file(dir + "/tls.crt", cert_b.cert_pem);
  EXPECT_FALSE(certificate.reload_if_changed());
  EXPECT_EQ(metrics.certificate_reloads.with({"error"}).value(), 1);
  testing::write_file(dir + "/tls.key", cert_b.key_pem);
  EXPECT_TRUE(certificate.reload_if_changed());
  int at_reload = requests;
  while (requests < at_reload + 40 || saw_b == 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  done = true;
  for (auto& t : threads)
    t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(saw_b.load(), 0);
  TlsClient after(server->port(), trusted());
  EXPECT_EQ(after.peer_common_name(), "cert-b");
}

TEST_F(ServerTest, StopAnswersNothingMoreAndJoins) {
  start();
  auto port = server->port();
  {
    TlsClient idle(port, trusted());  // an idle keep-alive connection must not block stop()
    ASSERT_EQ(idle.get("/ready").status, 200);
    server->stop();
  }
  EXPECT_ANY_THROW(TlsClient(port, trusted()));
}

TEST_F(ServerTest, StartFailsOnBadAddressOrWithoutCertificate) {
  ServerOptions o;
  o.address = "127.0.0.1:0";
  WebhookServer no_cert(o, store, certificate, testing::fake_engine(), &metrics);
  EXPECT_EQ(no_cert.start().value_or(""), "webhook server has no serving certificate");
  ASSERT_FALSE(certificate.load());
  o.address = "127.0.0.1";
  WebhookServer bad(o, store, certificate, testing::fake_engine(), &metrics);
  EXPECT_TRUE(bad.start());
}

TEST(SplitHostPort, AcceptsHostPortForms) {
  auto a = split_host_port(":15017");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "0.0.0.0");
  EXPECT_EQ(a->second, 15017);
  auto b = split_host_port("[::1]:8443");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->first, "::1");
  EXPECT_FALSE(split_host_port("127.0.0.1:x").ok());
  EXPECT_FALSE(split_host_port("127.0.0.1:70000").ok());
}

}  // namespace
}  // namespace meshop::webhook
