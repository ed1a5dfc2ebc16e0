// FakeApi: an in-memory apiserver behind kube::Reader and kube::Writer, for unit tests of a
// reconciler's decision tree without an apiserver.
//
//   auto api = std::make_shared<test_support::FakeApi>();
//   api->put(iop_type, R"({"apiVersion": ..., "metadata": {...}})");   // what the cluster holds
//   api->fail("delete", "resourcequotas", test_support::FakeApi::forbidden());  // scripted error
//   InstallReconciler r(api, api);
//   run(r.reconcile("istio-system/a"));
//   EXPECT_EQ(api->writes().size(), 0u);                               // what was written
//
// Every call (reads included) is recorded in calls(), in order. Objects live in a map keyed by
// resource, namespace and name; writes change it as an apiserver would (apply and update
// replace, patch applies a JSON or merge patch, remove erases, create refuses an existing
// name), each giving the object a new metadata.resourceVersion, so a test can run several
// passes; a resourceVersion in an update or a merge patch is a precondition (409 Conflict when
// the object is at another one), as the apiserver makes it. A CustomResourceDefinition is
// Established as soon as it is written, as a real apiserver makes it within a second. Label
// selectors (ListOptions::label_selector) are those of api::LabelSelector::parse; field
// selectors are not supported (a test that needs one fails).
//
// fail() scripts an error for the next (or every) call matching a verb and resource: the error
// is built from a metav1.Status body as kube::Client builds it (error_from_response), so its
// kind, HTTP status, message and Retry-After are what the real client would return.
//
// Single-threaded, like the reconcilers it serves; the coroutines complete without suspending.
#pragma once

#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "api/json.hpp"
#include "api/json_patch.hpp"
#include "api/label_selector.hpp"
#include "operator/kube/error.hpp"
#include "operator/kube/reader.hpp"
#include "operator/kube/resource.hpp"
#include "operator/kube/writer.hpp"

namespace meshop::test_support {

class FakeApi final : public kube::Reader, public kube::Writer {
 public:
  struct Call {
    std::string verb;      // get, list, discover, apply, create, update, patch, delete, event
    std::string resource;  // ResourceType::display() ("configmaps", "deployments.apps"); for
                           // discover the kind; for event the regarded object's kind
    std::string ns, name;
    // apply/create/update: the object's JSON; patch: the body; event: the note.
    std::string body;
    std::string subresource;  // patch: PatchOptions::subresource
    kube::PatchType patch_type = kube::PatchType::kMerge;
    std::string reason;                                     // event
    kube::EventType event_type = kube::EventType::kNormal;  // event
    bool failed = false;                                    // answered with a scripted error
  };

  // A scripted error: HTTP `code` with metav1.Status `reason` and `text`.
  struct Failure {
    int code = 500;
    std::string reason;
    std::string text;
    std::optional<int> retry_after_seconds;
  };
  static Failure conflict() {
    return {409, "Conflict",
            "the object has been modified; please apply your changes to the "
            "latest version and try again",
            std::nullopt};
  }
  // As the apiserver words it: names the user, verb and resource.
  static Failure forbidden() { return {403, "Forbidden", "", std::nullopt}; }
  static Failure too_many_requests(int retry_after_seconds) {
    return {429, "TooManyRequests", "too many requests, please try again later",
            retry_after_seconds};
  }
  static Failure not_found() { return {404, "NotFound", "", std::nullopt}; }

  // Adds or replaces an object (given as JSON) of `type`. Aborts the test on malformed JSON.
  void put(const kube::ResourceType& type, std::string_view json) {
    auto doc = api::parse_json(json);
    if (!doc.ok()) throw std::runtime_error("FakeApi::put: " + doc.message());
    types_[type.resource + "." + type.group] = type;
    store(type, std::move(*doc));
  }
  // The object, or nullptr.
  const api::Document* object(const kube::ResourceType& type, std::string_view ns,
                              std::string_view name) const {
    auto it = objects_.find(key(type, ns, name));
    return it == objects_.end() ? nullptr : &it->second;
  }
  std::size_t count(const kube::ResourceType& type) const {
    std::size_t n = 0;
    for (const auto& [k, v] : objects_)
      n += std::get<0>(k) == id(type) ? 1 : 0;
    return n;
  }
  // A resource discover() resolves besides the built-in table (custom resources).
  void add_type(const kube::ResourceType& type) { types_[type.resource + "." + type.group] = type; }

