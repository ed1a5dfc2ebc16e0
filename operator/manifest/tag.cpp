#include "operator/manifest/tag.hpp"

#include <vector>

#include "api/json.hpp"

namespace meshop::manifest {
namespace {

using Value = rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kRevNamespace = "rev.namespace.sidecar-injector.istio.io";
constexpr std::string_view kRevObject = "rev.object.sidecar-injector.istio.io";

// Replaces the values of every `istio.io/rev In [...]` expression of `selector` by [tag].
void retarget(Value* selector, std::string_view tag, Allocator& a) {
  if (selector == nullptr || !selector->IsObject()) return;
  Value* exprs = api::find_member(*selector, "matchExpressions");
  if (exprs == nullptr || !exprs->IsArray()) return;
  for (Value& e : exprs->GetArray()) {
    if (api::string_at(e, {"key"}) != kRevisionLabel || api::string_at(e, {"operator"}) != "In")
      continue;
    Value values(rapidjson::kArrayType);
    values.PushBack(api::make_string(tag, a), a);
    if (e.HasMember("values")) e.RemoveMember("values");
    e.AddMember("values", values, a);
  }
}

// The selector of a legacy entry, as the webhook reconciler also writes it.
Value selector(api::InjectionEntry entry, bool namespace_side, Allocator& a) {
  auto d = api::parse_json(api::injection_selector_json(entry, namespace_side));
  Value v;
  v.CopyFrom(*d, a);
  return v;
}

// A copy of `entry` renamed and with new selectors, keeping clientConfig, rules and the rest.
Value legacy_entry(const Value& entry, std::string_view name, Value ns_selector, Value obj_selector,
                   Allocator& a) {
  Value out;
  out.CopyFrom(entry, a);
  out["name"] = api::make_string(name, a);
  for (const char* field : {"namespaceSelector", "objectSelector"})
    if (out.HasMember(field)) out.RemoveMember(field);
  out.AddMember("namespaceSelector", ns_selector, a);
  out.AddMember("objectSelector", obj_selector, a);
  return out;
}

}  // namespace

std::string tag_webhook_name(std::string_view tag, std::string_view istio_namespace) {
  std::string name = std::string(api::kTagWebhookPrefix) + std::string(tag);
  if (!istio_namespace.empty() && istio_namespace != kDefaultIstioNamespace)
    name += "-" + std::string(istio_namespace);
  return name;
}

std::string revision_webhook_namespace(std::string_view webhook_name, std::string_view revision) {
  constexpr std::string_view kBase = api::kRevisionWebhookPrefix;
  // The chart adds -<revision> for every non-empty values.revision (also an explicit
  // "default"); the default revision usually has none.
  std::vector<std::string> prefixes;
  if (!revision.empty()) prefixes.push_back(std::string(kBase) + "-" + std::string(revision));
  if (api::is_default_revision(revision)) prefixes.emplace_back(kBase);
  for (const std::string& p : prefixes) {
    if (webhook_name == p) return std::string(kDefaultIstioNamespace);
    if (webhook_name.size() > p.size() + 1 && webhook_name.starts_with(p) &&
        webhook_name[p.size()] == '-')
      return std::string(webhook_name.substr(p.size() + 1));
  }
  return std::string(kDefaultIstioNamespace);
}

api::Result<rapidjson::Document> generate_tag_webhook(const rapidjson::Value& revision_webhook,
                                                      std::string_view tag,
                                                      std::string_view revision,
                                                      std::string_view istio_namespace) {
  std::string source = api::string_at(revision_webhook, {"metadata", "name"});
  std::string ns = istio_namespace.empty() ? revision_webhook_namespace(source, revision)
                                           : std::string(istio_namespace);
  if (!api::string_at(revision_webhook, {"metadata", "labels", kTagLabel}).empty())
    return api::Error{"mutatingwebhookconfiguration " + source + " is itself a tag"};
  const Value* hooks = api::find_member(revision_webhook, "webhooks");
  if (hooks == nullptr || !hooks->IsArray())
    return api::Error{"mutatingwebhookconfiguration " + source + ": no webhooks"};

  rapidjson::Document out(rapidjson::kObjectType);
  auto& a = out.GetAllocator();
  out.AddMember("apiVersion", "admissionregistration.k8s.io/v1", a);
  out.AddMember("kind", "MutatingWebhookConfiguration", a);
  Value meta(rapidjson::kObjectType);
  meta.AddMember("name", api::make_string(tag_webhook_name(tag, ns), a), a);
  Value labels(rapidjson::kObjectType);
  labels.AddMember(api::make_string(kRevisionLabel, a), api::make_string(revision, a), a);
  labels.AddMember(api::make_string(kTagLabel, a), api::make_string(tag, a), a);
  labels.AddMember("app", "sidecar-injector", a);
  labels.AddMember(api::make_string(api::kManagedByLabel, a),
                   api::make_string(api::kManagedByValue, a), a);
  meta.AddMember("labels", labels, a);
  out.AddMember("metadata", meta, a);

  Value entries(rapidjson::kArrayType);
  const Value* rev_namespace = nullptr;
  for (const Value& h : hooks->GetArray()) {
    std::string name = api::string_at(h, {"name"});
    if (name != kRevNamespace && name != kRevObject) continue;
    if (name == kRevNamespace) rev_namespace = &h;
    Value copy;
    copy.CopyFrom(h, a);
    retarget(api::find_member(copy, "namespaceSelector"), tag, a);
    retarget(api::find_member(copy, "objectSelector"), tag, a);
    entries.PushBack(copy, a);
  }
  if (entries.Size() != 2 || rev_namespace == nullptr)
    return api::Error{"mutatingwebhookconfiguration " + source + " has no " +
                      std::string(kRevNamespace) + " and " + std::string(kRevObject) +
                      " entries to copy"};

  if (tag == "default") {
    // The legacy selectors of the default revision (reference §2.1), calling this revision.
    using api::InjectionEntry;
    entries.PushBack(legacy_entry(*rev_namespace, "namespace.sidecar-injector.istio.io",
                                  selector(InjectionEntry::kNamespace, true, a),
                                  selector(InjectionEntry::kNamespace, false, a), a),
                     a);
    entries.PushBack(legacy_entry(*rev_namespace, "object.sidecar-injector.istio.io",
                                  selector(InjectionEntry::kObject, true, a),
                                  selector(InjectionEntry::kObject, false, a), a),
                     a);
  }
  out.AddMember("webhooks", entries, a);
  return out;
}

rapidjson::Document deactivate_webhook(const rapidjson::Value& webhook) {
  rapidjson::Document out;
  out.CopyFrom(webhook, out.GetAllocator());
  auto& a = out.GetAllocator();
  Value* hooks = api::find_member(out, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return out;
  for (Value& h : hooks->GetArray()) {
    for (const char* field : {"namespaceSelector", "objectSelector"}) {
      if (h.HasMember(field)) h.RemoveMember(field);
      Value labels(rapidjson::kObjectType);
      labels.AddMember("istio.io/deactivated", "never-match", a);
      Value s(rapidjson::kObjectType);
      s.AddMember("matchLabels", labels, a);
      h.AddMember(rapidjson::StringRef(field), s, a);
    }
  }
  return out;
}

bool is_deactivated(const rapidjson::Value& webhook) {
  const Value* hooks = api::find_member(webhook, "webhooks");
  if (hooks == nullptr || !hooks->IsArray() || hooks->Empty()) return false;
  for (const Value& h : hooks->GetArray())
    if (api::string_at(h, {"namespaceSelector", "matchLabels", "istio.io/deactivated"}) !=
        "never-match")
      return false;
  return true;
}

}  // namespace meshop::manifest
