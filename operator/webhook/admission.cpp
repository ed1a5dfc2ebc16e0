#include "operator/webhook/admission.hpp"

#include <chrono>
#include <memory>
#include <optional>

#include "api/json.hpp"
#include "operator/log/log.hpp"
#include "operator/webhook/path_params.hpp"

namespace meshop::webhook {
namespace {

constexpr std::string_view kV1 = "admission.k8s.io/v1";
constexpr std::string_view kV1beta1 = "admission.k8s.io/v1beta1";

HttpReply text_reply(int status, std::string body) {
  // Go's http.Error: text/plain and a trailing newline.
  return {status, "text/plain; charset=utf-8", std::move(body) + "\n"};
}

void append_json_string(std::string& out, std::string_view text) {
  rapidjson::Value v(
      rapidjson::StringRef(text.data(), static_cast<rapidjson::SizeType>(text.size())));
  api::append_json(out, v);
}

// What goes into the reply's AdmissionResponse.
struct Response {
  bool allowed = false;
  std::string message;       // status.message when not allowed
  std::string_view patch64;  // the JSON Patch, base64-encoded, when injected
};

Response deny(std::string message) {
  Response r;
  r.message = truncate_message(message);
  return r;
}

Response allow(std::string_view patch64 = {}) {
  Response r;
  r.allowed = true;
  r.patch64 = patch64;
  return r;
}

// `api_version` "" writes an untyped review (upstream's reply to an undecodable body).
std::string review_json(std::string_view api_version, std::string_view uid, const Response& r) {
  std::string out;
  out.reserve(128 + uid.size() + r.patch64.size() + r.message.size());
  out += '{';
  if (!api_version.empty()) {
    out += "\"kind\":\"AdmissionReview\",\"apiVersion\":";
    append_json_string(out, api_version);
    out += ',';
  }
  out += "\"response\":{\"uid\":";
  append_json_string(out, uid);
  out += r.allowed ? ",\"allowed\":true" : ",\"allowed\":false";
  if (!r.allowed) {
    // metav1.Status: its ListMeta has no omitempty, hence "metadata":{}.
    out += ",\"status\":{\"metadata\":{},\"message\":";
    append_json_string(out, r.message);
    out += '}';
  }
  if (!r.patch64.empty()) {
    out += ",\"patch\":\"";
    out += r.patch64;
    out += "\",\"patchType\":\"JSONPatch\"";
  }
  out += "}}";
  return out;
}

std::string_view string_member(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return {it->value.GetString(), it->value.GetStringLength()};
}

class RequestRecord {
 public:
  explicit RequestRecord(const AdmissionContext& ctx)
      : ctx_(ctx), start_(std::chrono::steady_clock::now()) {
    if (ctx_.metrics) ctx_.metrics->requests.Increment();
  }
  ~RequestRecord() {
    if (!ctx_.metrics) return;
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start_;
    ctx_.metrics->time.Observe(took.count());
  }
  RequestRecord(const RequestRecord&) = delete;
  RequestRecord& operator=(const RequestRecord&) = delete;

  void failure(std::string_view type, std::string_view message, std::string_view path) {
    log::warn(
        "sidecar injection request failed",
        {{"path", truncate_message(path)}, {"reason", type}, {"error", truncate_message(message)}});
    if (ctx_.metrics) ctx_.metrics->failure.with({std::string(type)}).Increment();
  }
  HttpReply review(std::string_view api_version, std::string_view uid, const Response& r) {
    if (ctx_.metrics) ctx_.metrics->success.Increment();
    return {200, "application/json", review_json(api_version, uid, r)};
  }
  // An injected or skipped answer, fresh or memoized: counted the same either way.
  HttpReply answer(std::string_view api_version, std::string_view uid, const CachedAnswer& a) {
    if (a.injected) return review(api_version, uid, allow(a.patch_base64));
    if (ctx_.metrics) {
      std::string reason = ctx_.engine.reason_name ? std::string(ctx_.engine.reason_name(a.reason))
                                                   : std::string("unknown");
      ctx_.metrics->skip.with({reason}).Increment();
    }
    return review(api_version, uid, allow());
  }
  void cache_lookup(bool hit) {
    if (ctx_.metrics) ctx_.metrics->injection_cache.with({hit ? "hit" : "miss"}).Increment();
  }

