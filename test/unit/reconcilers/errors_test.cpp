#include "reconcilers/errors.hpp"

#include <gtest/gtest.h>

namespace meshop::reconcilers {
namespace {

using runtime::Action;

kube::Error from(int code, const char* body) {
  return kube::error_from_response("patch istiooperators.install.istio.io ns/iop", code, body);
}

TEST(ErrorPolicy, ResourceVersionRacesRetryAtOnceAndAreNotFailures) {
  // A 409 on an update and a JSON patch whose resourceVersion test failed say the same thing.
  for (const kube::Error& e : {from(409, R"({"kind":"Status","reason":"Conflict","code":409,
                      "message":"the object has been modified"})"),
                               from(422, R"({"kind":"Status","reason":"Invalid","code":422,
                      "message":"the server rejected our request due to an error in our request",
                      "details":{"causes":[{"reason":"UnexpectedServerResponse",
                        "message":"testing value /metadata/resourceVersion failed: test failed"}]}})")}) {
    api::Error err = api_error(e, "adding the finalizer");
    EXPECT_TRUE(err.conflict) << err.message;
    EXPECT_EQ(err.message.rfind("adding the finalizer: patch istiooperators", 0), 0u)
        << err.message;
    EXPECT_EQ(error_action(err).kind, Action::Kind::kConflict);
  }
}

TEST(ErrorPolicy, RetryAfterIsHonouredAndOtherErrorsBackOff) {
  api::Error throttled =
      api_error(from(429, R"({"kind":"Status","reason":"TooManyRequests","code":429,
                             "message":"too many requests","details":{"retryAfterSeconds":7}})"));
  Action a = error_action(throttled);
  EXPECT_EQ(a.kind, Action::Kind::kRetryAfter);
  EXPECT_EQ(a.after, std::chrono::seconds(7));
  EXPECT_NE(a.message.find("too many requests"), std::string::npos);

  api::Error invalid = api_error(
      from(422, R"({"kind":"Status","reason":"Invalid","code":422,"message":"spec.x: Invalid value",
            "details":{"causes":[{"reason":"FieldValueInvalid","field":"spec.x"}]}})"));
  EXPECT_FALSE(invalid.conflict) << invalid.message;
  EXPECT_FALSE(invalid.forbidden) << invalid.message;
  EXPECT_FALSE(invalid.retry_after.has_value());
  EXPECT_EQ(error_action(invalid).kind, Action::Kind::kError) << invalid.message;
}

TEST(ErrorPolicy, ForbiddenIsRetriedSlowlyAndNamesVerbAndResource) {
  api::Error err = api_error(from(403, R"({"kind":"Status","reason":"Forbidden","code":403,
        "message":"resourcequotas is forbidden: User \"system:serviceaccount:meshop-system:meshop\" cannot list resource \"resourcequotas\" in API group \"\" at the cluster scope"})"),
                             "pruning");
  EXPECT_TRUE(err.forbidden);
  EXPECT_FALSE(err.conflict);
  Action a = error_action(err);
  EXPECT_EQ(a.kind, Action::Kind::kForbidden);
  EXPECT_NE(a.message.find("cannot list resource \"resourcequotas\""), std::string::npos)
      << a.message;
}

}  // namespace
}  // namespace meshop::reconcilers
