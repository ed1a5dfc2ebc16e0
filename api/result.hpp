// Result<T>: the value-or-error type every fallible operation of meshop::api returns.
//
// Malformed input (YAML, JSON, patches, selectors) is an expected outcome, not an exception:
// callers must look at the Result before using the value. Error messages name where the
// problem is (document index, line and column, JSON pointer or field path) so they can be
// shown to users as they are.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace meshop::api {

struct Error {
  std::string message;
  // The object changed between this pass's read and its write (409 Conflict, a failed JSON
  // patch test of resourceVersion): read it again and retry; not a failure to report to users.
  bool conflict = false;
  // The server said when to try again (429 or 503 with Retry-After): the retry waits that long.
  std::optional<std::chrono::seconds> retry_after = std::nullopt;
  // The apiserver refused the request (403 Forbidden): meshop's ClusterRole lacks a verb. Only
  // an administrator fixes that, so retries are slow and the message names verb and resource.
  bool forbidden = false;
  // The input itself is invalid (a spec field its validation refuses): only the user's edit
  // fixes it, so it is reported as invalid input and not retried.
  bool invalid = false;
};

// The same error with `context` (e.g. "pruning for IstioOperator a/b") before its message; the
// flags that choose the retry (conflict, retry_after, forbidden, invalid) are kept.
inline Error with_context(std::string_view context, Error e) {
  e.message = std::string(context) + ": " + e.message;
  return e;
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(v_); }
  const std::string& message() const { return error().message; }

 private:
  std::variant<T, Error> v_;
};

struct Ok {};
using Status = Result<Ok>;

inline Status ok_status() {
  return Ok{};
}

}  // namespace meshop::api