 private:
  const AdmissionContext& ctx_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace

std::string truncate_message(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  // The suffix names how much was dropped; its length depends on that number, so size it for
  // the worst case (all of text dropped) and keep what is left of the limit.
  std::string suffix = " ... [" + std::to_string(text.size()) + " bytes truncated]";
  std::size_t keep = limit > suffix.size() ? limit - suffix.size() : 0;
  // Back up to the start of a UTF-8 character: never cut one in two.
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80)
    --keep;
  std::string out(text.substr(0, keep));
  out += " ... [" + std::to_string(text.size() - keep) + " bytes truncated]";
  return out;
}

HttpReply serve_inject(const AdmissionContext& ctx, std::string_view path,
                       const HttpRequest& request) {
  RequestRecord outcome(ctx);
  if (request.body_too_large) {
    std::string message =
        "Request entity too large: limit is " + std::to_string(kMaxRequestBodyBytes);
    outcome.failure("body_too_large", message, path);
    return text_reply(400, message);
  }
  if (request.body.empty()) {
    outcome.failure("no_body", "no body found", path);
    return text_reply(400, "no body found");
  }
  if (request.content_type != "application/json") {
    outcome.failure(
        "content_type",
        "contentType=" + std::string(request.content_type) + ", expect application/json", path);
    return text_reply(415, "invalid Content-Type, want `application/json`");
  }

  // A body that is not JSON at all is the caller's error (HTTP 400, as issue 5 asks; upstream
  // answers 200 with an untyped review there). JSON that is not an AdmissionReview is answered
  // as upstream does, below.
  auto parsed = api::parse_json(request.body);
  if (!parsed.ok()) {
    std::string message = "could not decode AdmissionReview: " + parsed.message();
    outcome.failure("decode", message, path);
    return text_reply(400, message);
  }
  rapidjson::Document& review = *parsed;
  std::string_view api_version = string_member(review, "apiVersion");
  std::string_view kind = string_member(review, "kind");
  std::string decode_error;
  if (!review.IsObject()) {
    decode_error = "the body is not a JSON object";
  } else if (api_version.empty() || kind.empty()) {
    decode_error =
        "apiVersion and kind must be set (AdmissionReview admission.k8s.io/v1 or v1beta1)";
  } else if ((api_version != kV1 && api_version != kV1beta1) || kind != "AdmissionReview") {
    decode_error = "no kind \"" + std::string(kind) + "\" is registered for version \"" +
                   std::string(api_version) +
                   "\" (want AdmissionReview admission.k8s.io/v1 or v1beta1)";
  }
  if (!decode_error.empty()) {
    std::string message = "could not decode AdmissionReview: " + decode_error;
    outcome.failure("decode", message, path);
    return outcome.review({}, {}, deny(message));
  }

  auto req_it = review.FindMember("request");
  if (req_it == review.MemberEnd() || !req_it->value.IsObject()) {
    std::string message = "AdmissionReview has no request";
    outcome.failure("decode", message, path);
    return outcome.review(api_version, {}, deny(message));
  }
  rapidjson::Value& req = req_it->value;
  std::string_view uid = string_member(req, "uid");
  if (uid.empty()) {
    // The apiserver matches a reply to its request by uid; upstream would answer this one
    // (allowed, uid ""), which no apiserver sends and none could use.
    std::string message = "AdmissionReview request.uid is missing or not a string";
    outcome.failure("invalid_review", message, path);
    return outcome.review(api_version, {}, deny(message));
  }
  if (auto kind_it = req.FindMember("kind"); kind_it != req.MemberEnd()) {
    // request.kind is what the apiserver says it sends: only core/v1 Pods are injected (a
    // webhook configuration matching more than pods must not get a Pod patch for them).
    std::string_view group = string_member(kind_it->value, "group");
    std::string_view name = string_member(kind_it->value, "kind");
    if (!kind_it->value.IsObject() || !group.empty() || name != "Pod") {
      std::string message = "request.kind is ";
      if (!kind_it->value.IsObject()) {
        message += "not a GroupVersionKind";
      } else {
        message += group.empty() ? "" : std::string(group) + "/";
        message += std::string(string_member(kind_it->value, "version")) + " " +
                   (name.empty() ? std::string("(no kind)") : std::string(name));
      }
      message += "; sidecar injection admits only Pods (core/v1 Pod)";
      outcome.failure("invalid_pod", message, path);
      return outcome.review(api_version, uid, deny(message));
    }
  }
  auto obj_it = req.FindMember("object");
  if (obj_it == req.MemberEnd() || !obj_it->value.IsObject()) {
    std::string message = "could not unmarshal raw object: request.object is not a Pod object";
    outcome.failure("invalid_pod", message, path);
    return outcome.review(api_version, uid, deny(message));
  }
  rapidjson::Value& pod = obj_it->value;
  if (auto k = pod.FindMember("kind");
      k != pod.MemberEnd() && (!k->value.IsString() || string_member(pod, "kind") != "Pod")) {
    std::string message = "request.object is ";
    message += k->value.IsString() ? "a " + std::string(string_member(pod, "kind"))
                                   : std::string("an object whose kind is not a string");
    message += ", not a Pod; sidecar injection admits only Pods";
    outcome.failure("invalid_pod", message, path);
    return outcome.review(api_version, uid, deny(message));
  }
  if (auto meta = pod.FindMember("metadata"); meta != pod.MemberEnd() && meta->value.IsObject()) {
    // Often the largest part of a pod and irrelevant to injection (upstream drops it too).
    meta->value.RemoveMember("managedFields");
  }

  InjectPath params = parse_inject_path(path);
  for (const auto& key : params.ignored_keys)
    log::warn("odd number of inject path entries, last key ignored",
              {{"path", truncate_message(path)}, {"key", truncate_message(key)}});
  std::string revision = params.revision.empty() ? ctx.default_revision : params.revision;
  auto config = ctx.store.get(revision);
  if (!config) {
    std::string message = "no injector configuration for revision \"" + revision + "\"";
    if (auto why = ctx.store.last_error(revision); !why.empty())
      message += " (last configuration rejected: " + why + ")";
    outcome.failure("no_config", message, path);
    return outcome.review(api_version, uid, deny(message));
  }

  // Memoized answers (injection_cache.hpp). From here on the answer depends only on the
  // configuration, the path, request.namespace and request.object: what the key covers. (Any
  // new input read below must go into the key too.)
  std::string_view ns = string_member(req, "namespace");
  InjectionCache* cache = ctx.cache != nullptr && ctx.cache->enabled() && ctx.engine.memoizable &&
                                  ctx.engine.memoizable(*config)
                              ? ctx.cache
                              : nullptr;
  std::optional<InjectionKey> key;
  if (cache != nullptr) {
    if (auto range = request_object_range(request.body)) {
      key = InjectionCache::key({config->revision, config->generation, path, ns,
                                 request.body.substr(range->first, range->second - range->first)});
      auto hit = cache->find(config->revision, config->generation, *key);
      outcome.cache_lookup(hit != nullptr);
      if (hit) return outcome.answer(api_version, uid, *hit);
    }
  }

  inject::PodRequest pod_request;
  pod_request.pod = &pod;
  pod_request.ns = std::string(ns);
  pod_request.proxy_envs = std::move(params.envs);
  inject::InjectResult result;
  try {
    result = ctx.engine.inject(*config, pod_request);
  } catch (const std::exception& e) {
    // The engine reports errors as values; this is a bug, but it must not take the server down.
    result = {};
    result.failure_type = "internal";
    result.message = std::string("internal error during injection: ") + e.what();
  }
  if (result.outcome != inject::Outcome::kFailed) {
    auto fresh = std::make_shared<CachedAnswer>();
    fresh->injected = result.outcome == inject::Outcome::kInjected;
    fresh->reason = result.decision.reason;
    if (fresh->injected) fresh->patch_base64 = base64_encode(result.patch);
    if (key) cache->insert(config->revision, config->generation, *key, fresh);
    return outcome.answer(api_version, uid, *fresh);
  }
  outcome.failure(result.failure_type.empty() ? "injection" : result.failure_type, result.message,
                  path);
  return outcome.review(api_version, uid, deny(std::move(result.message)));
}

HttpReply serve(const AdmissionContext& ctx, const HttpRequest& request) {
  std::string_view path = request.target.substr(0, request.target.find('?'));
  if (is_inject_path(path)) return serve_inject(ctx, path, request);
  if (path == "/ready") {
    if (ctx.store.get(ctx.default_revision)) return text_reply(200, "ok");
    std::string why = "no injector configuration for revision \"" + ctx.default_revision + "\"";
    if (auto err = ctx.store.last_error(ctx.default_revision); !err.empty()) why += ": " + err;
    return text_reply(503, why);
  }
  return text_reply(404, "404 page not found");
}

}  // namespace meshop::webhook
