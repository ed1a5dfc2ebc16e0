// Typed Kubernetes API errors and the Result<T> value every client call returns.
//
// Expected outcomes of talking to an apiserver (404, 409, 410, 429, connection failures, bad
// kubeconfig) are values, never exceptions: a caller must look at Result<T> before using the
// value. Error::message always names the verb, the resource and the object
// (e.g. `get configmaps default/foo: configmaps "foo" not found`).
#pragma once

#include <cassert>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <rapidjson/document.h>

namespace meshop::kube {

// What went wrong, from metav1.Status.reason when the server sent one, else from the HTTP code
// or from the client side (transport, decoding, configuration).
enum class ErrorKind {
  kBadRequest,             // 400 BadRequest
  kUnauthorized,           // 401
  kForbidden,              // 403
  kNotFound,               // 404
  kMethodNotAllowed,       // 405
  kNotAcceptable,          // 406
  kAlreadyExists,          // 409 reason AlreadyExists
  kConflict,               // 409 reason Conflict (resourceVersion / precondition / apply conflict)
  kGone,                   // 410 Gone or reason Expired: resourceVersion too old -> relist
  kRequestEntityTooLarge,  // 413
  kUnsupportedMediaType,   // 415 (e.g. strategic merge patch on a custom resource)
  kInvalid,                // 422 with causes
  kTooManyRequests,        // 429
  kInternalError,          // 500
  kServiceUnavailable,     // 503
  kServerTimeout,          // 504 / reason ServerTimeout / Timeout
  kUnknown,                // any other HTTP status
  kTransport,              // could not connect, TLS failure, connection reset, request timeout
  kDecode,                 // the server answered something that is not the JSON we expected
  kConfig,                 // kubeconfig / in-cluster / credential plugin problem
  kCancelled,              // the operation was cancelled (e.g. Watch::close, shutdown)
};

std::string_view to_string(ErrorKind kind);

// One entry of metav1.Status.details.causes (field validation failures of 422 Invalid).
struct StatusCause {
  std::string type;     // e.g. FieldValueRequired
  std::string message;  // e.g. Required value
  std::string field;    // e.g. metadata.name
};

struct Error {
  ErrorKind kind = ErrorKind::kUnknown;
  int http_status = 0;  // 0 when no HTTP response was received
  std::string reason;   // metav1.Status.reason verbatim ("" if none)
  std::string message;  // full message naming verb, resource and object
  std::vector<StatusCause> causes;
  // From the Retry-After header or Status.details.retryAfterSeconds, if the server sent one.
  std::optional<std::chrono::seconds> retry_after;

  bool is(ErrorKind k) const { return kind == k; }
};

// A value or an Error. Accessing the wrong alternative is a programming error (asserts).
template <class T>
class [[nodiscard]] Result {
 public:
  // An error ("no result"), never a success: lets Result be used where a default value is
  // required (e.g. co_spawn's completion handler after an exception) without ever reading as ok.
  Result() : v_(Error{ErrorKind::kUnknown, 0, {}, "no result", {}, std::nullopt}) {}
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

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
struct Ok {};
using Status = Result<Ok>;

// Builds the typed Error for a non-2xx HTTP answer. `body` is parsed as metav1.Status when it
// is one (kind "Status"); otherwise the HTTP code decides the kind. `what` is the
// "<verb> <resource> <namespace/name>" prefix every message starts with.
Error error_from_response(std::string_view what, int http_status, std::string_view body,
                          std::string_view retry_after_header = {});

// Builds the typed Error from a metav1.Status object (e.g. the object of a watch ERROR event;
// code 410 or reason Expired gives kGone).
Error error_from_status_object(std::string_view what, const rapidjson::Value& status);

Error make_error(ErrorKind kind, std::string message);

}  // namespace meshop::kube