  // The next `times` calls (every one when times < 0) with `verb` on `resource` (display form;
  // "" = any) and, when given, object `name`, fail with `failure`.
  void fail(std::string verb, std::string resource, Failure failure, std::string name = {},
            int times = -1) {
    rules_.push_back(
        {std::move(verb), std::move(resource), std::move(name), std::move(failure), times});
  }

  const std::vector<Call>& calls() const { return calls_; }
  // The calls that write or record an Event (not get, list, discover).
  std::vector<Call> writes() const {
    std::vector<Call> out;
    for (const Call& c : calls_)
      if (c.verb != "get" && c.verb != "list" && c.verb != "discover") out.push_back(c);
    return out;
  }
  std::vector<Call> calls_of(std::string_view verb) const {
    std::vector<Call> out;
    for (const Call& c : calls_)
      if (c.verb == verb) out.push_back(c);
    return out;
  }
  void clear_calls() { calls_.clear(); }

  // ---- kube::Reader ----
  kube::Task<kube::Result<rapidjson::Document>> get(const kube::ResourceType& type, std::string ns,
                                                    std::string name) override {
    Call& c = record("get", type, ns, name);
    if (auto e = scripted(c)) co_return std::move(*e);
    auto it = objects_.find(key(type, ns, name));
    if (it == objects_.end()) co_return missing(c);
    co_return copy(it->second);
  }
  kube::Task<kube::Result<kube::ListPage>> list_all(const kube::ResourceType& type, std::string ns,
                                                    kube::ListOptions options) override {
    Call& c = record("list", type, ns, "");
    if (auto e = scripted(c)) co_return std::move(*e);
    if (!options.field_selector.empty())
      throw std::runtime_error("FakeApi: field selectors are not supported");
    auto selector = api::LabelSelector::parse(options.label_selector);
    if (!selector.ok()) throw std::runtime_error("FakeApi: selector: " + selector.message());
    kube::ListPage page;
    page.list.SetObject();
    auto& a = page.list.GetAllocator();
    page.list.AddMember("kind", api::make_string(type.kind + "List", a), a);
    rapidjson::Value items(rapidjson::kArrayType);
    for (const auto& [k, v] : objects_) {
      if (std::get<0>(k) != id(type)) continue;
      if (!ns.empty() && std::get<1>(k) != ns) continue;
      if (!selector->matches(api::find(v, "/metadata/labels"))) continue;
      items.PushBack(rapidjson::Value(v, a), a);
    }
    page.list.AddMember("items", items, a);
    page.resource_version = std::to_string(version_);
    co_return page;
  }
  kube::Task<kube::Result<kube::ResourceType>> discover(std::string api_version,
                                                        std::string kind) override {
    Call& c = record_raw("discover", kind, "", "");
    c.body = api_version;
    if (auto e = scripted(c)) co_return std::move(*e);
    if (auto t = kube::builtin_resource(api_version, kind)) co_return *t;
    for (const auto& [k, t] : types_)
      if (t.api_version() == api_version && t.kind == kind) co_return t;
    // Any other kind is served as its lower-case plural (a test's custom kind).
    auto slash = api_version.find('/');
    kube::ResourceType t;
    t.group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    t.version = slash == std::string::npos ? api_version : api_version.substr(slash + 1);
    for (char ch : kind)
      t.resource += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    t.resource += "s";
    t.kind = kind;
    co_return t;
  }

