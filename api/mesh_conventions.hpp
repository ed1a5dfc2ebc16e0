// Istio's naming and labelling conventions, in one place: what the install, webhooks,
// revisions, certificates and restarts reconcilers, the webhook and the CLI agree on. A
// convention written twice drifts; every use reads it from here.
//
// Pure constants and string functions; safe from any thread.
#pragma once

#include <string>
#include <string_view>

namespace meshop::api {

// ---- Revisions ----

// The revision of an IstioOperator without spec.revision, and of istiod without a suffix.
inline constexpr std::string_view kDefaultRevision = "default";
// "" and "default" both name the default revision (upstream treats them alike).
inline bool is_default_revision(std::string_view revision) {
  return revision.empty() || revision == kDefaultRevision;
}
// The revision's name with "" written as "default".
inline std::string normalize_revision(std::string_view revision) {
  return std::string(revision.empty() ? kDefaultRevision : revision);
}

// ---- Labels and annotations ----

// A namespace's or pod's revision, and a webhook configuration's revision.
inline constexpr std::string_view kRevisionLabel = "istio.io/rev";
// A namespace's ambient data-plane mode (istio.io/dataplane-mode=ambient: not sidecar-injected).
inline constexpr std::string_view kDataplaneModeLabel = "istio.io/dataplane-mode";
// The label istioctl's never-matching webhook selectors test (a deactivated tag webhook).
inline constexpr std::string_view kDeactivatedLabel = "istio.io/deactivated";
// A revision tag's webhook configuration names its tag with this label.
inline constexpr std::string_view kTagLabel = "istio.io/tag";
// The legacy namespace label (enabled|disabled); it beats istio.io/rev.
inline constexpr std::string_view kInjectionLabel = "istio-injection";
// A pod's own opinion ("true"|"false"), read by the webhook's object selectors and the engine.
inline constexpr std::string_view kPodInjectLabel = "sidecar.istio.io/inject";
// The label the apiserver sets on every namespace to its name.
inline constexpr std::string_view kNamespaceNameLabel = "kubernetes.io/metadata.name";
// The namespaces injection never touches (the engine's and the auto. entry's list).
inline constexpr std::string_view kNeverInjectedNamespaces[] = {
    "kube-system", "kube-public", "kube-node-lease", "local-path-storage"};
// The labels every object meshop installs for an IstioOperator carries (operator contract).
inline constexpr std::string_view kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kManagedByValue = "meshop";
// The label selector of everything meshop manages.
inline constexpr std::string_view kManagedSelector = "app.kubernetes.io/managed-by=meshop";
inline constexpr std::string_view kOwningResourceLabel =
    "install.operator.istio.io/owning-resource";
inline constexpr std::string_view kOwningResourceNamespaceLabel =
    "install.operator.istio.io/owning-resource-namespace";
inline constexpr std::string_view kComponentLabel = "operator.istio.io/component";
// An IstioOperator annotated "true" is paused: nothing is written for it.
inline constexpr std::string_view kIgnoreReconcileAnnotation = "install.istio.io/ignoreReconcile";

// ---- Injected pods ----

// The containers injection adds, and the annotations it writes and reads on a pod.
inline constexpr std::string_view kProxyContainerName = "istio-proxy";
inline constexpr std::string_view kInitContainerName = "istio-init";
inline constexpr std::string_view kValidationContainerName = "istio-validation";
// What was injected (containers, volumes, revision): upstream's SidecarStatus as JSON.
inline constexpr std::string_view kStatusAnnotation = "sidecar.istio.io/status";
inline constexpr std::string_view kOverridesAnnotation = "proxy.istio.io/overrides";

// ---- ConfigMaps and webhook configurations ----

// The injector ConfigMap (keys config, values) and the mesh ConfigMap (key mesh) of a revision:
// the base name for the default revision, "<base>-<revision>" for another.
inline constexpr std::string_view kInjectorConfigMap = "istio-sidecar-injector";
inline constexpr std::string_view kMeshConfigMap = "istio";
inline std::string injector_configmap_name(std::string_view revision) {
  return is_default_revision(revision)
             ? std::string(kInjectorConfigMap)
             : std::string(kInjectorConfigMap) + "-" + std::string(revision);
}
inline std::string mesh_configmap_name(std::string_view revision) {
  return is_default_revision(revision) ? std::string(kMeshConfigMap)
                                       : std::string(kMeshConfigMap) + "-" + std::string(revision);
}
// A revision's MutatingWebhookConfiguration, as the charts name it:
// istio-sidecar-injector[-<revision>][-<istio namespace>].
inline constexpr std::string_view kRevisionWebhookPrefix = "istio-sidecar-injector";
// The name in the Istio namespace (istio-system): no namespace suffix.
inline std::string revision_webhook_name(std::string_view revision) {
  return is_default_revision(revision)
             ? std::string(kRevisionWebhookPrefix)
             : std::string(kRevisionWebhookPrefix) + "-" + std::string(revision);
}
// A revision tag's: istio-revision-tag-<tag>[-<istio namespace>] (manifest::tag_webhook_name).
inline constexpr std::string_view kTagWebhookPrefix = "istio-revision-tag-";

// ---- The injector webhook's selectors ----

// The entries of an injector webhook configuration (reference §2.1–2.3): rev.namespace. and
// rev.object. of every revision and tag; namespace. and object. (the legacy labels) of the
// default one; auto. when namespaces are enabled by default.
enum class InjectionEntry { kRevNamespace, kRevObject, kNamespace, kObject, kAuto };

// The entry's namespaceSelector (`namespace_side`) or objectSelector as Istio's charts and
// istioctl write it, as JSON text in their order; `revision` is the istio.io/rev value of the
// rev. entries (unused by the others).
inline std::string injection_selector_json(InjectionEntry entry, bool namespace_side,
                                           std::string_view revision = {}) {
  auto e = [](std::string_view key, std::string_view op, std::string values = {}) {
    std::string s = R"({"key":")" + std::string(key) + R"(","operator":")" + std::string(op) + "\"";
    if (!values.empty()) s += R"(,"values":[)" + values + "]";
    return s + "}";
  };
  auto quoted = [](std::string_view v) { return "\"" + std::string(v) + "\""; };
  std::string body;
  switch (entry) {
    case InjectionEntry::kRevNamespace:
      body = namespace_side ? e(kRevisionLabel, "In", quoted(revision)) + "," +
                                  e(kInjectionLabel, "DoesNotExist")
                            : e(kPodInjectLabel, "NotIn", quoted("false"));
      break;
    case InjectionEntry::kRevObject:
      body = namespace_side
                 ? e(kRevisionLabel, "DoesNotExist") + "," + e(kInjectionLabel, "DoesNotExist")
                 : e(kPodInjectLabel, "NotIn", quoted("false")) + "," +
                       e(kRevisionLabel, "In", quoted(revision));
      break;
    case InjectionEntry::kNamespace:
      body = namespace_side ? e(kInjectionLabel, "In", quoted("enabled"))
                            : e(kPodInjectLabel, "NotIn", quoted("false"));
      break;
    case InjectionEntry::kObject:
      body =
          namespace_side
              ? e(kInjectionLabel, "DoesNotExist") + "," + e(kRevisionLabel, "DoesNotExist")
              : e(kPodInjectLabel, "In", quoted("true")) + "," + e(kRevisionLabel, "DoesNotExist");
      break;
    case InjectionEntry::kAuto: {
      std::string never;
      for (std::string_view n : kNeverInjectedNamespaces)
        never += (never.empty() ? "" : ",") + quoted(n);
      body = namespace_side
                 ? e(kInjectionLabel, "DoesNotExist") + "," + e(kRevisionLabel, "DoesNotExist") +
                       "," + e(kNamespaceNameLabel, "NotIn", never)
                 : e(kPodInjectLabel, "DoesNotExist") + "," + e(kRevisionLabel, "DoesNotExist");
      break;
    }
  }
  return R"({"matchExpressions":[)" + body + "]}";
}

// ---- The IstioOperator resource (crd/istiooperator.yaml) ----

inline constexpr std::string_view kIstioOperatorGroup = "install.istio.io";
inline constexpr std::string_view kIstioOperatorVersion = "v1alpha1";
inline constexpr std::string_view kIstioOperatorApiVersion = "install.istio.io/v1alpha1";
inline constexpr std::string_view kIstioOperatorKind = "IstioOperator";
inline constexpr std::string_view kIstioOperatorPlural = "istiooperators";

}  // namespace meshop::api
