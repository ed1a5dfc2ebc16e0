#include "reconcilers/webhooks.hpp"

#include <algorithm>
#include <tuple>

#include "api/istio_operator.hpp"
#include "api/mesh_conventions.hpp"
#include "operator/log/log.hpp"
#include "operator/manifest/render.hpp"
#include "operator/manifest/tag.hpp"
#include "reconcilers/errors.hpp"
#include "reconcilers/ownership.hpp"
#include "reconcilers/setup.hpp"
#include "reconcilers/watches.hpp"

namespace meshop::reconcilers {
namespace {

using Value = rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kManagedBy = api::kManagedByLabel;
constexpr std::string_view kMeshop = api::kManagedByValue;
constexpr std::string_view kOwningResource = api::kOwningResourceLabel;
constexpr std::string_view kOwningNamespace = api::kOwningResourceNamespaceLabel;
constexpr std::string_view kComponent = api::kComponentLabel;
constexpr std::string_view kIgnoreReconcile = api::kIgnoreReconcileAnnotation;
constexpr std::string_view kBundleKey = "ca-bundle.crt";

using api::set_member;

std::string key_of(const Value& object) {
  return api::string_at(object, {"metadata", "namespace"}) + "/" +
         api::string_at(object, {"metadata", "name"});
}

std::string label_of(const Value& object, std::string_view label) {
  const Value* labels = api::find(object, "/metadata/labels");
  if (labels == nullptr || !labels->IsObject()) return {};
  const Value* v = api::find_member(*labels, label);
  return v != nullptr && v->IsString() ? std::string(api::string_view_of(*v)) : std::string();
}

// "<namespace>/<name>" of the IstioOperator a live configuration was written for; "" when it
// was not written for one (foreign, or a tag made by `meshop tag set`).
std::string owner_of(const Value& mwc) {
  if (label_of(mwc, kManagedBy) != kMeshop) return {};
  std::string name = label_of(mwc, kOwningResource);
  if (name.empty()) return {};
  return label_of(mwc, kOwningNamespace) + "/" + name;
}

bool in_scope(const Value& mwc, const WebhooksConfig& config) {
  for (const auto& [k, v] : config.extra_labels)
    if (label_of(mwc, k) != v) return false;
  return true;
}

// A tag becomes part of an object name and a label value: a DNS-1123 label.
bool valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(tag.front()) || !alnum(tag.back())) return false;
  return std::all_of(tag.begin(), tag.end(), [&](char c) { return alnum(c) || c == '-'; });
}

bool truthy_at(const Value& root, std::string_view pointer) {
  const Value* v = api::find(root, pointer);
  return v != nullptr && v->IsBool() && v->GetBool();
}

struct Candidate {
  const Value* iop = nullptr;
  std::string key;
  std::string created;
  std::string revision;
  bool deleting = false;
  bool paused = false;
};

std::vector<Candidate> candidates(const std::vector<const Value*>& iops) {
  std::vector<Candidate> out;
  for (const Value* iop : iops) {
    if (iop == nullptr || !iop->IsObject()) continue;
    Candidate c;
    c.iop = iop;
    c.key = key_of(*iop);
    c.created = api::string_at(*iop, {"metadata", "creationTimestamp"});
    c.revision = api::string_at(*iop, {"spec", "revision"});
    if (c.revision.empty()) c.revision = kDefaultRevision;
    c.deleting = api::find(*iop, "/metadata/deletionTimestamp") != nullptr;
    c.paused = api::string_at(*iop, {"metadata", "annotations", kIgnoreReconcile}) == "true";
    out.push_back(std::move(c));
  }
  // The one ownership order (reconcilers/ownership.hpp).
  std::stable_sort(out.begin(), out.end(), [](const Candidate& x, const Candidate& y) {
    return owns_before(operator_ref(*x.iop), operator_ref(*y.iop));
  });
  return out;
}

std::string inject_path(std::string_view revision) {
  return revision == kDefaultRevision ? std::string("/inject")
                                      : "/inject/rev/" + std::string(revision);
}

