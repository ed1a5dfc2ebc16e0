// Which injector revision the apiserver would call for a pod: the selector evaluation the
// apiserver does over every MutatingWebhookConfiguration, reduced to Istio's injector entries.
//
// An injector entry is a webhook whose name ends with `sidecar-injector.istio.io` in a
// configuration labelled `istio.io/rev` (the revision that serves it: a revision's own
// configuration, or a tag's `istio-revision-tag-<tag>`, which also carries `istio.io/tag`).
// For a pod in a namespace, an entry is called when its namespaceSelector matches the
// namespace's labels and its objectSelector matches the pod's labels (both absent selectors
// match everything, as in the API). Istio's selectors make at most one revision match; when
// several do (a misconfiguration, e.g. a namespace with both `istio-injection=enabled` and an
// `istio.io/rev` pointing elsewhere is NOT one — `istio-injection` wins by construction), the
// route reports every revision so callers can raise a conflict instead of guessing.
//
// Pure: no I/O; inputs are the JSON objects as read from the API.
#pragma once

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "api/label_selector.hpp"
#include "api/result.hpp"

namespace meshop::restart {

struct InjectorEntry {
  std::string configuration;  // MutatingWebhookConfiguration name
  std::string entry;          // webhook entry name
  std::string revision;       // istio.io/rev of the configuration ("default" for the default)
  std::string tag;            // istio.io/tag of the configuration, "" for a revision's own
  api::LabelSelector namespace_selector;
  api::LabelSelector object_selector;
};

// The injector entries of `configurations` (an array of MutatingWebhookConfiguration
// objects), sorted by configuration name then entry order, as the apiserver calls them.
// A selector that does not parse is an error naming the configuration and the field.
api::Result<std::vector<InjectorEntry>> injector_entries(const rapidjson::Value& configurations);

struct Route {
  // Revisions whose entries match, without duplicates, in call order. Empty: no injection.
  std::vector<std::string> revisions;
  // The first matching entry (for messages), or null.
  const InjectorEntry* entry = nullptr;
  // Every matching entry, in call order: more than one injects the pod more than once, even
  // when they serve the same revision (Istio's analyzer reports that as IST0139).
  std::vector<const InjectorEntry*> matched;

  bool injected() const { return !revisions.empty(); }
  bool conflict() const { return revisions.size() > 1; }
  bool overlap() const { return matched.size() > 1; }
  const std::string& revision() const { return revisions.front(); }
};

// `namespace_labels` / `pod_labels` are label objects (or null for none).
Route route(const std::vector<InjectorEntry>& entries, const rapidjson::Value* namespace_labels,
            const rapidjson::Value* pod_labels);

}  // namespace meshop::restart
