#include "operator/kube/error.hpp"

#include <gtest/gtest.h>

namespace meshop::kube {
namespace {

TEST(StatusError, NotFoundIsTypedAndNamesTheObject) {
  Error e =
      error_from_response("get configmaps default/foo", 404,
                          R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
          "message":"configmaps \"foo\" not found","reason":"NotFound",
          "details":{"name":"foo","kind":"configmaps"},"code":404})");
  EXPECT_EQ(e.kind, ErrorKind::kNotFound);
  EXPECT_EQ(e.http_status, 404);
  EXPECT_EQ(e.reason, "NotFound");
  EXPECT_EQ(e.message, "get configmaps default/foo: configmaps \"foo\" not found (NotFound, 404)");
}

TEST(StatusError, AlreadyExistsAndConflictShareA409ButDiffer) {
  Error exists = error_from_response("create configmaps default/a", 409,
                                     R"({"kind":"Status","reason":"AlreadyExists","code":409})");
  Error conflict = error_from_response("update configmaps default/a", 409,
                                       R"({"kind":"Status","reason":"Conflict","code":409,
                                           "message":"the object has been modified"})");
  EXPECT_EQ(exists.kind, ErrorKind::kAlreadyExists);
  EXPECT_EQ(conflict.kind, ErrorKind::kConflict);
  EXPECT_NE(conflict.message.find("the object has been modified"), std::string::npos);
}

TEST(StatusError, InvalidCarriesCauses) {
  Error e = error_from_response("create configmaps default/BAD", 422, R"({
      "kind":"Status","status":"Failure","reason":"Invalid","code":422,
      "message":"ConfigMap \"BAD\" is invalid: metadata.name: Invalid value: \"BAD\"",
      "details":{"name":"BAD","kind":"ConfigMap","causes":[
        {"reason":"FieldValueInvalid","message":"Invalid value: \"BAD\"","field":"metadata.name"},
        {"reason":"FieldValueRequired","message":"Required value","field":"data"}]}})");
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  ASSERT_EQ(e.causes.size(), 2u);
  EXPECT_EQ(e.causes[0].type, "FieldValueInvalid");
  EXPECT_EQ(e.causes[0].field, "metadata.name");
  EXPECT_EQ(e.causes[1].message, "Required value");
}

// A 422 for a JSON patch whose test of /metadata/resourceVersion failed, with jsonpatch's error
// as the cause. kube-apiserver v1.36 sends no cause at all (handlers/patch.go:
// NewGenericServerResponse(422, ..., isUnexpectedResponse=false)); the client reads that one as
// a conflict when its patch tests the resourceVersion (transport_test.cpp).
TEST(StatusError, FailedResourceVersionPatchTestIsAConflictAndSaysWhy) {
  Error e = error_from_response("patch istiooperators.install.istio.io ns/iop", 422, R"({
      "kind":"Status","status":"Failure","reason":"Invalid","code":422,
      "message":"the server rejected our request due to an error in our request",
      "details":{"causes":[{"reason":"UnexpectedServerResponse",
        "message":"testing value /metadata/resourceVersion failed: test failed"}]}})");
  EXPECT_EQ(e.kind, ErrorKind::kConflict);
  EXPECT_EQ(e.reason, "Invalid");
  EXPECT_EQ(e.message,
            "patch istiooperators.install.istio.io ns/iop: the server rejected our request due to "
            "an error in our request: testing value /metadata/resourceVersion failed: test failed "
            "(Invalid, 422)");
}

TEST(StatusError, FailedTestOfAnotherFieldStaysInvalid) {
  Error e = error_from_response("patch configmaps ns/a", 422, R"({
      "kind":"Status","reason":"Invalid","code":422,
      "message":"the server rejected our request due to an error in our request",
      "details":{"causes":[{"reason":"UnexpectedServerResponse",
        "message":"testing value /data/x failed: test failed"}]}})");
  EXPECT_EQ(e.kind, ErrorKind::kInvalid);
  EXPECT_NE(e.message.find("testing value /data/x failed"), std::string::npos);
}

TEST(StatusError, ExpiredReasonIsGone) {
  rapidjson::Document d;
  d.Parse(R"js({"kind":"Status","apiVersion":"v1","status":"Failure",
              "message":"too old resource version: 1 (200)","reason":"Expired","code":410})js");
  Error e = error_from_status_object("watch pods in all namespaces", d);
  EXPECT_EQ(e.kind, ErrorKind::kGone);
  EXPECT_EQ(e.http_status, 410);
  EXPECT_NE(e.message.find("too old resource version"), std::string::npos);
}

TEST(StatusError, GoneCodeWithoutReasonIsGone) {
  rapidjson::Document d;
  d.Parse(R"({"kind":"Status","code":410,"message":"gone"})");
  EXPECT_EQ(error_from_status_object("watch x", d).kind, ErrorKind::kGone);
}

TEST(StatusError, TooManyRequestsRetryAfterFromDetailsAndHeader) {
  Error fromDetails = error_from_response("list pods", 429,
                                          R"({"kind":"Status","reason":"TooManyRequests","code":429,
          "details":{"retryAfterSeconds":3}})");
  EXPECT_EQ(fromDetails.kind, ErrorKind::kTooManyRequests);
  ASSERT_TRUE(fromDetails.retry_after.has_value());
  EXPECT_EQ(*fromDetails.retry_after, std::chrono::seconds(3));
  Error fromHeader = error_from_response("list pods", 429, "", "7");
  ASSERT_TRUE(fromHeader.retry_after.has_value());
  EXPECT_EQ(*fromHeader.retry_after, std::chrono::seconds(7));
}

TEST(StatusError, ForbiddenAndUnauthorized) {
  EXPECT_EQ(error_from_response("get secrets a/b", 403,
                                R"({"kind":"Status","reason":"Forbidden","code":403})")
                .kind,
            ErrorKind::kForbidden);
  EXPECT_EQ(error_from_response("get secrets a/b", 401, "Unauthorized").kind,
            ErrorKind::kUnauthorized);
}

TEST(StatusError, NonStatusBodyFallsBackToHttpCode) {
  Error e = error_from_response("get pods a/b", 503, "<html>upstream down</html>\n");
  EXPECT_EQ(e.kind, ErrorKind::kServiceUnavailable);
  EXPECT_EQ(e.message, "get pods a/b: server returned 503: <html>upstream down</html>");
}

TEST(StatusError, UnknownCodeIsUnknown) {
  EXPECT_EQ(error_from_response("x", 418, "").kind, ErrorKind::kUnknown);
}

TEST(ResultType, HoldsValueOrError) {
  Result<int> ok(5);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 5);
  Result<int> bad(make_error(ErrorKind::kNotFound, "nope"));
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().is(ErrorKind::kNotFound));
}

}  // namespace
}  // namespace meshop::kube
