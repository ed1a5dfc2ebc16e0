#include "operator/webhook/admission.hpp"

#include <gtest/gtest.h>
#include <rapidjson/pointer.h>

#include "api/json.hpp"
#include "operator/log/log.hpp"
#include "test_support.hpp"

namespace meshop::webhook {
namespace {

using testing::review_body;

std::string b64decode(const std::string& in) {
  static const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    acc = acc << 6 | static_cast<uint32_t>(alphabet.find(c));
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string str(const rapidjson::Value& doc, const char* pointer) {
  auto* v = rapidjson::Pointer(pointer).Get(doc);
  if (!v) return "<absent>";
  if (v->IsString()) return v->GetString();
  return api::to_json(*v);
}

class AdmissionTest : public ::testing::Test {
 protected:
  AdmissionTest() : metrics(registry), engine(testing::fake_engine()) {
    RevisionConfig c;
    c.revision = "default";
    store.publish(c);
  }

  HttpReply post(const std::string& target, const std::string& body,
                 const std::string& content_type = "application/json") {
    HttpRequest r;
    r.method = "POST";
    r.target = target;
    r.content_type = content_type;
    r.body = body;
    return serve(AdmissionContext{store, engine, &metrics, "default"}, r);
  }

  rapidjson::Document json(const HttpReply& reply) {
    auto doc = api::parse_json(reply.body);
    EXPECT_TRUE(doc.ok()) << reply.body;
    return doc.ok() ? std::move(*doc) : rapidjson::Document();
  }

  double counter(const std::string& name, const std::string& labels = "") {
    std::string text = registry.expose();
    std::string key = name + labels + " ";
    auto at = text.find("\n" + key);
    if (at == std::string::npos) return 0;
    return std::stod(text.substr(at + 1 + key.size()));
  }

  metrics::Registry registry;
  WebhookMetrics metrics;
  Engine engine;
  RevisionStore store;
};

TEST_F(AdmissionTest, V1ReviewIsAnsweredInV1WithUidAndBase64JsonPatch) {
  auto reply = post("/inject", review_body("admission.k8s.io/v1", "uid-1"));
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type, "application/json");
  auto doc = json(reply);
  EXPECT_EQ(str(doc, "/apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(str(doc, "/kind"), "AdmissionReview");
  EXPECT_EQ(str(doc, "/response/uid"), "uid-1");
  EXPECT_EQ(str(doc, "/response/allowed"), "true");
  EXPECT_EQ(str(doc, "/response/patchType"), "JSONPatch");
  EXPECT_EQ(str(doc, "/request"), "<absent>");
  auto patch = api::parse_json(b64decode(str(doc, "/response/patch")));
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(str(*patch, "/0/op"), "add");
  // The pod reached the engine without managedFields and with the request's namespace.
  EXPECT_EQ(str(*patch, "/0/value/managedFields"), "absent");
  EXPECT_EQ(str(*patch, "/0/value/ns"), "ns");
}

TEST_F(AdmissionTest, V1beta1ReviewIsAnsweredInV1beta1) {
  auto doc = json(post("/inject", review_body("admission.k8s.io/v1beta1", "uid-2")));
  EXPECT_EQ(str(doc, "/apiVersion"), "admission.k8s.io/v1beta1");
  EXPECT_EQ(str(doc, "/response/uid"), "uid-2");
  EXPECT_EQ(str(doc, "/response/allowed"), "true");
}

TEST_F(AdmissionTest, SkipIsAllowedWithoutPatchAndCountedByReason) {
  auto doc = json(post("/inject", review_body("admission.k8s.io/v1", "u", "skip")));
  EXPECT_EQ(str(doc, "/response/allowed"), "true");
  EXPECT_EQ(str(doc, "/response/patch"), "<absent>");
  EXPECT_EQ(str(doc, "/response/patchType"), "<absent>");
  EXPECT_EQ(counter("sidecar_injection_skip_total", "{reason=\"label_false\"}"), 1);
  EXPECT_EQ(counter("sidecar_injection_success_total"), 1);
}

TEST_F(AdmissionTest, InjectionFailureIsHttp200NotAllowedWithMessage) {
  auto reply = post("/inject", review_body("admission.k8s.io/v1", "u3", "fail"));
  ASSERT_EQ(reply.status, 200);
  auto doc = json(reply);
  EXPECT_EQ(str(doc, "/response/uid"), "u3");
  EXPECT_EQ(str(doc, "/response/allowed"), "false");
  EXPECT_EQ(str(doc, "/response/status/message"), "template: sidecar: boom");
  EXPECT_EQ(str(doc, "/response/patch"), "<absent>");
  EXPECT_EQ(counter("sidecar_injection_failure_total", "{type=\"template_render\"}"), 1);
}

TEST_F(AdmissionTest, WrongContentTypeIs415EvenWithCharset) {
  for (std::string ct : {"application/json; charset=utf-8", "text/plain", ""}) {
    auto reply = post("/inject", review_body("admission.k8s.io/v1", "u"), ct);
    EXPECT_EQ(reply.status, 415) << ct;
    EXPECT_EQ(reply.body, "invalid Content-Type, want `application/json`\n");
  }
  EXPECT_EQ(counter("sidecar_injection_failure_total", "{type=\"content_type\"}"), 3);
  EXPECT_EQ(counter("sidecar_injection_requests_total"), 3);
  EXPECT_EQ(counter("sidecar_injection_success_total"), 0);
}

TEST_F(AdmissionTest, EmptyBodyIs400NoBodyFoundBeforeContentTypeCheck) {
  auto reply = post("/inject", "", "text/plain");
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.body, "no body found\n");
}

TEST_F(AdmissionTest, OversizedBodyIs400) {
  HttpRequest r;
  r.target = "/inject";
  r.content_type = "application/json";
  r.body_too_large = true;
  auto reply = serve(AdmissionContext{store, engine, &metrics, "default"}, r);
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.body, "Request entity too large: limit is 6291456\n");
}

TEST_F(AdmissionTest, MalformedJsonIsHttp400WithWhereItBroke) {
  auto reply = post("/inject", "{\"kind\": ");
  ASSERT_EQ(reply.status, 400);
  EXPECT_NE(reply.body.find("could not decode AdmissionReview: invalid JSON"), std::string::npos)
      << reply.body;
  EXPECT_EQ(counter("sidecar_injection_failure_total", "{type=\"decode\"}"), 1);
}

TEST_F(AdmissionTest, UnknownApiVersionOrKindIsNotAllowed) {
  for (std::string body :
       {review_body("admission.k8s.io/v2", "u"), std::string(R"({"apiVersion":"v1","kind":"Pod"})"),
        std::string(R"({"request":{}})"), std::string("[1,2]")}) {
    auto doc = json(post("/inject", body));
    EXPECT_EQ(str(doc, "/response/allowed"), "false") << body;
    EXPECT_NE(str(doc, "/response/status/message").find("could not decode AdmissionReview"),
              std::string::npos)
        << body;
  }
}

TEST_F(AdmissionTest, MissingPodObjectIsNotAllowedInRequestVersion) {
  auto doc = json(post(
      "/inject",
      R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","object":"nope"}})"));
  EXPECT_EQ(str(doc, "/apiVersion"), "admission.k8s.io/v1");
  EXPECT_EQ(str(doc, "/response/uid"), "x");
  EXPECT_EQ(str(doc, "/response/allowed"), "false");
  EXPECT_NE(str(doc, "/response/status/message").find("request.object"), std::string::npos);
}

TEST_F(AdmissionTest, PathParametersReachTheEngineAsProxyEnvs) {
  auto doc =
      json(post("/inject/cluster/c1/net/n--slash--1", review_body("admission.k8s.io/v1", "u")));
  auto patch = api::parse_json(b64decode(str(doc, "/response/patch")));
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(str(*patch, "/0/value/envs"), "ISTIO_META_CLUSTER_ID=c1,ISTIO_META_NETWORK=n/1");
}

TEST_F(AdmissionTest, RevisionIsChosenByPathAndUnknownRevisionIsNotAllowed) {
  RevisionConfig canary;
  canary.revision = "canary";
  store.publish(canary);
  auto doc = json(post("/inject/rev/canary", review_body("admission.k8s.io/v1", "u")));
  auto patch = api::parse_json(b64decode(str(doc, "/response/patch")));
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(str(*patch, "/0/value/revision"), "canary");

  store.record_error("nope", "config: templates.sidecar: bad");
  auto denied = json(post("/inject/rev/nope", review_body("admission.k8s.io/v1", "u")));
  EXPECT_EQ(str(denied, "/response/allowed"), "false");
  EXPECT_EQ(str(denied, "/response/status/message"),
            "no injector configuration for revision \"nope\" (last configuration rejected: "
            "config: templates.sidecar: bad)");
}

TEST_F(AdmissionTest, MessagesAreJsonEscapedAsGoDoes) {
  engine.inject = [](const RevisionConfig&, const inject::PodRequest&) {
    inject::InjectResult r;
    r.failure_type = "invalid_annotation";
    r.message = "annotation \"a<b>&c\"\n";
    return r;
  };
  auto reply = post("/inject", review_body("admission.k8s.io/v1", "u"));
  EXPECT_NE(reply.body.find(R"("message":"annotation \"a\u003cb\u003e\u0026c\"\n")"),
            std::string::npos)
      << reply.body;
}

TEST_F(AdmissionTest, EngineExceptionBecomesNotAllowedNotACrash) {
  engine.inject = [](const RevisionConfig&, const inject::PodRequest&) -> inject::InjectResult {
    throw std::runtime_error("bug");
  };
  auto doc = json(post("/inject", review_body("admission.k8s.io/v1", "u")));
  EXPECT_EQ(str(doc, "/response/allowed"), "false");
  EXPECT_EQ(counter("sidecar_injection_failure_total", "{type=\"internal\"}"), 1);
}

TEST_F(AdmissionTest, ReadyFollowsTheDefaultRevisionAndOtherPathsAre404) {
  HttpRequest r;
  r.method = "GET";
  r.target = "/ready";
  EXPECT_EQ(serve(AdmissionContext{store, engine, &metrics, "default"}, r).status, 200);
  EXPECT_EQ(serve(AdmissionContext{store, engine, &metrics, "other"}, r).status, 503);
  r.target = "/metrics";
  EXPECT_EQ(serve(AdmissionContext{store, engine, &metrics, "default"}, r).status, 404);
}

TEST_F(AdmissionTest, EveryRequestIsTimed) {
  (void)post("/inject", review_body("admission.k8s.io/v1", "u"));
  (void)post("/inject", "");
  EXPECT_EQ(metrics::sample_count(metrics.time), 2u);
}

TEST_F(AdmissionTest, ReviewWithoutUidIsRefusedNeverAllowedWithEmptyUid) {
  std::string body = review_body("admission.k8s.io/v1", "");
  for (const std::string& review :
       {body, std::string(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                          R"("request":{"uid":7,"object":{"kind":"Pod"}}})")}) {
    auto doc = json(post("/inject", review));
    EXPECT_EQ(str(doc, "/response/allowed"), "false") << review;
    EXPECT_EQ(str(doc, "/response/patch"), "<absent>") << review;
    EXPECT_NE(str(doc, "/response/status/message").find("request.uid"), std::string::npos)
        << review;
  }
  EXPECT_EQ(counter("sidecar_injection_failure_total", "{type=\"invalid_review\"}"), 2);
}

TEST_F(AdmissionTest, NonPodObjectIsRefusedNamingItsKind) {
  std::string pod = review_body("admission.k8s.io/v1", "u");
  // What the apiserver says it sends (request.kind) and what the object says it is.
  std::string as_request_kind = pod;
  as_request_kind.replace(as_request_kind.find(R"("group":"","version":"v1","kind":"Pod")"),
                          std::string(R"("group":"","version":"v1","kind":"Pod")").size(),
                          R"("group":"apps","version":"v1","kind":"Deployment")");
  std::string as_object_kind = pod;
  as_object_kind.replace(as_object_kind.find(R"("apiVersion":"v1","kind":"Pod")"),
                         std::string(R"("apiVersion":"v1","kind":"Pod")").size(),
                         R"("apiVersion":"apps/v1","kind":"Deployment")");
  for (const auto& review : {as_request_kind, as_object_kind}) {
    auto doc = json(post("/inject", review));
    EXPECT_EQ(str(doc, "/response/uid"), "u");
    EXPECT_EQ(str(doc, "/response/allowed"), "false") << review;
    EXPECT_EQ(str(doc, "/response/patch"), "<absent>") << review;
    EXPECT_NE(str(doc, "/response/status/message").find("Deployment"), std::string::npos)
        << str(doc, "/response/status/message");
  }
  // A pod is still a pod when the object omits its kind (as kube-inject's inputs may).
  std::string bare = pod;
  bare.replace(bare.find(R"("apiVersion":"v1","kind":"Pod",)"),
               std::string(R"("apiVersion":"v1","kind":"Pod",)").size(), "");
  EXPECT_EQ(str(json(post("/inject", bare)), "/response/allowed"), "true");
}

TEST_F(AdmissionTest, MessagesQuotingInputAreTruncatedInReplyAndLog) {
  std::vector<std::string> lines;
  log::set_sink([&lines](std::string_view line) { lines.emplace_back(line); });
  const std::string huge(1 << 20, 'x');
  engine.inject = [&huge](const RevisionConfig&, const inject::PodRequest&) {
    inject::InjectResult r;
    r.failure_type = "invalid_annotation";
    r.message = "annotation sidecar.istio.io/x: invalid value \"" + huge + "\"";
    return r;
  };
  auto engine_reply = post("/inject", review_body("admission.k8s.io/v1", "u"));
  // And one made by the webhook itself from a 1 MiB apiVersion.
  auto decode_reply =
      post("/inject", R"({"kind":"AdmissionReview","apiVersion":")" + huge + R"("})");
  log::set_sink(nullptr);
  for (const auto* reply : {&engine_reply, &decode_reply}) {
    EXPECT_LT(reply->body.size(), kMaxMessageBytes + 512);
    std::string message = str(json(*reply), "/response/status/message");
    EXPECT_LE(message.size(), kMaxMessageBytes);
    EXPECT_NE(message.find("bytes truncated"), std::string::npos) << message.substr(0, 200);
  }
  ASSERT_EQ(lines.size(), 2u);
  for (const auto& line : lines)
    EXPECT_LT(line.size(), kMaxMessageBytes + 512);
}

TEST(TruncateMessage, KeepsShortTextAndCutsLongTextOnACharacterBoundary) {
  EXPECT_EQ(truncate_message("short", 10), "short");
  // "é" is two bytes: a cut inside it moves back before it, for every cut position.
  std::string text = std::string(20, 'a') + "\xc3\xa9" + std::string(100, 'b');
  for (std::size_t limit = 40; limit < 80; ++limit) {
    std::string cut = truncate_message(text, limit);
    EXPECT_LE(cut.size(), limit);
    EXPECT_EQ(cut.rfind("aaaa", 0), 0u);
    EXPECT_NE(cut.find("bytes truncated"), std::string::npos) << cut;
    auto at = cut.find('\xc3');
    if (at != std::string::npos)
      EXPECT_EQ(cut[at + 1], '\xa9') << limit;
    else
      EXPECT_EQ(cut.find('\xa9'), std::string::npos) << limit;
  }
}

TEST(Base64, MatchesRfc4648Vectors) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode(std::string("\xff\xfe", 2)), "//4=");
}

}  // namespace
}  // namespace meshop::webhook