  // ---- kube::Writer ----
  kube::Task<kube::Result<rapidjson::Document>> apply(const kube::ResourceType& type,
                                                      const rapidjson::Value& object,
                                                      std::string /*field_manager*/,
                                                      bool /*force*/) override {
    Call& c = record("apply", type, api::string_at(object, {"metadata", "namespace"}),
                     api::string_at(object, {"metadata", "name"}));
    c.body = api::to_json(object);
    if (auto e = scripted(c)) co_return std::move(*e);
    api::Document doc;
    doc.CopyFrom(object, doc.GetAllocator());
    co_return copy(store(type, std::move(doc)));
  }
  kube::Task<kube::Result<rapidjson::Document>> create(const kube::ResourceType& type,
                                                       std::string ns,
                                                       const rapidjson::Value& object) override {
    Call& c = record("create", type, ns, api::string_at(object, {"metadata", "name"}));
    c.body = api::to_json(object);
    if (auto e = scripted(c)) co_return std::move(*e);
    if (objects_.contains(key(type, ns, c.name))) {
      Failure exists{409, "AlreadyExists", "", std::nullopt};
      co_return error(c, exists);
    }
    api::Document doc;
    doc.CopyFrom(object, doc.GetAllocator());
    co_return copy(store(type, std::move(doc)));
  }
  kube::Task<kube::Result<rapidjson::Document>> update(const kube::ResourceType& type,
                                                       const rapidjson::Value& object) override {
    Call& c = record("update", type, api::string_at(object, {"metadata", "namespace"}),
                     api::string_at(object, {"metadata", "name"}));
    c.body = api::to_json(object);
    if (auto e = scripted(c)) co_return std::move(*e);
    auto it = objects_.find(key(type, c.ns, c.name));
    if (it == objects_.end()) co_return missing(c);
    std::string rv = api::string_at(object, {"metadata", "resourceVersion"});
    if (!rv.empty() && rv != api::string_at(it->second, {"metadata", "resourceVersion"}))
      co_return error(c, conflict());
    api::Document doc;
    doc.CopyFrom(object, doc.GetAllocator());
    co_return copy(store(type, std::move(doc)));
  }
  kube::Task<kube::Result<rapidjson::Document>> patch(const kube::ResourceType& type,
                                                      std::string ns, std::string name,
                                                      kube::PatchType patch_type, std::string body,
                                                      kube::PatchOptions options) override {
    Call& c = record("patch", type, ns, name);
    c.body = body;
    c.patch_type = patch_type;
    c.subresource = options.subresource;
    if (auto e = scripted(c)) co_return std::move(*e);
    auto it = objects_.find(key(type, ns, name));
    if (it == objects_.end()) co_return missing(c);
    auto patch_doc = api::parse_json(body);
    if (!patch_doc.ok()) {
      Failure bad{400, "BadRequest", patch_doc.message(), std::nullopt};
      co_return error(c, bad);
    }
    api::Document doc;
    doc.CopyFrom(it->second, doc.GetAllocator());
    switch (patch_type) {
      case kube::PatchType::kJson: {
        auto applied = api::apply_json_patch(doc, *patch_doc);
        // A failed test of the resourceVersion is a stale read: the client returns it as a
        // Conflict (operator/kube/error.cpp). Any other failure is 422 Invalid.
        if (!applied.ok()) {
          Failure invalid{422, "Invalid", applied.message(), std::nullopt};
          co_return error(c, body.find("/metadata/resourceVersion") != std::string::npos
                                 ? conflict()
                                 : invalid);
        }
        break;
      }
      case kube::PatchType::kMerge:
      case kube::PatchType::kStrategicMerge: {
        // As the apiserver: a metadata.resourceVersion in the patch is a precondition.
        const std::string rv = api::string_at(*patch_doc, {"metadata", "resourceVersion"});
        if (!rv.empty() && rv != api::string_at(doc, {"metadata", "resourceVersion"}))
          co_return error(c, conflict());
        api::apply_merge_patch(doc, *patch_doc, doc.GetAllocator());
        break;
      }
      case kube::PatchType::kApply:
        doc.CopyFrom(*patch_doc, doc.GetAllocator());
        break;
    }
    co_return copy(store(type, std::move(doc)));
  }
  kube::Task<kube::Result<rapidjson::Document>> remove(const kube::ResourceType& type,
                                                       std::string ns, std::string name,
                                                       kube::DeleteOptions /*options*/) override {
    Call& c = record("delete", type, ns, name);
    if (auto e = scripted(c)) co_return std::move(*e);
    auto it = objects_.find(key(type, ns, name));
    if (it == objects_.end()) co_return missing(c);
    objects_.erase(it);
    api::Document status;
    status.Parse(R"({"kind":"Status","status":"Success"})");
    co_return status;
  }
  kube::Task<kube::Result<rapidjson::Document>> evict(std::string ns, std::string name,
                                                      bool /*dry_run*/) override {
    Call& c = record_raw("evict", "Pod", ns, name);
    if (auto e = scripted(c)) co_return std::move(*e);
    api::Document status;
    status.Parse(R"({"kind":"Status","status":"Success"})");
    co_return status;
  }
  void event(const kube::ObjectReference& regarding, kube::EventType type, std::string reason,
             std::string /*action*/, std::string note) override {
    Call& c = record_raw("event", regarding.kind, regarding.ns, regarding.name);
    c.reason = std::move(reason);
    c.body = std::move(note);
    c.event_type = type;
  }

