#include "operator/certs/certs.hpp"

#include <chrono>

#include <gtest/gtest.h>

namespace meshop::certs {
namespace {

using namespace std::chrono_literals;

// A fixed clock reading, so validity windows are exact.
const TimePoint kNow = Clock::from_time_t(1'800'000'000);

KeyPair make_ca(TimePoint now = kNow, std::chrono::seconds lifetime = 24h * 365) {
  CaOptions o;
  o.lifetime = lifetime;
  auto ca = create_ca(o, now);
  EXPECT_TRUE(ca.ok()) << (ca.ok() ? "" : ca.message());
  return *ca;
}

ServingOptions webhook_names() {
  ServingOptions o;
  o.dns_names = {"meshop-webhook.istio-system.svc",
                 "meshop-webhook.istio-system.svc.cluster.local"};
  o.ip_addresses = {"127.0.0.1", "::1"};
  return o;
}

TEST(Certs, CaIsSelfSignedCaWithRequestedLifetime) {
  KeyPair ca = make_ca();
  auto info = inspect(ca.cert_pem);
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_TRUE(info->is_ca);
  EXPECT_EQ(info->common_name, "meshop-webhook-ca");
  EXPECT_EQ(info->not_before, kNow - kBackdate);
  EXPECT_EQ(info->not_after, kNow + 24h * 365);
  EXPECT_TRUE(check_key_pair(ca).ok());
  EXPECT_TRUE(verify(ca.cert_pem, ca.cert_pem, kNow).ok());
  EXPECT_NE(ca.key_pem.find("BEGIN PRIVATE KEY"), std::string::npos);
}

TEST(Certs, ServingCertCarriesSansAndVerifiesAgainstItsCa) {
  KeyPair ca = make_ca();
  auto leaf = issue_serving(ca, webhook_names(), kNow);
  ASSERT_TRUE(leaf.ok()) << leaf.message();
  auto info = inspect(leaf->cert_pem);
  ASSERT_TRUE(info.ok()) << info.message();
  EXPECT_FALSE(info->is_ca);
  EXPECT_EQ(info->common_name, "meshop-webhook.istio-system.svc");
  EXPECT_EQ(info->dns_names, webhook_names().dns_names);
  EXPECT_EQ(info->ip_addresses, (std::vector<std::string>{"127.0.0.1", "::1"}));
  EXPECT_EQ(info->not_after, kNow + 24h * 90);
  EXPECT_TRUE(check_key_pair(*leaf).ok());
  EXPECT_TRUE(verify(leaf->cert_pem, ca.cert_pem, kNow).ok());
}

TEST(Certs, ServingCertDoesNotVerifyAgainstAnotherCaOrWhenExpired) {
  KeyPair ca = make_ca();
  KeyPair other = make_ca();
  auto leaf = issue_serving(ca, webhook_names(), kNow);
  ASSERT_TRUE(leaf.ok());
  auto wrong = verify(leaf->cert_pem, other.cert_pem, kNow);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("does not verify"), std::string::npos) << wrong.message();
  EXPECT_FALSE(verify(leaf->cert_pem, ca.cert_pem, kNow + 24h * 91).ok());
  EXPECT_FALSE(verify(leaf->cert_pem, ca.cert_pem, kNow - 1h).ok());
}

TEST(Certs, ServingLifetimeIsCappedByTheCa) {
  KeyPair ca = make_ca(kNow, 24h * 10);
  auto leaf = issue_serving(ca, webhook_names(), kNow);
  ASSERT_TRUE(leaf.ok());
  EXPECT_EQ(inspect(leaf->cert_pem)->not_after, kNow + 24h * 10);
  auto late = issue_serving(ca, webhook_names(), kNow + 24h * 11);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.message().find("expired"), std::string::npos);
}

TEST(Certs, RenewAtTwoThirdsOfLifetime) {
  CertInfo info;
  info.not_before = kNow;
  info.not_after = kNow + 90h;
  EXPECT_EQ(info.renew_at(), kNow + 60h);
}

TEST(Certs, BadInputIsAnErrorNamingIt) {
  KeyPair ca = make_ca();
  auto bad_pem = inspect("not a certificate");
  ASSERT_FALSE(bad_pem.ok());
  EXPECT_NE(bad_pem.message().find("certificate"), std::string::npos);

  ServingOptions no_names;
  EXPECT_FALSE(issue_serving(ca, no_names, kNow).ok());
  ServingOptions bad_ip = webhook_names();
  bad_ip.ip_addresses = {"1.2.3"};
  auto r = issue_serving(ca, bad_ip, kNow);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("1.2.3"), std::string::npos);
  ServingOptions bad_dns = webhook_names();
  bad_dns.dns_names = {"a,DNS:evil.example"};
  EXPECT_FALSE(issue_serving(ca, bad_dns, kNow).ok());

  KeyPair mismatched{ca.cert_pem, make_ca().key_pem};
  EXPECT_FALSE(check_key_pair(mismatched).ok());
  EXPECT_FALSE(issue_serving(mismatched, webhook_names(), kNow).ok());
}

TEST(Certs, MergedBundleKeepsValidPreviousCasOnceAndDropsExpired) {
  KeyPair old_ca = make_ca(kNow - 24h * 300, 24h * 365);
  KeyPair expired_ca = make_ca(kNow - 24h * 30, 24h * 10);
  KeyPair new_ca = make_ca();
  std::string previous = old_ca.cert_pem + expired_ca.cert_pem + "garbage\n";

  std::string bundle = merge_bundle(new_ca.cert_pem, previous, kNow);
  auto certs = inspect_bundle(bundle);
  ASSERT_TRUE(certs.ok()) << certs.message();
  ASSERT_EQ(certs->size(), 2u);
  EXPECT_EQ((*certs)[0].sha256_fingerprint_hex, inspect(new_ca.cert_pem)->sha256_fingerprint_hex);
  EXPECT_EQ((*certs)[1].sha256_fingerprint_hex, inspect(old_ca.cert_pem)->sha256_fingerprint_hex);

  // A serving certificate from either CA verifies against the merged bundle (the overlap).
  auto old_leaf = issue_serving(old_ca, webhook_names(), kNow);
  auto new_leaf = issue_serving(new_ca, webhook_names(), kNow);
  EXPECT_TRUE(verify(old_leaf->cert_pem, bundle, kNow).ok());
  EXPECT_TRUE(verify(new_leaf->cert_pem, bundle, kNow).ok());

  // Merging again is stable: the current CA is not duplicated.
  EXPECT_EQ(inspect_bundle(merge_bundle(new_ca.cert_pem, bundle, kNow))->size(), 2u);
}

}  // namespace
}  // namespace meshop::certs
