// k8s.overlays patches with the semantics of upstream's operator/pkg/tpath (GetPathContext with
// createMissing, then WritePathContext) over a rendered object, as istioctl applies them to
// the object read back with gopkg.in/yaml.v2 (maps there are map[interface{}]interface{}).
//
// What is reproduced:
//   - a missing map key on the way is created as a map (even before an [N] step: yaml.v2's maps
//     create maps); in maps this walk created itself (map[string]interface{} upstream) a key
//     followed by [N] is created as a list;
//   - [N] (N >= -1) selects an element, past the end (or -1) appends; [key:value] selects the
//     map element whose key prints as value (a missing key prints "<nil>"); in a list of
//     scalars, [value] is a regular expression matched against each element's text (unanchored),
//     [:value] too;
//   - the last step sets the value, a null value deletes the member or element; a string value
//     holding a YAML mapping (one line with ": " or several lines with ":") that is not JSON
//     becomes that mapping;
//   - in a map this walk created, setting over a list appends to it (as tpath does for
//     map[string]interface{} parents);
//   - errors ("element [x] not found", a path through a scalar) leave what the walk created so
//     far; istioctl drops the error.
#include <algorithm>
#include <string>
#include <vector>

#include "api/go_format.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/istioctl_detail.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"
#include "operator/template/go_regexp.hpp"

namespace meshop::manifest::istioctl {
namespace {

using api::Allocator;
using api::Error;
using api::Value;
using namespace detail;

bool is_valid_key(std::string_view k) {
  for (char c : k)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

bool is_n_element(std::string_view pe) {
  auto idx = extract_index(pe);
  return idx && *idx >= -1;
}

bool is_kv_element(std::string_view pe) {
  auto inner = remove_brackets(pe);
  if (!inner) return false;
  auto kv = split_escaped(*inner, ':');
  return kv.size() == 2 && !kv[0].empty() && !kv[1].empty() && is_valid_key(kv[0]);
}

// fmt.Sprint of a yaml.v2 value.
std::string sprint(const Value* v) {
  if (v == nullptr || v->IsNull()) return "<nil>";
  if (v->IsString()) return std::string(api::string_view_of(*v));
  if (v->IsBool()) return v->GetBool() ? "true" : "false";
  if (v->IsInt64()) return std::to_string(v->GetInt64());
  if (v->IsUint64()) return std::to_string(v->GetUint64());
  if (v->IsNumber()) return api::go_format_float_g(v->GetDouble());
  if (v->IsArray()) {
    std::string out = "[";
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      if (i > 0) out += ' ';
      out += sprint(&(*v)[i]);
    }
    return out + "]";
  }
  std::vector<std::pair<std::string, std::string>> kv;
  for (const auto& m : v->GetObject())
    kv.emplace_back(std::string(api::string_view_of(m.name)), sprint(&m.value));
  std::sort(kv.begin(), kv.end());
  std::string out = "map[";
  for (std::size_t i = 0; i < kv.size(); ++i) {
    if (i > 0) out += ' ';
    out += kv[i].first + ":" + kv[i].second;
  }
  return out + "]";
}

// tryToUnmarshalStringToYAML.
bool structured_value(const Value& in, api::Document& out) {
  if (in.IsString()) {
    std::string_view s = api::string_view_of(in);
    bool multi = s.find('\n') != std::string_view::npos;
    if ((!multi && s.find(": ") != std::string_view::npos) ||
        (multi && s.find(':') != std::string_view::npos)) {
      auto as_json = api::parse_json(s);
      if (!(as_json.ok() && (as_json->IsObject() || as_json->IsNull()))) {
        auto parsed = api::yaml_to_json(s);
        if (parsed.ok() && (parsed->IsObject() || parsed->IsNull())) {
          out = std::move(parsed).value();
          if (out.IsNull()) out.SetObject();
          return true;
        }
      }
    }
  }
  out.CopyFrom(in, out.GetAllocator());
  return false;
}

struct Walk {
  const std::vector<std::string>& segs;
  const Value& value;  // null: delete
  Allocator& a;
  std::string path;

  Error fail(const std::string& why) const { return Error{"path " + path + ": " + why}; }

