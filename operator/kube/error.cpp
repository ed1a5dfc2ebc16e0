#include "operator/kube/error.hpp"

#include <charconv>
#include <string>

#include "operator/kube/retry.hpp"

namespace meshop::kube {
namespace {

struct ReasonKind {
  std::string_view reason;
  ErrorKind kind;
};

// metav1.StatusReason values (k8s.io/apimachinery/pkg/apis/meta/v1/types.go).
constexpr ReasonKind kReasons[] = {
    {"BadRequest", ErrorKind::kBadRequest},
    {"Unauthorized", ErrorKind::kUnauthorized},
    {"Forbidden", ErrorKind::kForbidden},
    {"NotFound", ErrorKind::kNotFound},
    {"MethodNotAllowed", ErrorKind::kMethodNotAllowed},
    {"NotAcceptable", ErrorKind::kNotAcceptable},
    {"AlreadyExists", ErrorKind::kAlreadyExists},
    {"Conflict", ErrorKind::kConflict},
    {"Gone", ErrorKind::kGone},
    {"Expired", ErrorKind::kGone},
    {"RequestEntityTooLarge", ErrorKind::kRequestEntityTooLarge},
    {"UnsupportedMediaType", ErrorKind::kUnsupportedMediaType},
    {"Invalid", ErrorKind::kInvalid},
    {"TooManyRequests", ErrorKind::kTooManyRequests},
    {"InternalError", ErrorKind::kInternalError},
    {"ServiceUnavailable", ErrorKind::kServiceUnavailable},
    {"Timeout", ErrorKind::kServerTimeout},
    {"ServerTimeout", ErrorKind::kServerTimeout},
};

ErrorKind kind_from_code(int code) {
  switch (code) {
    case 400:
      return ErrorKind::kBadRequest;
    case 401:
      return ErrorKind::kUnauthorized;
    case 403:
      return ErrorKind::kForbidden;
    case 404:
      return ErrorKind::kNotFound;
    case 405:
      return ErrorKind::kMethodNotAllowed;
    case 406:
      return ErrorKind::kNotAcceptable;
    case 409:
      return ErrorKind::kConflict;
    case 410:
      return ErrorKind::kGone;
    case 413:
      return ErrorKind::kRequestEntityTooLarge;
    case 415:
      return ErrorKind::kUnsupportedMediaType;
    case 422:
      return ErrorKind::kInvalid;
    case 429:
      return ErrorKind::kTooManyRequests;
    case 500:
      return ErrorKind::kInternalError;
    case 503:
      return ErrorKind::kServiceUnavailable;
    case 504:
      return ErrorKind::kServerTimeout;
    default:
      return ErrorKind::kUnknown;
  }
}

std::string get_string(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(key);
  if (it == v.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

Error from_status(std::string_view what, int http_status, const rapidjson::Value& status) {
  Error e;
  e.http_status = http_status;
  if (auto it = status.FindMember("code"); it != status.MemberEnd() && it->value.IsInt()) {
    if (e.http_status == 0) e.http_status = it->value.GetInt();
  }
  e.reason = get_string(status, "reason");
  e.kind = kind_from_code(e.http_status);
  // 410 with reason Expired and the like: the reason is more precise than the code, except
  // that a 409 with an unknown reason stays a Conflict.
  for (const auto& rk : kReasons) {
    if (rk.reason == e.reason) {
      e.kind = rk.kind;
      break;
    }
  }
  std::string server_message = get_string(status, "message");
  if (auto d = status.FindMember("details"); d != status.MemberEnd() && d->value.IsObject()) {
    if (auto c = d->value.FindMember("causes"); c != d->value.MemberEnd() && c->value.IsArray()) {
      for (const auto& cause : c->value.GetArray()) {
        e.causes.push_back(StatusCause{get_string(cause, "reason"), get_string(cause, "message"),
                                       get_string(cause, "field")});
      }
    }
    if (auto r = d->value.FindMember("retryAfterSeconds");
        r != d->value.MemberEnd() && r->value.IsInt() && r->value.GetInt() > 0) {
      e.retry_after = std::chrono::seconds(r->value.GetInt());
    }
  }
  // A JSON patch whose "test" of a field failed comes back as 422 with the generic "rejected
  // our request" message and the patch library's words as the one cause. When that field is
  // the resourceVersion it is the same precondition failure as a 409 on an update: the object
  // changed since it was read. (Current apiservers send no cause: Client::patch knows its body
  // and reads a cause-less 422 of a patch that tests the resourceVersion the same way.)
  for (const StatusCause& cause : e.causes) {
    if (e.kind == ErrorKind::kInvalid && cause.message.starts_with("testing value ") &&
        cause.message.find("/metadata/resourceVersion") != std::string::npos) {
      e.kind = ErrorKind::kConflict;
    }
  }
  e.message = std::string(what) + ": ";
  e.message += server_message.empty()
                   ? std::string("server returned ") + std::to_string(e.http_status)
                   : server_message;
  // Generic server responses carry the specific words only as causes without a field; field
  // causes are already part of an Invalid message ("metadata.name: Invalid value: ...").
  for (const StatusCause& cause : e.causes) {
    if (cause.field.empty() && !cause.message.empty() &&
        server_message.find(cause.message) == std::string::npos) {
      e.message += ": " + cause.message;
    }
  }
  e.message += " (" + (e.reason.empty() ? std::string(to_string(e.kind)) : e.reason) + ", " +
               std::to_string(e.http_status) + ")";
  return e;
}

}  // namespace

Error error_from_status_object(std::string_view what, const rapidjson::Value& status) {
  if (!status.IsObject()) {
    return make_error(ErrorKind::kDecode, std::string(what) + ": error object is not a Status");
  }
  return from_status(what, 0, status);
}

Error error_from_response(std::string_view what, int http_status, std::string_view body,
                          std::string_view retry_after_header) {
  rapidjson::Document doc;
  doc.Parse(body.data(), body.size());
  Error e;
  if (!doc.HasParseError() && doc.IsObject() && get_string(doc, "kind") == "Status") {
    e = from_status(what, http_status, doc);
  } else {
    e.http_status = http_status;
    e.kind = kind_from_code(http_status);
    std::string snippet(body.substr(0, 256));
    while (!snippet.empty() && (snippet.back() == '\n' || snippet.back() == '\r')) {
      snippet.pop_back();
    }
    e.message = std::string(what) + ": server returned " + std::to_string(http_status) +
                (snippet.empty() ? std::string() : ": " + snippet);
  }
  if (auto ra = parse_retry_after(retry_after_header)) e.retry_after = ra;
  return e;
}

}  // namespace meshop::kube