// The live entry `entry_name` of the live configuration `name`, or null.
const Value* live_entry(const std::map<std::string, const Value*>& live, const std::string& name,
                        std::string_view entry_name) {
  auto it = live.find(name);
  if (it == live.end()) return nullptr;
  const Value* hooks = api::find_member(*it->second, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return nullptr;
  for (const Value& h : hooks->GetArray())
    if (api::string_at(h, {"name"}) == entry_name) return &h;
  return nullptr;
}

// Every entry calls meshop's injector for `revision`, trusting the bundle (or, without a
// Secret yet, what the live entry already trusts).
void point_at_meshop(Value& mwc, Allocator& a, const WebhooksConfig& config,
                     std::string_view revision, const WebhookObservation& observed,
                     const std::map<std::string, const Value*>& live) {
  std::string name = api::string_at(mwc, {"metadata", "name"});
  Value* hooks = api::find_member(mwc, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return;
  for (Value& h : hooks->GetArray()) {
    Value cc(rapidjson::kObjectType);
    if (config.url_base.empty()) {
      Value service(rapidjson::kObjectType);
      service.AddMember("name", api::make_string(config.service_name, a), a);
      service.AddMember("namespace", api::make_string(config.service_namespace, a), a);
      service.AddMember("path", api::make_string(inject_path(revision), a), a);
      service.AddMember("port", 443, a);
      cc.AddMember("service", service, a);
    } else {
      cc.AddMember("url", api::make_string(config.url_base + inject_path(revision), a), a);
    }
    std::string bundle;
    if (observed.ca_bundle) {
      bundle = *observed.ca_bundle;
    } else if (const Value* old = live_entry(live, name, api::string_at(h, {"name"}))) {
      bundle = api::string_at(*old, {"clientConfig", "caBundle"});
    }
    if (!bundle.empty()) cc.AddMember("caBundle", api::make_string(bundle, a), a);
    set_member(h, "clientConfig", std::move(cc), a);
  }
}

void add_labels(Value& mwc, Allocator& a, const Candidate& owner, std::string_view component,
                const WebhooksConfig& config) {
  Value& labels =
      api::ensure_object_member(api::ensure_object_member(mwc, "metadata", a), "labels", a);
  std::string_view ns = std::string_view(owner.key).substr(0, owner.key.find('/'));
  std::string_view name = std::string_view(owner.key).substr(owner.key.find('/') + 1);
  set_member(labels, kManagedBy, api::make_string(kMeshop, a), a);
  set_member(labels, kOwningResource, api::make_string(name, a), a);
  set_member(labels, kOwningNamespace, api::make_string(ns, a), a);
  set_member(labels, kComponent, api::make_string(component, a), a);
  for (const auto& [k, v] : config.extra_labels)
    set_member(labels, k, api::make_string(v, a), a);
}

// The auto. entry of a default tag (reference §2.3): every unlabelled namespace except the
// system ones, for pods without an opinion.
Value auto_entry(const Value& model, Allocator& a) {
  Value e;
  e.CopyFrom(model, a);
  set_member(e, "name", api::make_string("auto.sidecar-injector.istio.io", a), a);
  auto parsed = [&](std::string_view json) {
    auto d = api::parse_json(json);
    Value v;
    v.CopyFrom(*d, a);
    return v;
  };
  set_member(e, "namespaceSelector",
             parsed(api::injection_selector_json(api::InjectionEntry::kAuto, true)), a);
  set_member(e, "objectSelector",
             parsed(api::injection_selector_json(api::InjectionEntry::kAuto, false)), a);
  return e;
}

constexpr std::string_view kInvalidContext = "invalid IstioOperator";

// The revision configuration rendered for `iop` (null when it renders none), or an error to
// report.
api::Result<api::Document> render_revision_webhook(const Candidate& c) {
  auto valid = api::validate_istio_operator(*c.iop);
  if (!valid.ok())
    return api::Error{.message = std::string(kInvalidContext) + ": " + valid.message(),
                      .kind = api::ErrorKind::kInvalid};
  // meshop is the operator that manages webhooks: the chart switch that hands them to an
  // operator must not make them disappear.
  api::Document iop;
  iop.CopyFrom(*c.iop, iop.GetAllocator());
  auto& a = iop.GetAllocator();
  Value& global = api::ensure_object_member(
      api::ensure_object_member(api::ensure_object_member(iop, "spec", a), "values", a), "global",
      a);
  set_member(global, "operatorManageWebhooks", Value(false), a);
  auto rendered = manifest::render_istio_operator(iop);
  // A spec the render's validation refuses (values, meshConfig) is as invalid as one
  // api::validate_istio_operator refuses.
  if (!rendered) {
    api::Error e = std::move(rendered).error();
    return e.invalid() ? api::with_context(kInvalidContext, std::move(e)) : e;
  }
  // The revision's own configuration; the chart's tag configurations (values.revisionTags,
  // labelled istio.io/tag) are generated by this reconciler from it instead.
  for (manifest::RenderedObject& o : rendered->objects)
    if (api::string_at(o.object, {"kind"}) == "MutatingWebhookConfiguration" &&
        api::find(o.object, "/metadata/labels/istio.io~1tag") == nullptr)
      return std::move(o.object);
  return api::Document(rapidjson::kNullType);  // pilot disabled: no injector
}

// render_revision_webhook through `cache` (when given), keyed by the IstioOperator and its
// spec; `seen` collects the keys used so stale entries can be dropped.
api::Result<api::Document> cached_render(const Candidate& c, WebhookRenderCache* cache,
                                         std::set<std::string>& seen) {
  if (cache == nullptr) return render_revision_webhook(c);
  seen.insert(c.key);
  const Value* spec = api::find_member(*c.iop, "spec");
  std::string input = spec == nullptr ? std::string("null") : api::to_json(*spec);
  auto it = cache->entries.find(c.key);
  if (it == cache->entries.end() || it->second.input != input) {
    auto rendered = render_revision_webhook(c);
    WebhookRenderCache::Entry e;
    e.input = std::move(input);
    if (rendered)
      e.webhook = std::move(*rendered);
    else
      e.error = std::move(rendered).error();
    it = cache->entries.insert_or_assign(c.key, std::move(e)).first;
  }
  if (it->second.error) return *it->second.error;
  api::Document copy;
  copy.CopyFrom(it->second.webhook, copy.GetAllocator());
  return copy;
}

// Exact selector text of the matrix, for check_revision_webhook.
std::string expected_selector(std::string_view entry, bool ns, std::string_view rev) {
  using api::InjectionEntry;
  InjectionEntry which = entry == "rev.namespace." ? InjectionEntry::kRevNamespace
                         : entry == "rev.object."  ? InjectionEntry::kRevObject
                         : entry == "namespace."   ? InjectionEntry::kNamespace
                         : entry == "object."      ? InjectionEntry::kObject
                                                   : InjectionEntry::kAuto;
  return api::injection_selector_json(which, ns, rev);
}

// desired ⊆ live: every member of a desired object is in live with a value that contains it;
// arrays element-wise with the same length; scalars equal.
bool contains(const Value& desired, const Value& live) {
  if (desired.IsObject()) {
    if (!live.IsObject()) return false;
    for (const auto& m : desired.GetObject()) {
      const Value* l = api::find_member(live, api::string_view_of(m.name));
      if (l == nullptr || !contains(m.value, *l)) return false;
    }
    return true;
  }
  if (desired.IsArray()) {
    if (!live.IsArray() || live.Size() != desired.Size()) return false;
    for (rapidjson::SizeType i = 0; i < desired.Size(); ++i)
      if (!contains(desired[i], live[i])) return false;
    return true;
  }
  return api::json_equal(desired, live);
}

}  // namespace

api::Result<api::Ok> check_revision_webhook(const Value& mwc, std::string_view revision,
                                            bool auto_inject) {
  const std::string name =
      "mutatingwebhookconfiguration " + api::string_at(mwc, {"metadata", "name"});
  std::vector<std::string> expected = {"rev.namespace.", "rev.object."};
  if (revision == kDefaultRevision) {
    expected.push_back("namespace.");
    expected.push_back("object.");
    if (auto_inject) expected.push_back("auto.");
  }
  const Value* hooks = api::find_member(mwc, "webhooks");
  if (hooks == nullptr || !hooks->IsArray()) return api::Error{name + ": webhooks: missing"};
  std::vector<std::string> names;
  for (const Value& h : hooks->GetArray())
    names.push_back(api::string_at(h, {"name"}));
  std::vector<std::string> want;
  for (const std::string& p : expected)
    want.push_back(p + "sidecar-injector.istio.io");
  {
    auto a = names, b = want;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b) {
      std::string got;
      for (const std::string& n : names)
        got += (got.empty() ? "" : ", ") + n;
      return api::Error{name + ": webhooks: expected the entries of revision " +
                        std::string(revision) + ", got [" + got + "]"};
    }
  }
  for (rapidjson::SizeType i = 0; i < hooks->Size(); ++i) {
    const Value& h = (*hooks)[i];
    std::string entry = api::string_at(h, {"name"});
    std::string where = name + ": webhooks[" + std::to_string(i) + "] (" + entry + ")";
    std::string prefix =
        entry.substr(0, entry.size() - std::string_view("sidecar-injector.istio.io").size());
    if (api::string_at(h, {"failurePolicy"}) != "Fail")
      return api::Error{where + ".failurePolicy: expected Fail"};
    if (api::string_at(h, {"sideEffects"}) != "None")
      return api::Error{where + ".sideEffects: expected None"};
    // The apiserver adds scope "*" to a rule; anything else must be exactly this.
    auto rule = api::parse_json(
        R"({"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["pods"]})");
    const Value* r = api::find_member(h, "rules");
    bool rule_ok = r != nullptr && r->IsArray() && r->Size() == 1 && (*r)[0].IsObject();
    if (rule_ok) {
      api::Document copy;
      copy.CopyFrom((*r)[0], copy.GetAllocator());
      if (api::string_at(copy, {"scope"}) == "*") copy.RemoveMember("scope");
      rule_ok = api::json_equal(copy, *rule);
    }
    if (!rule_ok) return api::Error{where + ".rules: expected CREATE of v1 pods only"};
    auto versions = api::parse_json(R"(["v1"])");
    const Value* v = api::find_member(h, "admissionReviewVersions");
    if (v == nullptr || !api::json_equal(*v, *versions))
      return api::Error{where + ".admissionReviewVersions: expected [v1]"};
    const Value* t = api::find_member(h, "timeoutSeconds");
    // Istio's charts leave it to the apiserver's default (10 s).
    if (t != nullptr && (!t->IsInt() || t->GetInt() < 1 || t->GetInt() > 30))
      return api::Error{where + ".timeoutSeconds: expected 1..30 (or unset: 10)"};
    for (bool ns : {true, false}) {
      const char* field = ns ? "namespaceSelector" : "objectSelector";
      auto want_sel = api::parse_json(expected_selector(prefix, ns, revision));
      const Value* s = api::find_member(h, field);
      if (s == nullptr || !api::json_equal(*s, *want_sel))
        return api::Error{where + "." + field + ": expected " + api::to_json(*want_sel) + ", got " +
                          (s == nullptr ? std::string("none") : api::to_json(*s))};
    }
  }
  return api::Ok{};
}

