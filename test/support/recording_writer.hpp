// A kube::Writer for tests and benchmarks: records every call, answers each from `answer` (by
// default a 200 with the object named, or `{}`), and keeps the Events it is given.
//
//   auto writer = std::make_shared<test_support::RecordingWriter>();
//   writer->answer = [](const test_support::RecordingWriter::Call& c) -> kube::Result<...> {
//     if (c.verb == "evict") return test_support::status_error(429, "TooManyRequests", "...");
//     return test_support::RecordingWriter::ok(c);
//   };
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "api/json.hpp"
#include "operator/kube/writer.hpp"

namespace meshop::test_support {

class RecordingWriter final : public kube::Writer {
 public:
  struct Call {
    std::string verb;      // "patch", "delete", "evict", "apply", "create", "update"
    std::string resource;  // the plural ("deployments", "pods", "istiooperators", ...)
    std::string ns, name;
    std::string subresource;  // patch: options.subresource
    std::string body;         // patch: the body
    kube::PatchType patch_type = kube::PatchType::kMerge;
    bool dry_run = false;  // evict
  };
  struct Event {
    kube::ObjectReference regarding;
    kube::EventType type;
    std::string reason, action, note;
  };

  // A 200 answer: {"apiVersion","kind","metadata":{"namespace","name"}} of the object called.
  static kube::Result<rapidjson::Document> ok(const Call& c) {
    rapidjson::Document d(rapidjson::kObjectType);
    auto& a = d.GetAllocator();
    rapidjson::Value meta(rapidjson::kObjectType);
    meta.AddMember("namespace", api::make_string(c.ns, a), a);
    meta.AddMember("name", api::make_string(c.name, a), a);
    d.AddMember("metadata", meta, a);
    return d;
  }

  std::function<kube::Result<rapidjson::Document>(const Call&)> answer = ok;
  std::vector<Call> calls;
  std::vector<Event> events;

  // The calls of `verb`.
  std::vector<Call> of(const std::string& verb) const {
    std::vector<Call> out;
    for (const Call& c : calls)
      if (c.verb == verb) out.push_back(c);
    return out;
  }
  // The reasons of the Events recorded, in order.
  std::vector<std::string> event_reasons() const {
    std::vector<std::string> out;
    for (const Event& e : events)
      out.push_back(e.reason);
    return out;
  }

  using kube::Writer::patch;
  kube::Task<kube::Result<rapidjson::Document>> patch(const kube::ResourceType& type,
                                                      std::string ns, std::string name,
                                                      kube::PatchType patch_type, std::string body,
                                                      kube::PatchOptions options) override {
    Call c;
    c.verb = "patch";
    c.resource = type.resource;
    c.ns = std::move(ns);
    c.name = std::move(name);
    c.subresource = options.subresource;
    c.body = std::move(body);
    c.patch_type = patch_type;
    calls.push_back(c);
    co_return answer(c);
  }
  kube::Task<kube::Result<rapidjson::Document>> apply(const kube::ResourceType& type,
                                                      const rapidjson::Value& object,
                                                      std::string /*field_manager*/,
                                                      bool /*force*/) override {
    co_return answer(object_call("apply", type, object));
  }
  kube::Task<kube::Result<rapidjson::Document>> create(const kube::ResourceType& type,
                                                       std::string ns,
                                                       const rapidjson::Value& object) override {
    Call c = object_call("create", type, object);
    c.ns = std::move(ns);
    calls.back().ns = c.ns;
    co_return answer(c);
  }
  kube::Task<kube::Result<rapidjson::Document>> update(const kube::ResourceType& type,
                                                       const rapidjson::Value& object) override {
    co_return answer(object_call("update", type, object));
  }
  using kube::Writer::remove;
  kube::Task<kube::Result<rapidjson::Document>> remove(const kube::ResourceType& type,
                                                       std::string ns, std::string name,
                                                       kube::DeleteOptions /*options*/) override {
    Call c;
    c.verb = "delete";
    c.resource = type.resource;
    c.ns = std::move(ns);
    c.name = std::move(name);
    calls.push_back(c);
    co_return answer(c);
  }
  kube::Task<kube::Result<rapidjson::Document>> evict(std::string ns, std::string name,
                                                      bool dry_run) override {
    Call c;
    c.verb = "evict";
    c.resource = "pods";
    c.ns = std::move(ns);
    c.name = std::move(name);
    c.dry_run = dry_run;
    calls.push_back(c);
    co_return answer(c);
  }
  void event(const kube::ObjectReference& regarding, kube::EventType type, std::string reason,
             std::string action, std::string note) override {
    events.push_back({regarding, type, std::move(reason), std::move(action), std::move(note)});
  }

 private:
  // Records a call carrying a whole object ("apply", "create", "update"): its JSON is the body.
  Call object_call(const char* verb, const kube::ResourceType& type,
                   const rapidjson::Value& object) {
    Call c;
    c.verb = verb;
    c.resource = type.resource;
    c.ns = api::string_at(object, {"metadata", "namespace"});
    c.name = api::string_at(object, {"metadata", "name"});
    c.body = api::to_json(object);
    calls.push_back(c);
    return c;
  }
};

// An apiserver error of `status` and `reason` (kind as the client classifies it).
inline kube::Error status_error(int status, const std::string& reason, const std::string& message) {
  kube::Error e;
  e.http_status = status;
  e.reason = reason;
  e.message = message;
  switch (status) {
    case 403:
      e.kind = kube::ErrorKind::kForbidden;
      break;
    case 404:
      e.kind = kube::ErrorKind::kNotFound;
      break;
    case 409:
      e.kind = kube::ErrorKind::kConflict;
      break;
    case 429:
      e.kind = kube::ErrorKind::kTooManyRequests;
      break;
    case 500:
      e.kind = kube::ErrorKind::kInternalError;
      break;
    default:
      e.kind = kube::ErrorKind::kUnknown;
      break;
  }
  return e;
}

}  // namespace meshop::test_support