 private:
  using Key = std::tuple<std::string, std::string, std::string>;  // resource.group, ns, name
  struct Rule {
    std::string verb, resource, name;
    Failure failure;
    int times;
  };

  static std::string id(const kube::ResourceType& type) { return type.resource + "." + type.group; }
  static Key key(const kube::ResourceType& type, std::string_view ns, std::string_view name) {
    return {id(type), type.namespaced ? std::string(ns) : std::string(), std::string(name)};
  }
  static api::Document copy(const api::Document& d) {
    api::Document out;
    out.CopyFrom(d, out.GetAllocator());
    return out;
  }

  Call& record_raw(std::string verb, std::string resource, std::string ns, std::string name) {
    Call c;
    c.verb = std::move(verb);
    c.resource = std::move(resource);
    c.ns = std::move(ns);
    c.name = std::move(name);
    calls_.push_back(std::move(c));
    return calls_.back();
  }
  Call& record(std::string verb, const kube::ResourceType& type, std::string ns, std::string name) {
    return record_raw(std::move(verb), type.display(), type.namespaced ? std::move(ns) : "",
                      std::move(name));
  }

  // The error the client would return for `failure` on call `c`.
  kube::Error error(Call& c, const Failure& failure) {
    c.failed = true;
    std::string what = c.verb + " " + c.resource + " " + (c.ns.empty() ? "" : c.ns + "/") + c.name;
    std::string text = failure.text;
    if (failure.code == 403 && text.empty())
      text = c.resource +
             " is forbidden: User \"system:serviceaccount:istio-system:meshop\" "
             "cannot " +
             c.verb + " resource \"" + c.resource + "\" at the cluster scope";
    if (failure.code == 404 && text.empty()) text = c.resource + " \"" + c.name + "\" not found";
    if (failure.code == 409 && failure.reason == "AlreadyExists" && text.empty())
      text = c.resource + " \"" + c.name + "\" already exists";
    std::string body = R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":)";
    api::append_json_string(body, text);
    body += R"(,"reason":")" + failure.reason + R"(","code":)" + std::to_string(failure.code);
    if (failure.retry_after_seconds)
      body += R"(,"details":{"retryAfterSeconds":)" + std::to_string(*failure.retry_after_seconds) +
              "}";
    body += "}";
    return kube::error_from_response(
        what, failure.code, body,
        failure.retry_after_seconds ? std::to_string(*failure.retry_after_seconds) : std::string());
  }
  kube::Error missing(Call& c) { return error(c, not_found()); }

  std::optional<kube::Error> scripted(Call& c) {
    for (Rule& r : rules_) {
      if (r.times == 0 || r.verb != c.verb) continue;
      if (!r.resource.empty() && r.resource != c.resource) continue;
      if (!r.name.empty() && r.name != c.name) continue;
      if (r.times > 0) --r.times;
      return error(c, r.failure);
    }
    return std::nullopt;
  }

  const api::Document& store(const kube::ResourceType& type, api::Document doc) {
    auto& a = doc.GetAllocator();
    if (!doc.HasMember("metadata"))
      doc.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
    rapidjson::Value& md = doc["metadata"];
    md.RemoveMember("resourceVersion");
    md.AddMember("resourceVersion", api::make_string(std::to_string(++version_), a), a);
    if (type.kind == "CustomResourceDefinition") {
      doc.RemoveMember("status");
      rapidjson::Document status;
      status.Parse(R"({"conditions":[{"type":"Established","status":"True"}]})");
      doc.AddMember("status", rapidjson::Value(status, a), a);
    }
    Key k = key(type, api::string_at(doc, {"metadata", "namespace"}),
                api::string_at(doc, {"metadata", "name"}));
    api::Document& slot = objects_[k];
    slot.Swap(doc);
    return slot;
  }

  std::map<Key, api::Document> objects_;
  std::map<std::string, kube::ResourceType> types_;
  std::vector<Rule> rules_;
  std::vector<Call> calls_;
  long version_ = 100;
};

}  // namespace meshop::test_support
