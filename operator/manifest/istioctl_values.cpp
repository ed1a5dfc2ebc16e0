// values.Map semantics (operator/pkg/values of upstream) on template_engine::Value, whose maps
// and lists are shared references as Go's are. See istioctl_pipeline.hpp.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "operator/manifest/istioctl_detail.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::manifest::istioctl {

namespace te = template_engine;
namespace tf = template_engine::funcs;
using api::Error;

namespace detail {

te::Map* map_of(const GoValue& v) {
  return v.kind() == te::Kind::kMap ? v.as_map() : nullptr;
}

std::string go_path_clean(std::string_view p) {
  if (p.empty()) return ".";
  const std::size_t n = p.size();
  bool rooted = p[0] == '/';
  std::string out;
  std::size_t r = 0, dotdot = 0;
  if (rooted) {
    out = "/";
    r = 1;
    dotdot = 1;
  }
  while (r < n) {
    if (p[r] == '/') {
      ++r;
    } else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) {
      ++r;
    } else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
      r += 2;
      if (out.size() > dotdot) {
        std::size_t w = out.size() - 1;
        while (w > dotdot && out[w] != '/')
          --w;
        out.resize(w);
      } else if (!rooted) {
        if (!out.empty()) out += '/';
        out += "..";
        dotdot = out.size();
      }
    } else {
      if ((rooted && out.size() != 1) || (!rooted && !out.empty())) out += '/';
      for (; r < n && p[r] != '/'; ++r)
        out += p[r];
    }
  }
  if (out.empty()) return ".";
  return out;
}

std::vector<std::string> split_escaped(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t prev_idx = 0;
  char prev = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == sep && (i == 0 || prev != '\\')) {
      out.emplace_back(s.substr(prev_idx, i - prev_idx));
      prev_idx = i + 1;
    }
    prev = c;
  }
  out.emplace_back(s.substr(prev_idx));
  return out;
}

std::vector<std::string> split_path(std::string_view path) {
  std::string p = go_path_clean(path);
  std::string_view v = p;
  if (v.starts_with('.')) v.remove_prefix(1);
  if (v.ends_with('.')) v.remove_suffix(1);
  std::vector<std::string> r;
  for (std::string& s : split_escaped(v, '.')) {
    if (s.empty()) continue;
    s = tf::go_replace_all(s, "\\.", ".");
    std::size_t b = s.find('[');
    if (b != std::string::npos && b > 0) {
      r.push_back(s.substr(0, b));
      r.push_back(s.substr(b));
    } else {
      r.push_back(s);
    }
  }
  return r;
}

std::optional<std::string_view> remove_brackets(std::string_view pe) {
  if (!pe.starts_with('[') || !pe.ends_with(']') || pe.size() < 2) return std::nullopt;
  return pe.substr(1, pe.size() - 2);
}

std::optional<long long> extract_index(std::string_view seg) {
  auto inner = remove_brackets(seg);
  if (!inner) return std::nullopt;
  auto v = tf::go_parse_int(*inner, false);
  if (!v) return std::nullopt;
  return *v;
}

std::optional<std::pair<std::string, std::string>> extract_kv(std::string_view seg) {
  auto inner = remove_brackets(seg);
  if (!inner) return std::nullopt;
  std::size_t c = inner->find(':');
  if (c == std::string_view::npos) return std::nullopt;
  return std::pair{std::string(inner->substr(0, c)), std::string(inner->substr(c + 1))};
}

bool is_string_equal(const GoValue& v, std::string_view s) {
  return v.is_string() && v.as_string() == s;
}

std::string go_sprint(const GoValue& v) {
  if (v.is_invalid() || v.is_nil()) return "<nil>";
  return tf::strval(v);
}

}  // namespace detail

using namespace detail;

GoValue go_map() {
  return GoValue::map(std::make_shared<te::Map>());
}

void go_merge_from(GoValue& base, const GoValue& other) {
  te::Map* b = map_of(base);
  te::Map* o = map_of(other);
  if (b == nullptr || o == nullptr) return;
  for (const auto& [k, v] : o->entries()) {
    if (map_of(v) != nullptr || v.kind() == te::Kind::kMap) {
      if (GoValue* bv = b->find(k); bv != nullptr && bv->kind() == te::Kind::kMap) {
        if (map_of(*bv) == nullptr) {
          // A typed nil map in the base: Go's MergeFrom recurses into it and writes into a
          // nil map (a panic); upstream never has one there. Replace it.
          b->set(k, v);
        } else {
          go_merge_from(*bv, v);
        }
        continue;
      }
    }
    b->set(k, v);
  }
}