bool webhook_up_to_date(const Value& desired, const Value& live) {
  const Value* want_labels = api::find(desired, "/metadata/labels");
  const Value* have_labels = api::find(live, "/metadata/labels");
  if (want_labels != nullptr && (have_labels == nullptr || !contains(*want_labels, *have_labels)))
    return false;
  const Value* want = api::find_member(desired, "webhooks");
  const Value* have = api::find_member(live, "webhooks");
  if (want == nullptr || !want->IsArray()) return true;
  if (have == nullptr || !have->IsArray()) return false;
  for (const Value& w : want->GetArray()) {
    std::string entry = api::string_at(w, {"name"});
    const Value* h = nullptr;
    for (const Value& x : have->GetArray())
      if (api::string_at(x, {"name"}) == entry) h = &x;
    if (h == nullptr) return false;
    for (const auto& m : w.GetObject()) {
      std::string_view field = api::string_view_of(m.name);
      const Value* l = api::find_member(*h, field);
      if (l == nullptr) return false;
      bool selector = field == "namespaceSelector" || field == "objectSelector";
      if (selector ? !api::json_equal(m.value, *l) : !contains(m.value, *l)) return false;
    }
  }
  return true;
}

namespace {

using LiveWebhooks = std::map<std::string, const Value*>;  // by name

// Who owns each revision: the oldest IstioOperator of it, not being deleted unless paused.
struct RevisionOwners {
  std::map<std::string, const Candidate*> by_revision;
  std::vector<const Candidate*> owners;  // in ownership order
  // Owners whose live configurations stay as they are (paused, or their render failed).
  std::set<std::string> kept;
};

RevisionOwners revision_owners(const std::vector<Candidate>& all,
                               std::vector<WebhookProblem>& problems) {
  RevisionOwners out;
  for (const Candidate& c : all) {
    if (c.paused) out.kept.insert(c.key);
    if (c.deleting && !c.paused) continue;
    if (auto it = out.by_revision.find(c.revision); it != out.by_revision.end()) {
      problems.push_back({c.key, "RevisionConflict",
                          "revision " + c.revision + " belongs to the older IstioOperator " +
                              it->second->key +
                              "; this one's webhook configurations are not installed"});
      continue;
    }
    out.by_revision[c.revision] = &c;
    out.owners.push_back(&c);
  }
  return out;
}

// Each unpaused owner's revision configuration, rendered, checked against the selector matrix,
// labelled and pointed at meshop; by IstioOperator key. An owner whose render fails is kept.
std::map<std::string, api::Document> revision_webhooks(
    const WebhooksConfig& config, const WebhookObservation& observed, const LiveWebhooks& live,
    RevisionOwners& owners, WebhookRenderCache* cache, std::vector<WebhookProblem>& problems) {
  std::map<std::string, api::Document> out;
  std::set<std::string> seen;  // cache keys still in use
  for (const Candidate* c : owners.owners) {
    if (c->paused) continue;
    auto rendered = cached_render(*c, cache, seen);
    if (!rendered) {
      bool invalid = rendered.error().invalid();
      problems.push_back({c->key, invalid ? "InvalidSpec" : "RenderFailed",
                          "webhook configurations left as they are: " + rendered.message()});
      owners.kept.insert(c->key);
      continue;
    }
    if (rendered->IsNull()) continue;
    api::Document& mwc = *rendered;
    bool auto_inject =
        truthy_at(*c->iop, "/spec/values/sidecarInjectorWebhook/enableNamespacesByDefault");
    if (auto ok = check_revision_webhook(mwc, c->revision, auto_inject); !ok) {
      problems.push_back(
          {c->key, "RenderFailed", "webhook configurations left as they are: " + ok.message()});
      owners.kept.insert(c->key);
      continue;
    }
    auto& a = mwc.GetAllocator();
    add_labels(mwc, a, *c, "Pilot", config);
    Value& labels =
        api::ensure_object_member(api::ensure_object_member(mwc, "metadata", a), "labels", a);
    set_member(labels, manifest::kRevisionLabel, api::make_string(c->revision, a), a);
    point_at_meshop(mwc, a, config, c->revision, observed, live);
    out.emplace(c->key, std::move(mwc));
  }
  if (cache != nullptr)
    std::erase_if(cache->entries, [&](const auto& e) { return seen.count(e.first) == 0; });
  return out;
}

// The names a tag may not take: every revision, meshop's and other installers' live ones.
std::set<std::string> revision_names(const RevisionOwners& owners, const LiveWebhooks& live) {
  std::set<std::string> out;
  for (const auto& [rev, c] : owners.by_revision)
    out.insert(rev);
  for (const auto& [name, mwc] : live)
    if (owner_of(*mwc).empty() && label_of(*mwc, manifest::kTagLabel).empty() &&
        !label_of(*mwc, manifest::kRevisionLabel).empty() && label_of(*mwc, kManagedBy) != kMeshop)
      out.insert(label_of(*mwc, manifest::kRevisionLabel));
  return out;
}

// The tags' configurations (spec.values.revisionTags of each owner, the oldest claim winning),
// each generated from its revision's configuration. A tag named as a revision is refused
// (except `default`).
std::vector<DesiredWebhook> tag_webhooks(const WebhooksConfig& config, const RevisionOwners& owners,
                                         const std::map<std::string, api::Document>& revision,
                                         const std::set<std::string>& revisions,
                                         std::vector<WebhookProblem>& problems) {
  std::map<std::string, const Candidate*> tag_owner;
  std::vector<DesiredWebhook> out;
  for (const Candidate* c : owners.owners) {
    const Value* list = api::find(*c->iop, "/spec/values/revisionTags");
    if (list == nullptr || !list->IsArray()) continue;
    for (const Value& t : list->GetArray()) {
      std::string tag = t.IsString() ? std::string(api::string_view_of(t)) : std::string();
      if (auto it = tag_owner.find(tag); it != tag_owner.end() && it->second == c) continue;
      if (!valid_tag(tag)) {
        problems.push_back({c->key, "InvalidTag",
                            "spec.values.revisionTags: \"" + tag +
                                "\" is not a valid tag name (a DNS-1123 label); skipped"});
        continue;
      }
      if (tag != kDefaultRevision && revisions.count(tag) != 0) {
        problems.push_back(
            {c->key, "TagConflict", "tag " + tag + " is the name of a revision; skipped"});
        continue;
      }
      if (auto it = tag_owner.find(tag); it != tag_owner.end()) {
        problems.push_back({c->key, "TagConflict",
                            "tag " + tag + " already points at revision " + it->second->revision +
                                " (IstioOperator " + it->second->key + ", older); skipped"});
        continue;
      }
      tag_owner[tag] = c;
      auto rw = revision.find(c->key);
      if (rw == revision.end()) {
        if (!c->paused && owners.kept.count(c->key) == 0)
          problems.push_back({c->key, "TagSkipped",
                              "tag " + tag + ": revision " + c->revision +
                                  " has no injector configuration (pilot disabled); skipped"});
        continue;
      }
      auto generated = manifest::generate_tag_webhook(rw->second, tag, c->revision);
      if (!generated) {
        problems.push_back({c->key, "TagSkipped", "tag " + tag + ": " + generated.message()});
        continue;
      }
      api::Document& mwc = *generated;
      auto& a = mwc.GetAllocator();
      if (tag == kDefaultRevision &&
          truthy_at(*c->iop, "/spec/values/sidecarInjectorWebhook/enableNamespacesByDefault")) {
        Value* hooks = api::find_member(mwc, "webhooks");
        Value e = auto_entry((*hooks)[0], a);
        hooks->PushBack(e, a);
      }
      add_labels(mwc, a, *c, "Pilot", config);
      DesiredWebhook d;
      d.name = api::string_at(mwc, {"metadata", "name"});
      d.owner = c->key;
      d.revision = c->revision;
      d.tag = tag;
      d.object = std::move(mwc);
      out.push_back(std::move(d));
    }
  }
  return out;
}

// Into `out`: the configurations to write (revisions' then tags'; neither a kept one nor a name
// desired twice), the kept live names and the live ones of meshop's in scope to prune.
void select_writes(const WebhooksConfig& config, const LiveWebhooks& live,
                   const RevisionOwners& owners, std::map<std::string, api::Document>& revision,
                   std::vector<DesiredWebhook> tags, DesiredWebhooks& out) {
  std::vector<DesiredWebhook> desired;
  for (const Candidate* c : owners.owners) {
    auto rw = revision.find(c->key);
    if (rw == revision.end()) continue;
    DesiredWebhook d;
    d.name = api::string_at(rw->second, {"metadata", "name"});
    d.owner = c->key;
    d.revision = c->revision;
    d.object = std::move(rw->second);
    desired.push_back(std::move(d));
  }
  for (DesiredWebhook& t : tags)
    desired.push_back(std::move(t));

  for (const auto& [name, mwc] : live)
    if (std::string owner = owner_of(*mwc); !owner.empty() && owners.kept.count(owner) != 0)
      out.kept.insert(name);
  std::set<std::string> names;
  for (DesiredWebhook& d : desired) {
    if (out.kept.count(d.name) != 0) continue;
    if (!names.insert(d.name).second) {
      out.problems.push_back({d.owner, "RenderFailed",
                              "webhook configuration " + d.name +
                                  " is already desired for another IstioOperator; skipped"});
      continue;
    }
    out.webhooks.push_back(std::move(d));
  }

  for (const auto& [name, mwc] : live) {
    std::string owner = owner_of(*mwc);
    if (owner.empty() || !in_scope(*mwc, config)) continue;
    if (names.count(name) == 0 && out.kept.count(name) == 0) out.prune.push_back(name);
  }
}

// The default tag, desired or left in place by someone else, takes the legacy selectors: the
// default revision's own configuration is deactivated. Only a tag written in this pass or
// already live counts: a paused IstioOperator's claim on `default` with no configuration yet
// must not leave the legacy selectors unserved.
void deactivate_default_revision_if_tagged(const LiveWebhooks& live, DesiredWebhooks& out) {
  bool default_tag = std::any_of(out.webhooks.begin(), out.webhooks.end(),
                                 [](const DesiredWebhook& d) { return d.tag == kDefaultRevision; });
  for (const auto& [name, mwc] : live)
    if (label_of(*mwc, manifest::kTagLabel) == kDefaultRevision &&
        std::find(out.prune.begin(), out.prune.end(), name) == out.prune.end())
      default_tag = true;
  if (!default_tag) return;
  for (DesiredWebhook& d : out.webhooks)
    if (d.tag.empty() && d.revision == kDefaultRevision) {
      d.object = manifest::deactivate_webhook(d.object);
      d.deactivated = true;
    }
}

}  // namespace

