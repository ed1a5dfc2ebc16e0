// Result<T> and Error: the one value-or-error type of meshop, from the data model (YAML, JSON,
// patches, selectors) through the Kubernetes client (meshop::kube::Result is this type) and
// the runtime's sources up to a reconciler's result.
//
// Expected outcomes (malformed input, 404, 409, 410, 429, a refused request, a lost
// connection) are values, not exceptions: callers must look at the Result before using the
// value. Error messages name where the problem is (document index, line and column, JSON
// pointer or field path; for API calls the verb, the resource and the object) so they can be
// shown to users as they are.
//
// An Error keeps what its origin knew — its kind, the HTTP status, the server's reason,
// Retry-After and field causes — so the controller's error policy (reconcilers/errors.hpp)
// chooses the requeue from the kind, however many layers added context to the message.
#pragma once

#include <cassert>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace meshop::api {

// What went wrong. For API calls: from metav1.Status.reason when the server sent one, else
// from the HTTP code or from the client side (transport, decoding, configuration).
enum class ErrorKind {
  kUnknown,                // no more specific kind: most of meshop's own errors; any other HTTP
                           // status
  kBadRequest,             // 400 BadRequest
  kUnauthorized,           // 401
  kForbidden,              // 403: meshop's RBAC lacks a verb
  kNotFound,               // 404
  kMethodNotAllowed,       // 405
  kNotAcceptable,          // 406
  kAlreadyExists,          // 409 reason AlreadyExists
  kConflict,               // 409 reason Conflict (resourceVersion / precondition / apply
                           // conflict): the object changed since it was read
  kGone,                   // 410 Gone or reason Expired: resourceVersion too old -> relist
  kRequestEntityTooLarge,  // 413
  kUnsupportedMediaType,   // 415 (e.g. strategic merge patch on a custom resource)
  kInvalid,                // 422 with causes, or input meshop's own validation refuses: only
                           // the user's edit fixes it
  kTooManyRequests,        // 429
  kInternalError,          // 500
  kServiceUnavailable,     // 503
  kServerTimeout,          // 504 / reason ServerTimeout / Timeout
  kTransport,              // could not connect, TLS failure, connection reset, request timeout
  kDecode,                 // the server answered something that is not the JSON we expected
  kConfig,                 // kubeconfig / in-cluster / credential plugin problem
  kCancelled,              // the operation was cancelled (e.g. Watch::close, shutdown)
};

constexpr std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUnknown:
      return "Unknown";
    case ErrorKind::kBadRequest:
      return "BadRequest";
    case ErrorKind::kUnauthorized:
      return "Unauthorized";
    case ErrorKind::kForbidden:
      return "Forbidden";
    case ErrorKind::kNotFound:
      return "NotFound";
    case ErrorKind::kMethodNotAllowed:
      return "MethodNotAllowed";
    case ErrorKind::kNotAcceptable:
      return "NotAcceptable";
    case ErrorKind::kAlreadyExists:
      return "AlreadyExists";
    case ErrorKind::kConflict:
      return "Conflict";
    case ErrorKind::kGone:
      return "Gone";
    case ErrorKind::kRequestEntityTooLarge:
      return "RequestEntityTooLarge";
    case ErrorKind::kUnsupportedMediaType:
      return "UnsupportedMediaType";
    case ErrorKind::kInvalid:
      return "Invalid";
    case ErrorKind::kTooManyRequests:
      return "TooManyRequests";
    case ErrorKind::kInternalError:
      return "InternalError";
    case ErrorKind::kServiceUnavailable:
      return "ServiceUnavailable";
    case ErrorKind::kServerTimeout:
      return "ServerTimeout";
    case ErrorKind::kTransport:
      return "Transport";
    case ErrorKind::kDecode:
      return "Decode";
    case ErrorKind::kConfig:
      return "Config";
    case ErrorKind::kCancelled:
      return "Cancelled";
  }
  return "Unknown";
}

// One entry of metav1.Status.details.causes (field validation failures of 422 Invalid).
struct StatusCause {
  std::string type;     // e.g. FieldValueRequired
  std::string message;  // e.g. Required value
  std::string field;    // e.g. metadata.name
};

// An aggregate whose first member is the message, so the common case stays short:
//   api::Error{"spec.revision: expected a string"}                      (kind kUnknown)
//   api::Error{.message = "...", .kind = api::ErrorKind::kInvalid}
// Predicates derive from `kind`; there are no separate flags that could disagree with it.
struct Error {
  std::string message;
  ErrorKind kind = ErrorKind::kUnknown;
  int http_status = 0;   // 0 when no HTTP response was received
  std::string reason{};  // metav1.Status.reason verbatim ("" if none)
  std::vector<StatusCause> causes{};
  // From the Retry-After header or Status.details.retryAfterSeconds (429, 503), if the server
  // sent one: the retry waits that long.
  std::optional<std::chrono::seconds> retry_after = std::nullopt;

  bool is(ErrorKind k) const { return kind == k; }
  // The object changed between this pass's read and its write (409 Conflict, a failed JSON
  // patch test of resourceVersion): read it again and retry; not a failure to report to users.
  bool conflict() const { return kind == ErrorKind::kConflict; }
  // The apiserver refused the request (403): only an administrator's change of meshop's
  // ClusterRole fixes that, so retries are slow and the message names verb and resource.
  bool forbidden() const { return kind == ErrorKind::kForbidden; }
  // The input itself is invalid (a field its validation refuses, 422): only the user's edit
  // fixes it, so it is reported and not retried.
  bool invalid() const { return kind == ErrorKind::kInvalid; }
};

inline Error make_error(ErrorKind kind, std::string message) {
  return Error{.message = std::move(message), .kind = kind};
}

// The same error with `context` (e.g. "pruning for IstioOperator a/b") before its message;
// everything else (kind, HTTP status, reason, causes, Retry-After) is kept.
inline Error with_context(std::string_view context, Error e) {
  if (context.empty()) return e;
  e.message = std::string(context) + ": " + e.message;
  return e;
}

// A value or an Error. Accessing the wrong alternative is a programming error (asserts).
template <class T>
class [[nodiscard]] Result {
 public:
  // An error ("no result"), never a success: lets Result be used where a default value is
  // required (e.g. co_spawn's completion handler after an exception) without ever reading as ok.
  Result() : v_(make_error(ErrorKind::kUnknown, "no result")) {}
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;

inline Status ok_status() {
  return Ok{};
}

}  // namespace meshop::api
