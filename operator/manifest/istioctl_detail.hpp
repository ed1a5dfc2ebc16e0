// Internals of the istioctl pipeline shared by its source files (istioctl_values.cpp,
// istioctl_pipeline.cpp, istioctl_tpath.cpp). Not an interface.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "operator/template/value.hpp"

namespace meshop::manifest::istioctl::detail {

using GoValue = template_engine::Value;

template_engine::Map* map_of(const GoValue& v);
// path.Clean.
std::string go_path_clean(std::string_view p);
// util.splitEscaped: split at `sep` not preceded by a backslash.
std::vector<std::string> split_escaped(std::string_view s, char sep);
// values.splitPath / util.PathFromString: Clean, trim one leading and trailing '.', split at
// unescaped dots, "\." -> ".", "key[...]" -> "key", "[...]".
std::vector<std::string> split_path(std::string_view path);
std::optional<std::string_view> remove_brackets(std::string_view pe);
std::optional<long long> extract_index(std::string_view seg);
std::optional<std::pair<std::string, std::string>> extract_kv(std::string_view seg);
bool is_string_equal(const GoValue& v, std::string_view s);
// fmt.Sprint(v) ("<nil>" for nil).
std::string go_sprint(const GoValue& v);
// GetPathMap (plain '.' split; every step a map), GetPathString, GetPathBool.
GoValue get_path_map(const GoValue& root, std::string_view name);
std::string get_path_string(const GoValue& root, std::string_view name);
bool get_path_bool(const GoValue& root, std::string_view name);
// values.MakeMap(contents, path...).
GoValue make_map(const GoValue& contents, std::initializer_list<std::string_view> path);

}  // namespace meshop::manifest::istioctl::detail
