#include "reconcilers/errors.hpp"

#include <gtest/gtest.h>

#include "operator/kube/error.hpp"

namespace meshop::reconcilers {
namespace {

using runtime::Action;

kube::Error from(int code, const char* body, std::string_view retry_after_header = {}) {
  return kube::error_from_response("patch istiooperators.install.istio.io ns/iop", code, body,
                                   retry_after_header);
}

// The layers between the client and the controller add context (the reconciler's step, the
// object); none of them may lose what chooses the requeue.
api::Error through_layers(api::Error e) {
  api::Result<int> from_client = std::move(e);
  api::Result<std::string> step = api::with_context("adding the finalizer", from_client.error());
  api::Status pass = api::with_context("IstioOperator ns/iop", std::move(step).error());
  return pass.error();
}

TEST(ErrorPolicy, ResourceVersionRacesRetryAtOnceAndAreNotFailures) {
  // A 409 on an update and a JSON patch whose resourceVersion test failed say the same thing.
  for (const kube::Error& e : {from(409, R"({"kind":"Status","reason":"Conflict","code":409,
                      "message":"the object has been modified"})"),
                               from(422, R"({"kind":"Status","reason":"Invalid","code":422,
                      "message":"the server rejected our request due to an error in our request",
                      "details":{"causes":[{"reason":"UnexpectedServerResponse",
                        "message":"testing value /metadata/resourceVersion failed: test failed"}]}})")}) {
    api::Error err = api::with_context("adding the finalizer", e);
    EXPECT_TRUE(err.conflict()) << err.message;
    EXPECT_EQ(err.message.rfind("adding the finalizer: patch istiooperators", 0), 0u)
        << err.message;
    EXPECT_EQ(error_action(err).kind, Action::Kind::kConflict);
  }
}

TEST(ErrorPolicy, ConflictFromTheServerKeepsKindStatusAndReasonToTheController) {
  api::Error err = through_layers(from(
      409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,
      "message":"Operation cannot be fulfilled on istiooperators.install.istio.io \"iop\": the object has been modified; please apply your changes to the latest version and try again",
      "details":{"name":"iop","group":"install.istio.io","kind":"istiooperators"}})"));
  EXPECT_EQ(err.kind, api::ErrorKind::kConflict);
  EXPECT_EQ(err.http_status, 409);
  EXPECT_EQ(err.reason, "Conflict");
  EXPECT_FALSE(err.retry_after.has_value());
  EXPECT_EQ(err.message.rfind("IstioOperator ns/iop: adding the finalizer: patch ", 0), 0u)
      << err.message;
  Action a = error_action(err);
  EXPECT_EQ(a.kind, Action::Kind::kConflict);
  EXPECT_EQ(a.message, err.message);
}

TEST(ErrorPolicy, TooManyRequestsKeepsRetryAfterToTheController) {
  // The Retry-After header (what an apiserver's priority and fairness sends with a 429).
  api::Error header =
      through_layers(from(429, R"({"kind":"Status","apiVersion":"v1","status":"Failure",
      "reason":"TooManyRequests","code":429,"message":"too many requests, please try again later",
      "details":{}})",
                          "4"));
  EXPECT_EQ(header.kind, api::ErrorKind::kTooManyRequests);
  EXPECT_EQ(header.http_status, 429);
  ASSERT_TRUE(header.retry_after.has_value());
  EXPECT_EQ(*header.retry_after, std::chrono::seconds(4));
  Action a = error_action(header);
  EXPECT_EQ(a.kind, Action::Kind::kRetryAfter);
  EXPECT_EQ(a.after, std::chrono::seconds(4));
  EXPECT_NE(a.message.find("too many requests"), std::string::npos) << a.message;

  // Status.details.retryAfterSeconds without a header.
  api::Error details =
      through_layers(from(429, R"({"kind":"Status","reason":"TooManyRequests","code":429,
                             "message":"too many requests","details":{"retryAfterSeconds":7}})"));
  Action b = error_action(details);
  EXPECT_EQ(b.kind, Action::Kind::kRetryAfter);
  EXPECT_EQ(b.after, std::chrono::seconds(7));
}

