// JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7386) on the RapidJSON DOM.
//
// apply_json_patch is atomic: when any operation fails, `target` is left exactly as it was and
// the error names the operation (0-based index, op and path) and what failed, e.g.
//   "json patch operation 1 (replace /spec/x): path /spec/x does not exist".
//
// create_json_patch(a, b) returns a patch p with apply_json_patch(a, p) == b (json_equal).
// Objects are diffed member by member (add/remove/replace, recursing into common members);
// arrays with a longest-common-subsequence alignment so that an element inserted or removed in
// the middle is ONE add/remove, not a rewrite of the tail. Elements that changed in place are
// diffed recursively when they are paired: objects with the same "name" member (containers,
// volumes, env...), or, when a changed run has no names, positionally if it has as many old as
// new elements. Arrays above 4096 elements on both sides fall back to prefix/suffix trimming.
// Operation order matters only within one array (indices are those at the time each operation
// applies); callers must not reorder the patch.
//
// Thread-safe: no shared state. `target` must be a Document (its allocator is used).
#pragma once

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::api {

Status apply_json_patch(Document& target, const Value& patch);

// The patch as a JSON array owned by the returned document.
Document create_json_patch(const Value& from, const Value& to);
// The same patch as JSON text, byte for byte to_json(create_json_patch(from, to)), written
// directly (no document of copied values in between).
std::string create_json_patch_text(const Value& from, const Value& to);

// RFC 7386: members of an object patch are merged recursively into the target, null deletes a
// member, and a non-object patch replaces the target.
void apply_merge_patch(Value& target, const Value& patch, Allocator& allocator);

// The smallest merge patch turning `from` into `to` (objects diffed recursively; deleted
// members become null; anything else that differs is replaced whole). Not expressible: a
// member whose new value is null (RFC 7386 limitation); it is written as null = delete.
Document create_merge_patch(const Value& from, const Value& to);

}  // namespace meshop::api