DesiredWebhooks compute_desired_webhooks(const WebhooksConfig& config,
                                         const WebhookObservation& observed,
                                         WebhookRenderCache* cache) {
  DesiredWebhooks out;
  LiveWebhooks live;
  for (const Value* mwc : observed.configurations)
    if (mwc != nullptr && mwc->IsObject()) live[api::string_at(*mwc, {"metadata", "name"})] = mwc;

  const std::vector<Candidate> all = candidates(observed.istio_operators);
  RevisionOwners owners = revision_owners(all, out.problems);
  std::map<std::string, api::Document> revision =
      revision_webhooks(config, observed, live, owners, cache, out.problems);
  std::vector<DesiredWebhook> tags =
      tag_webhooks(config, owners, revision, revision_names(owners, live), out.problems);
  select_writes(config, live, owners, revision, std::move(tags), out);
  deactivate_default_revision_if_tagged(live, out);

  std::stable_sort(out.webhooks.begin(), out.webhooks.end(),
                   [](const DesiredWebhook& x, const DesiredWebhook& y) {
                     return std::tie(x.deactivated, x.name) < std::tie(y.deactivated, y.name);
                   });
  return out;
}

WebhooksReconciler::WebhooksReconciler(std::shared_ptr<kube::Client> client, WebhooksConfig config,
                                       metrics::Registry* registry,
                                       std::shared_ptr<kube::EventRecorder> events)
    : WebhooksReconciler(kube::client_reader(client),
                         kube::client_writer(client, std::move(events)), std::move(config),
                         registry) {}