  // Writes at segs.back() inside `container` (the node segs[i] steps into).
  api::Status write_member(Value& container, const std::string& key, bool string_map) {
    if (value.IsNull()) {
      container.EraseMember(key.c_str());
      return api::ok_status();
    }
    api::Document vv;
    bool from_string = structured_value(value, vv);
    Value* existing = api::find_member(container, key);
    if (string_map && existing != nullptr && existing->IsArray() && !from_string) {
      existing->PushBack(Value(vv, a), a);
      return api::ok_status();
    }
    if (string_map && from_string) {
      container.EraseMember(key.c_str());
      if (vv.IsObject() && vv.MemberCount() > 0) {
        auto first = vv.MemberBegin();
        container.AddMember(Value(first->name, a), Value(first->value, a), a);
      } else {
        container.AddMember(api::make_string("", a), Value(rapidjson::kObjectType), a);
      }
      return api::ok_status();
    }
    if (existing != nullptr)
      existing->CopyFrom(vv, a);
    else
      container.AddMember(api::make_string(key, a), Value(vv, a), a);
    return api::ok_status();
  }

  api::Status write_element(Value& list, rapidjson::SizeType idx) {
    if (value.IsNull()) {
      if (idx >= list.Size()) return fail("index out of range");
      list.Erase(list.Begin() + idx);
      return api::ok_status();
    }
    api::Document vv;
    structured_value(value, vv);
    while (list.Size() <= idx)
      list.PushBack(Value(), a);
    list[idx].CopyFrom(vv, a);
    return api::ok_status();
  }

  api::Status step(Value& cur, std::size_t i, bool string_map) {
    const std::string& pe = segs[i];
    bool last = i + 1 == segs.size();
    if (cur.IsNull()) {
      if (is_n_element(pe) || is_kv_element(pe))
        cur.SetArray();
      else
        cur.SetObject();
      string_map = true;
    }
    if (cur.IsArray()) {
      if (is_n_element(pe)) {
        long long idx = *extract_index(pe);
        if (idx < 0 || idx >= static_cast<long long>(cur.Size())) {
          if (last) {
            if (value.IsNull()) return fail("index " + std::to_string(idx) + " out of range");
            return write_element(cur, cur.Size());
          }
          Value fresh(rapidjson::kObjectType);
          if (auto st = step(fresh, i + 1, true); !st.ok()) return st;
          cur.PushBack(fresh, a);
          return api::ok_status();
        }
        auto u = static_cast<rapidjson::SizeType>(idx);
        if (last) return write_element(cur, u);
        return step(cur[u], i + 1, false);
      }
      for (rapidjson::SizeType j = 0; j < cur.Size(); ++j) {
        Value& le = cur[j];
        if (le.IsObject()) {
          if (!is_kv_element(pe)) return fail(pe + " is not a valid key:value path element");
          auto kv = split_escaped(*remove_brackets(pe), ':');
          if (sprint(api::find_member(le, kv[0])) != kv[1]) continue;
          if (last) return write_element(cur, j);
          return step(le, i + 1, false);
        }
        // PathV: "[:v]" and "[v]" are v; anything unbracketed is no value element.
        std::string_view v = remove_brackets(pe).value_or(std::string_view());
        if (v.size() > 1 && v[0] == ':') v.remove_prefix(1);
        if (v.empty()) return fail(pe + " is not a valid value path element");
        auto re = template_engine::GoRegexp::compile(v);
        if (!re.ok()) continue;  // upstream logs "bad regex expression" and skips the element
        if (!re->match(sprint(&le))) continue;
        if (last) return write_element(cur, j);
        return step(le, i + 1, false);
      }
      return fail("element " + pe + " not found");
    }
    if (cur.IsObject()) {
      Value* child = api::find_member(cur, pe);
      if (child == nullptr) {
        bool next_n = !last && is_n_element(segs[i + 1]);
        cur.AddMember(
            api::make_string(pe, a),
            string_map && next_n ? Value(rapidjson::kArrayType) : Value(rapidjson::kObjectType), a);
        child = &(cur.MemberEnd() - 1)->value;
      }
      if (last) return write_member(cur, pe, string_map);
      return step(*child, i + 1, string_map);
    }
    return fail("leaf value in a non-leaf node at " + pe);
  }
};

}  // namespace

api::Status apply_tpath_patch(api::Document& object, std::string_view path, const Value& value) {
  std::vector<std::string> segs = split_path(path);
  if (segs.empty()) {
    if (value.IsNull()) return Error{"cannot delete root element"};
    return api::ok_status();
  }
  Walk w{segs, value, object.GetAllocator(), std::string(path)};
  return w.step(object, 0, false);
}

}  // namespace meshop::manifest::istioctl