namespace {

api::Status set_recurse(te::Map& base, const std::vector<std::string>& paths, std::size_t i,
                        const GoValue& value) {
  if (i >= paths.size()) return Error{"empty path segment"};
  const std::string& seg = paths[i];
  std::size_t remaining = paths.size() - i;
  bool last = remaining == 1;
  bool next_is_array = remaining >= 2 && paths[i + 1].starts_with('[');
  if (next_is_array) {
    last = remaining == 2;
    if (base.find(seg) == nullptr) base.set(seg, GoValue::list(std::make_shared<te::List>()));
    GoValue cur = *base.find(seg);
    if (cur.kind() != te::Kind::kList) return Error{"path element " + seg + " is not a list"};
    std::vector<GoValue> empty;
    const std::vector<GoValue>& items = cur.as_list() != nullptr ? cur.as_list()->items : empty;
    long long index = -1;
    if (auto kv = extract_kv(paths[i + 1])) {
      for (std::size_t j = 0; j < items.size(); ++j) {
        const GoValue& e = items[j];
        if (e.is_nil_or_invalid()) continue;
        te::Map* m = map_of(e);
        if (m == nullptr) {
          if (e.kind() == te::Kind::kMap) continue;
          return Error{"element " + paths[i + 1] + ": list element is not a map"};
        }
        if (const GoValue* f = m->find(kv->first);
            f != nullptr && is_string_equal(*f, kv->second)) {
          index = static_cast<long long>(j);
          break;
        }
      }
      if (index == -1) return Error{"element " + paths[i + 1] + " not found"};
    } else if (auto idx = extract_index(paths[i + 1])) {
      index = *idx;
    } else {
      return Error{"unknown segment " + paths[i + 1]};
    }
    if (index < 0 || index >= static_cast<long long>(items.size())) {
      auto grown = std::make_shared<te::List>(items);
      if (last) {
        grown->items.push_back(value);
      } else {
        GoValue nm = go_map();
        if (auto st = set_recurse(*nm.as_map(), paths, i + 2, value); !st.ok()) return st;
        grown->items.push_back(nm);
      }
      base.set(seg, GoValue::list(std::move(grown)));
      return api::ok_status();
    }
    GoValue elem = items[static_cast<std::size_t>(index)];
    if (map_of(elem) == nullptr) {
      if (!elem.is_nil_or_invalid() && elem.kind() != te::Kind::kMap)
        return Error{"element " + paths[i + 1] + " is not a map"};
      elem = go_map();
    }
    if (last) return Error{"path " + seg + paths[i + 1] + ": cannot set a list element directly"};
    if (auto st = set_recurse(*elem.as_map(), paths, i + 2, value); !st.ok()) return st;
    cur.as_list()->items[static_cast<std::size_t>(index)] = elem;
    return api::ok_status();
  }
  if (base.find(seg) == nullptr) base.set(seg, go_map());
  if (last) {
    base.set(seg, value);
    return api::ok_status();
  }
  GoValue child = *base.find(seg);
  if (map_of(child) == nullptr) {
    if (child.is_nil_or_invalid() || child.kind() == te::Kind::kMap) {
      // MustCastAsMap(nil) is a fresh map that nothing holds: the value is lost, as upstream.
      GoValue detached = go_map();
      return set_recurse(*detached.as_map(), paths, i + 1, value);
    }
    return Error{"path element " + seg + " is not a map (it holds " + go_sprint(child) + ")"};
  }
  return set_recurse(*child.as_map(), paths, i + 1, value);
}

bool is_always_string(std::string_view p) {
  static constexpr std::string_view kAlways[] = {
      "spec.values.compatibilityVersion",
      "spec.tag",
      "spec.values.global.tag",
      "spec.meshConfig.defaultConfig.proxyMetadata.",
      "spec.values.meshConfig.defaultConfig.proxyMetadata.",
      "spec.compatibilityVersion",
  };
  for (std::string_view a : kAlways)
    if (p.starts_with(a)) return true;
  return false;
}

GoValue parse_value(std::string_view s) {
  if (auto i = tf::go_parse_int(s, false)) return GoValue::integer(*i);
  if (auto f = tf::go_parse_float(s)) return GoValue::float64(*f);
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True")
    return GoValue::boolean(true);
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False")
    return GoValue::boolean(false);
  return GoValue::string(tf::go_replace_all(s, "\\,", ","));
}

}  // namespace

