// The webhook's HTTP semantics, without I/O: one request in, one reply out (upstream's
// serveInject plus the routes of istiod's HTTPS mux). The server (server.hpp) only moves bytes.
//
//   POST /inject[/k/v...]   AdmissionReview admission.k8s.io/v1 or v1beta1 → AdmissionReview
//   GET  /ready             200 "ok" once the default revision has a configuration, else 503
//   anything else           404
//
// /inject, in upstream's order:
//   body over 6 MiB          400 "Request entity too large: limit is 6291456"
//   empty body               400 "no body found"
//   Content-Type not exactly "application/json"  415 "invalid Content-Type, want
//                            `application/json`"
//   body not JSON            400 "could not decode AdmissionReview: <where and why>" (meshop;
//                            upstream answers 200 with an untyped review)
//   JSON but not an AdmissionReview (no/unknown apiVersion or kind)
//                            200, allowed:false, status.message says why; no apiVersion/kind
//                            in the reply (upstream answers with an untyped v1beta1 review)
//   no request, no request.uid (meshop; upstream answers allowed:true with uid ""),
//   request.kind other than core/v1 Pod or request.object.kind other than Pod (meshop; upstream
//   decodes anything into a Pod), no Pod in request.object, no configuration for the revision,
//   engine failure
//                            200, allowed:false, status.message; reply in the request's version
//   skipped                  200, allowed:true, no patch
//   injected                 200, allowed:true, patchType JSONPatch, patch base64
// Injected and skipped answers are memoized when ctx.cache is set and the engine says the
// configuration is memoizable (injection_cache.hpp): a memoized answer is the same reply, byte
// for byte, with this request's uid, and is counted in the same metrics (plus
// meshop_webhook_injection_cache_total{result="hit"|"miss"}).
// Replies to reviews echo request.uid. status.message and the logged error are truncated to
// kMaxMessageBytes (they may quote input). The revision is the path's `rev` value (see
// path_params.hpp), else the server's default revision. request.object.metadata.managedFields
// is dropped before injection, as upstream does, so the patch never mentions it.
//
// Metrics follow upstream's counting (metrics.hpp). Thread-safe: reads the store once per
// request and calls the engine; safe from any number of threads.
#pragma once

#include <string>
#include <string_view>

#include "api/base64.hpp"
#include "operator/webhook/engine.hpp"
#include "operator/webhook/injection_cache.hpp"
#include "operator/webhook/metrics.hpp"
#include "operator/webhook/revision_store.hpp"

namespace meshop::webhook {

inline constexpr std::size_t kMaxRequestBodyBytes = 6 * 1024 * 1024;
// Longest status.message and logged error: messages quote input (annotations, apiVersions,
// template output), and a 1 MiB annotation must not become a 1 MiB reply and log line.
inline constexpr std::size_t kMaxMessageBytes = 4096;

// `text` when it fits in `limit` bytes; else its head, cut on a UTF-8 character boundary,
// followed by " ... [N bytes truncated]", `limit` bytes at most in all.
std::string truncate_message(std::string_view text, std::size_t limit = kMaxMessageBytes);

struct HttpRequest {
  std::string_view method;
  std::string_view target;        // path and query
  std::string_view content_type;  // the Content-Type header, "" when absent
  std::string_view body;
  bool body_too_large = false;  // the transport stopped reading past kMaxRequestBodyBytes
};

struct HttpReply {
  int status = 200;
  std::string content_type;
  std::string body;
};

struct AdmissionContext {
  const RevisionStore& store;
  const Engine& engine;
  WebhookMetrics* metrics = nullptr;  // optional
  std::string default_revision = "default";
  // Memoized answers (injection_cache.hpp); null: every review runs the engine.
  InjectionCache* cache = nullptr;
};

HttpReply serve(const AdmissionContext& ctx, const HttpRequest& request);

// Exposed for tests.
HttpReply serve_inject(const AdmissionContext& ctx, std::string_view path,
                       const HttpRequest& request);
// Exposed for tests (the patch field of a response).
using api::base64_encode;

}  // namespace meshop::webhook
