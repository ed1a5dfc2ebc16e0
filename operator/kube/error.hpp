// Typed Kubernetes API errors: how an apiserver's answer becomes meshop's Error, and the
// Result<T> every client call returns (api::Result, under the kube names).
//
// Expected outcomes of talking to an apiserver (404, 409, 410, 429, connection failures, bad
// kubeconfig) are values, never exceptions: a caller must look at Result<T> before using the
// value. Error::message always names the verb, the resource and the object
// (e.g. `get configmaps default/foo: configmaps "foo" not found`); the kind, HTTP status,
// reason, causes and Retry-After travel with it to the controller's error policy.
#pragma once

#include <string_view>

#include <rapidjson/document.h>

#include "api/result.hpp"

namespace meshop::kube {

// The client's errors are meshop's one Error type (api/result.hpp): these are the same types
// under the names the client's code and its callers use.
using api::ErrorKind;
using api::make_error;
using api::StatusCause;
using api::to_string;
using Error = api::Error;
template <class T>
using Result = api::Result<T>;
using Ok = api::Ok;
using Status = api::Status;

// Builds the typed Error for a non-2xx HTTP answer. `body` is parsed as metav1.Status when it
// is one (kind "Status"); otherwise the HTTP code decides the kind. `what` is the
// "<verb> <resource> <namespace/name>" prefix every message starts with.
Error error_from_response(std::string_view what, int http_status, std::string_view body,
                          std::string_view retry_after_header = {});

// Builds the typed Error from a metav1.Status object (e.g. the object of a watch ERROR event;
// code 410 or reason Expired gives kGone).
Error error_from_status_object(std::string_view what, const rapidjson::Value& status);

}  // namespace meshop::kube
