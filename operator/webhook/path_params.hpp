// The injection URL: which revision a request is for and the proxy environment its path
// carries (upstream's parseInjectEnvs, plus meshop's revision key).
//
//   /inject                                   default revision, no envs
//   /inject/cluster/c1/net/n1                 ISTIO_META_CLUSTER_ID=c1, ISTIO_META_NETWORK=n1
//   /inject/rev/canary/cluster/c1             revision "canary", ISTIO_META_CLUSTER_ID=c1
//   /inject/k/a--slash--b                     K=a/b
//   /inject/:ENV:cluster=c1:ENV:net=n1        deprecated form: same envs as the second line
//
// Semantics follow upstream: a trailing '/' is trimmed; the rest after "/inject/" is split into
// key/value pairs on '/'; "--slash--" in values becomes '/'; `cluster` maps to
// ISTIO_META_CLUSTER_ID, `net` to ISTIO_META_NETWORK and any other key to its upper-case form;
// a last key without value and an empty key are ignored; a repeated key keeps its last value.
// The deprecated `:ENV:k=v` form splits on ":ENV:" and keeps pairs with a non-empty name and a
// '=' (no "--slash--" replacement there, as upstream).
//
// meshop addition: one process may serve several revisions, so the key `rev` selects the
// revision (its value, "" when absent = the server's default revision) and is not passed to
// the proxy as an env. Upstream serves one revision per istiod and never sees this key.
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace meshop::webhook {

struct InjectPath {
  std::string revision;  // from the `rev` key; "" = not given
  // env name → value, sorted by name, names unique.
  std::vector<std::pair<std::string, std::string>> envs;
  // Keys given without value (ignored, as upstream, but worth a log line).
  std::vector<std::string> ignored_keys;
};

// `path` is the URL path (no query), starting with "/inject". Anything after "/inject" that
// does not start with '/' yields no parameters.
InjectPath parse_inject_path(std::string_view path);

// True for "/inject" and "/inject/..." (upstream's mux patterns "/inject" and "/inject/").
bool is_inject_path(std::string_view path);

}  // namespace meshop::webhook
