// Paths into IstioOperator trees, with istioctl's semantics: `--set` flags, profile/overlay
// merging, and the `k8s.overlays[].patches[].path` patches applied to rendered objects.
//
// Path syntax (both uses): dot-separated keys, `\.` for a literal dot in a key; a list element
// is selected by `[N]` (index) or `[key:value]` (the element map whose `key` is the string
// `value`); the bracket may follow the key directly or as its own segment: `a[0].b` and
// `a.[0].b` are the same path. Overlay patches also accept `[value]` for the scalar element
// equal to `value` (e.g. an entry of `args`).
//
// All functions work on JSON DOMs in `allocator`'s document. Errors name the path.
// Pure; safe from any thread on distinct documents.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::manifest {

// Deep merge as istioctl merges profiles and files (values.Map.MergeFrom): maps merge key by
// key, recursively; anything else in `overlay` (lists, scalars, null) replaces what `base`
// has. Lists are never merged element-wise.
void merge_into(api::Value& base, const api::Value& overlay, api::Allocator& allocator);

// A `--set path=value` flag split at the first '='; both sides trimmed. A flag without '='
// is an error naming it.
struct SetFlag {
  std::string path;
  std::string value;
};
api::Result<SetFlag> parse_set_flag(std::string_view flag);

// The JSON value istioctl gives the text of a --set flag at `full_path` (the path from the
// IstioOperator root, e.g. "spec.values.global.tag"): an int if strconv.Atoi accepts it, else
// a float if ParseFloat does (finite values only), else a bool if ParseBool does (1 t T TRUE
// true True and the false forms), else a string with `\,` unescaped to `,`. Paths where
// istioctl always keeps strings (spec.tag, spec.values.global.tag, compatibilityVersion, the
// proxyMetadata maps) give the text unchanged.
api::Value typed_set_value(std::string_view full_path, std::string_view text,
                           api::Allocator& allocator);

// Sets `value` at `path` under `root` (values.Map.SetPath): missing maps are created; a list
// segment whose index is past the end appends; `[key:value]` must find its element. Setting
// through a scalar is an error.
api::Status set_path(api::Value& root, std::string_view path, api::Value value,
                     api::Allocator& allocator);

// The value at `path`, or nullptr when any step is missing.
const api::Value* get_path(const api::Value& root, std::string_view path);

// An overlay patch (tpath.WritePathContext over GetPathContext with createMissing): missing
// map keys are created, `[N]` past the end appends, a null `value` deletes the node the path
// names (a map member or a list element).
api::Status apply_overlay_patch(api::Value& root, std::string_view path, const api::Value& value,
                                api::Allocator& allocator);

// The segments of a path ("a[0].b" -> {"a", "[0]", "b"}), exposed for tests.
std::vector<std::string> split_tree_path(std::string_view path);

}  // namespace meshop::manifest
