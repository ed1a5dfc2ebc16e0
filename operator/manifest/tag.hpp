// Revision tags (istioctl tag's behaviour): a tag is a MutatingWebhookConfiguration
// `istio-revision-tag-<tag>` labelled istio.io/rev=<revision> and istio.io/tag=<tag> whose
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

#include "api/result.hpp"

namespace meshop::manifest {

inline constexpr std::string_view kTagLabel = "istio.io/tag";
inline constexpr std::string_view kRevisionLabel = "istio.io/rev";

std::string tag_webhook_name(std::string_view tag);

// The tag's configuration, from the revision's own injector configuration. An error names
// what is missing (no rev.namespace/rev.object entry, a configuration that is itself a tag).
api::Result<rapidjson::Document> generate_tag_webhook(const rapidjson::Value& revision_webhook,
                                                      std::string_view tag,
                                                      std::string_view revision);

// `webhook` with every entry's selectors replaced by the never-match selectors.
rapidjson::Document deactivate_webhook(const rapidjson::Value& webhook);

// The entry was deactivated by deactivate_webhook().
bool is_deactivated(const rapidjson::Value& webhook);

}  // namespace meshop::manifest