TEST(ErrorPolicy, ServerErrorsWithoutRetryAfterBackOff) {
  api::Error err = through_layers(from(500, R"({"kind":"Status","reason":"InternalError",
      "code":500,"message":"etcdserver: request timed out"})"));
  EXPECT_EQ(err.kind, api::ErrorKind::kInternalError);
  EXPECT_EQ(err.http_status, 500);
  EXPECT_EQ(error_action(err).kind, Action::Kind::kError);

  api::Error unavailable = through_layers(from(503, "service unavailable", "2"));
  EXPECT_EQ(unavailable.kind, api::ErrorKind::kServiceUnavailable);
  Action a = error_action(unavailable);
  EXPECT_EQ(a.kind, Action::Kind::kRetryAfter);
  EXPECT_EQ(a.after, std::chrono::seconds(2));
}

TEST(ErrorPolicy, ForbiddenIsRetriedSlowlyAndNamesVerbAndResource) {
  api::Error err = through_layers(from(403, R"({"kind":"Status","reason":"Forbidden","code":403,
        "message":"resourcequotas is forbidden: User \"system:serviceaccount:meshop-system:meshop\" cannot list resource \"resourcequotas\" in API group \"\" at the cluster scope",
        "details":{"kind":"resourcequotas"}})"));
  EXPECT_EQ(err.kind, api::ErrorKind::kForbidden);
  EXPECT_EQ(err.http_status, 403);
  EXPECT_EQ(err.reason, "Forbidden");
  EXPECT_TRUE(err.forbidden());
  EXPECT_FALSE(err.conflict());
  Action a = error_action(err);
  EXPECT_EQ(a.kind, Action::Kind::kForbidden);
  EXPECT_NE(a.message.find("cannot list resource \"resourcequotas\""), std::string::npos)
      << a.message;
  // The client's own "<verb> <resource> <object>" prefix survives the context added above it.
  EXPECT_NE(a.message.find("patch istiooperators.install.istio.io ns/iop"), std::string::npos)
      << a.message;
}

TEST(ErrorPolicy, InvalidInputKeepsItsFieldCausesAndIsTerminal) {
  api::Error err = through_layers(from(422, R"({"kind":"Status","reason":"Invalid","code":422,
            "message":"IstioOperator.install.istio.io \"iop\" is invalid: spec.revision: Invalid value: \"Canary\": must be lowercase",
            "details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"Canary\": must be lowercase","field":"spec.revision"},
                                 {"reason":"FieldValueRequired","message":"Required value","field":"spec.profile"}]}})"));
  EXPECT_EQ(err.kind, api::ErrorKind::kInvalid);
  EXPECT_EQ(err.http_status, 422);
  ASSERT_EQ(err.causes.size(), 2u);
  EXPECT_EQ(err.causes[0].type, "FieldValueInvalid");
  EXPECT_EQ(err.causes[0].field, "spec.revision");
  EXPECT_EQ(err.causes[1].field, "spec.profile");
  EXPECT_FALSE(err.conflict()) << err.message;
  EXPECT_FALSE(err.forbidden()) << err.message;
  EXPECT_FALSE(err.retry_after.has_value());
  Action a = error_action(err);
  EXPECT_EQ(a.kind, Action::Kind::kTerminalError) << err.message;
  EXPECT_NE(a.message.find("spec.revision: Invalid value"), std::string::npos) << a.message;

  // meshop's own validation says the same through the kind.
  api::Error own{.message = "spec.version: unknown Istio version \"9.9\"",
                 .kind = api::ErrorKind::kInvalid};
  EXPECT_EQ(error_action(api::with_context("rendering", own)).kind, Action::Kind::kTerminalError);
}

TEST(ErrorPolicy, PlainErrorsBackOff) {
  EXPECT_EQ(error_action(api::Error{"render: template \"x\" failed"}).kind, Action::Kind::kError);
  EXPECT_EQ(error_action(kube::make_error(api::ErrorKind::kTransport, "connection refused")).kind,
            Action::Kind::kError);
}

}  // namespace
}  // namespace meshop::reconcilers
