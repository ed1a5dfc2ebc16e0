// Paths into JSON trees with istioctl's path syntax, for reading a merged IstioOperator
// (`meshop profile dump --config-path`, the pipeline's meshConfig checks). Writing paths
// (--set, k8s.overlays) is the pipeline's own, on Go-like values (istioctl_pipeline.hpp:
// go_set_path, apply_tpath_patch).
//
// Path syntax: dot-separated keys, `\.` for a literal dot in a key; a list element is selected
// by `[N]` (index), `[key:value]` (the element map whose `key` is the string `value`) or
// `[value]` (the scalar element equal to `value`); the bracket may follow the key directly or
// as its own segment: `a[0].b` and `a.[0].b` are the same path.
// Pure; safe from any thread.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"

namespace meshop::manifest {

// The value at `path`, or nullptr when any step is missing.
const api::Value* get_path(const api::Value& root, std::string_view path);

// The segments of a path ("a[0].b" -> {"a", "[0]", "b"}), exposed for tests.
std::vector<std::string> split_tree_path(std::string_view path);

}  // namespace meshop::manifest
