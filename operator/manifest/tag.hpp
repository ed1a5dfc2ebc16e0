// Revision tags (istioctl tag's behaviour): a tag is a MutatingWebhookConfiguration
// `istio-revision-tag-<tag>` (`istio-revision-tag-<tag>-<ns>` when the revision's Istio
// namespace <ns> is not istio-system, as the istio-discovery chart's revision-tags-mwc.yaml
// names it) labelled istio.io/rev=<revision> and istio.io/tag=<tag> whose
// injector entries are the revision's own rev.namespace / rev.object entries selecting
// istio.io/rev=<tag> instead of the revision's name, calling the revision's injector
// (clientConfig, caBundle included). The `default` tag also takes over the legacy entries
// (namespace. for istio-injection=enabled, object. for sidecar.istio.io/inject=true), and the
// default revision's own configuration is deactivated: every entry of it gets the never-match
// selectors istio.io/deactivated=never-match, as `istioctl tag set default` does.
//
// Pure: input and output are the JSON objects; the CLI reads and writes them.
#pragma once

#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "api/mesh_conventions.hpp"
#include "api/result.hpp"

namespace meshop::manifest {

using api::kRevisionLabel;  // api/mesh_conventions.hpp
using api::kTagLabel;

inline constexpr std::string_view kDefaultIstioNamespace = "istio-system";

// `istio-revision-tag-<tag>`, with `-<istio_namespace>` unless that is istio-system (or "").
// Tools that look a tag up (meshop tag list/remove, istioctl's) go by the istio.io/tag label,
// so both names are found.
std::string tag_webhook_name(std::string_view tag,
                             std::string_view istio_namespace = kDefaultIstioNamespace);

// The Istio namespace a revision's own configuration was rendered for, read from its name as
// the chart writes it: istio-sidecar-injector[-<revision>][-<ns> when ns is not
// istio-system]. A name of another form gives istio-system.
std::string revision_webhook_namespace(std::string_view webhook_name, std::string_view revision);

// The tag's configuration, from the revision's own injector configuration. An error names
// what is missing (no rev.namespace/rev.object entry, a configuration that is itself a tag).
// `istio_namespace` names it (tag_webhook_name); "" means the namespace the revision's
// configuration was rendered for (revision_webhook_namespace of its name).
api::Result<rapidjson::Document> generate_tag_webhook(const rapidjson::Value& revision_webhook,
                                                      std::string_view tag,
                                                      std::string_view revision,
                                                      std::string_view istio_namespace = {});

// `webhook` with every entry's selectors replaced by the never-match selectors.
rapidjson::Document deactivate_webhook(const rapidjson::Value& webhook);

// The entry was deactivated by deactivate_webhook().
bool is_deactivated(const rapidjson::Value& webhook);

}  // namespace meshop::manifest