api::Status go_set_path(GoValue& root, std::string_view path, GoValue value) {
  te::Map* m = map_of(root);
  if (m == nullptr) return Error{"cannot set " + std::string(path) + ": the root is not a map"};
  std::vector<std::string> segs = split_path(path);
  if (segs.empty()) return Error{"cannot set an empty path"};
  return set_recurse(*m, segs, 0, value);
}

GoValue go_get_path(const GoValue& root, std::string_view name) {
  GoValue cur = root;
  for (const std::string& n : split_path(name)) {
    if (auto idx = extract_index(n)) {
      if (cur.kind() != te::Kind::kList || cur.as_list() == nullptr) return GoValue::invalid();
      const auto& items = cur.as_list()->items;
      if (*idx < 0 || *idx >= static_cast<long long>(items.size())) return GoValue::invalid();
      cur = items[static_cast<std::size_t>(*idx)];
    } else if (auto kv = extract_kv(n)) {
      if (cur.kind() != te::Kind::kList || cur.as_list() == nullptr) return GoValue::invalid();
      const auto& items = cur.as_list()->items;
      bool found = false;
      for (const GoValue& e : items) {
        te::Map* m = map_of(e);
        if (m == nullptr) continue;
        if (const GoValue* f = m->find(kv->first);
            f != nullptr && is_string_equal(*f, kv->second)) {
          found = true;
          break;
        }
      }
      if (!found) return GoValue::invalid();
      // Upstream's GetPath indexes with the `idx` of the failed extractIndex (0) here: a
      // [key:value] step that matches any element yields the first element.
      cur = items[0];
    } else {
      te::Map* m = map_of(cur);
      if (m == nullptr) return GoValue::invalid();
      const GoValue* sub = m->find(n);
      if (sub == nullptr) return GoValue::invalid();
      cur = *sub;
    }
  }
  if (cur.is_invalid()) return GoValue::nil();
  return cur;
}

api::Status go_set_flag(GoValue& root, std::string_view flag) {
  std::string path, value;
  std::size_t eq = flag.find('=');
  if (eq == std::string_view::npos) {
    path = std::string(flag);
  } else {
    path = std::string(tf::go_trim_space(flag.substr(0, eq)));
    value = std::string(tf::go_trim_space(flag.substr(eq + 1)));
  }
  GoValue v = is_always_string(path) ? GoValue::string(value) : parse_value(value);
  return go_set_path(root, path, v);
}

api::Result<GoValue> go_deep_clone(const GoValue& v) {
  std::string text;
  if (!tf::append_json(text, v, tf::JsonOptions{})) return Error{"value cannot be written as JSON"};
  auto r = tf::parse_json_value(text);
  if (!r.ok()) return r.error();
  return r.value();
}

GoValue go_from_json(const api::Value& v) {
  return tf::from_rapidjson(v);
}

api::Result<api::Document> go_to_document(const GoValue& v) {
  std::string text;
  if (!tf::append_json(text, v, tf::JsonOptions{})) return Error{"value cannot be written as JSON"};
  return api::parse_json(text);
}

namespace detail {

GoValue get_path_map(const GoValue& root, std::string_view name) {
  GoValue cur = root;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = name.find('.', start);
    std::string_view part =
        name.substr(start, dot == std::string_view::npos ? name.npos : dot - start);
    te::Map* m = map_of(cur);
    if (m == nullptr) return GoValue::invalid();
    const GoValue* sub = m->find(part);
    if (sub == nullptr || sub->kind() != te::Kind::kMap) return GoValue::invalid();
    cur = *sub;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return cur;
}

std::string get_path_string(const GoValue& root, std::string_view name) {
  GoValue v = go_get_path(root, name);
  return v.is_string() ? std::string(v.as_string()) : std::string();
}

bool get_path_bool(const GoValue& root, std::string_view name) {
  GoValue v = go_get_path(root, name);
  return v.kind() == te::Kind::kBool && v.as_bool();
}

GoValue make_map(const GoValue& contents, std::initializer_list<std::string_view> path) {
  GoValue cur = contents;
  for (auto it = std::rbegin(path); it != std::rend(path); ++it) {
    GoValue m = go_map();
    m.as_map()->set(*it, cur);
    cur = m;
  }
  return cur;
}

}  // namespace detail

}  // namespace meshop::manifest::istioctl