WebhooksReconciler::WebhooksReconciler(std::shared_ptr<kube::Reader> reader,
                                       std::shared_ptr<kube::Writer> writer, WebhooksConfig config,
                                       metrics::Registry* registry)
    : reader_(std::move(reader)), writer_(std::move(writer)), config_(std::move(config)) {
  if (registry != nullptr) {
    applied_ = &registry->counter("meshop_webhook_configurations_applied_total",
                                  "MutatingWebhookConfigurations written by the webhooks "
                                  "reconciler (created or repaired).");
    pruned_ = &registry->counter("meshop_webhook_configurations_pruned_total",
                                 "MutatingWebhookConfigurations deleted by the webhooks "
                                 "reconciler.");
  }
}

kube::Task<api::Result<WebhooksOutcome>> WebhooksReconciler::reconcile_once() {
  WebhooksOutcome outcome;

  // Observe.
  kube::ListOptions iop_options;
  iop_options.label_selector = config_.iop_selector;
  auto iops = co_await reader_->list_all(istio_operator_resource(), "", iop_options);
  if (!iops) co_return api::with_context("listing IstioOperators", iops.error());
  auto mwcs = co_await reader_->list_all(kube::resources::kMutatingWebhookConfigurations, "",
                                         kube::ListOptions());
  if (!mwcs) co_return mwcs.error();
  auto secret = co_await reader_->get(kube::resources::kSecrets, config_.secret_namespace,
                                      config_.secret_name);
  if (!secret && !secret.error().is(kube::ErrorKind::kNotFound)) co_return secret.error();

  WebhookObservation observed;
  for (const Value& iop : iops->list["items"].GetArray())
    observed.istio_operators.push_back(&iop);
  std::map<std::string, const Value*> live;
  for (const Value& mwc : mwcs->list["items"].GetArray()) {
    observed.configurations.push_back(&mwc);
    live[api::string_at(mwc, {"metadata", "name"})] = &mwc;
  }
  if (secret) {
    std::string bundle = api::string_at(*secret, {"data", kBundleKey});
    if (!bundle.empty()) observed.ca_bundle = bundle;
  }
  outcome.secret_missing = !observed.ca_bundle.has_value();

  // Desired.
  DesiredWebhooks desired = compute_desired_webhooks(config_, observed, &cache_);
  outcome.problems = desired.problems;
  std::map<std::string, const Value*> iop_by_key;
  for (const Value* iop : observed.istio_operators)
    iop_by_key[key_of(*iop)] = iop;
  for (const WebhookProblem& p : desired.problems) {
    log::warn("webhook configuration problem", {{"controller", "webhooks"},
                                                {"object", p.iop},
                                                {"reason", p.reason},
                                                {"detail", p.message}});
    if (iop_by_key.count(p.iop) != 0)
      writer_->event(kube::reference_to(*iop_by_key[p.iop]), kube::EventType::kWarning, p.reason,
                     "ReconcileWebhooks", p.message);
  }

  // Apply: activations, then deactivations (the order of desired.webhooks).
  for (const DesiredWebhook& d : desired.webhooks) {
    if (auto it = live.find(d.name);
        it != live.end() && webhook_up_to_date(d.object, *it->second)) {
      outcome.unchanged.push_back(d.name);
      continue;
    }
    auto applied = co_await writer_->apply(kube::resources::kMutatingWebhookConfigurations,
                                           d.object, config_.field_manager, true);
    if (!applied)
      co_return api::with_context("applying mutatingwebhookconfiguration " + d.name,
                                  applied.error());
    outcome.applied.push_back(d.name);
    if (applied_ != nullptr) applied_->get().Increment();
    log::info("applied webhook configuration", {{"controller", "webhooks"},
                                                {"webhook", d.name},
                                                {"revision", d.revision},
                                                {"tag", d.tag},
                                                {"deactivated", d.deactivated}});
  }

  // Prune.
  for (const std::string& name : desired.prune) {
    kube::DeleteOptions options;
    options.precondition_resource_version =
        api::string_at(*live[name], {"metadata", "resourceVersion"});
    auto removed = co_await writer_->remove(kube::resources::kMutatingWebhookConfigurations, "",
                                            name, options);
    if (!removed && removed.error().is(kube::ErrorKind::kConflict)) {
      // Changed since it was listed (e.g. a caBundle update): the next pass decides again.
      log::info("webhook configuration changed before pruning; left for the next pass",
                {{"controller", "webhooks"}, {"webhook", name}});
      continue;
    }
    if (!removed && !removed.error().is(kube::ErrorKind::kNotFound))
      co_return api::with_context("deleting mutatingwebhookconfiguration " + name, removed.error());
    outcome.pruned.push_back(name);
    if (pruned_ != nullptr) pruned_->get().Increment();
    log::info("pruned webhook configuration", {{"controller", "webhooks"}, {"webhook", name}});
  }
  co_return outcome;
}

kube::Task<runtime::Action> WebhooksReconciler::reconcile(const std::string& /*key*/) {
  auto outcome = co_await reconcile_once();
  if (!outcome) co_return error_action(outcome.error());
  co_return runtime::Action::requeue_after(outcome->secret_missing ? config_.secret_missing_requeue
                                                                   : config_.resync);
}

void setup_webhooks(const OperatorSetup& setup, WebhooksConfig config) {
  auto reconciler = std::make_shared<WebhooksReconciler>(setup.reader(), setup.writer(),
                                                         std::move(config), setup.registry);
  setup.controller("webhooks")
      .singleton(kAllKey)
      .watches(watches::istio_operators())
      .watches(watches::mutating_webhook_configurations())
      .watches(watches::webhook_secret(setup.ns))
      .complete([reconciler](const std::string& key) { return reconciler->reconcile(key); });
}

}  // namespace meshop::reconcilers
