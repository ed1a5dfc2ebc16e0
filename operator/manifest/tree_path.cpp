#include "operator/manifest/tree_path.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace meshop::manifest {
namespace {

using api::Allocator;
using api::Error;
using api::Status;
using api::Value;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

struct Segment {
  enum Kind { kKey, kIndex, kKeyValue, kScalar } kind = kKey;
  std::string key;    // kKey: the key; kKeyValue: the key; kScalar: the value
  std::string value;  // kKeyValue
  long long index = 0;
};

std::optional<long long> parse_index(std::string_view s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  std::size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  return std::stoll(std::string(s));
}

Segment classify(const std::string& raw) {
  Segment seg;
  if (raw.size() >= 2 && raw.front() == '[' && raw.back() == ']') {
    std::string inner = raw.substr(1, raw.size() - 2);
    if (auto idx = parse_index(inner)) {
      seg.kind = Segment::kIndex;
      seg.index = *idx;
    } else if (auto colon = inner.find(':'); colon != std::string::npos) {
      seg.kind = Segment::kKeyValue;
      seg.key = inner.substr(0, colon);
      seg.value = inner.substr(colon + 1);
    } else {
      seg.kind = Segment::kScalar;
      seg.key = inner;
    }
    return seg;
  }
  seg.key = raw;
  return seg;
}

bool is_list_segment(const Segment& s) {
  return s.kind != Segment::kKey;
}

std::vector<Segment> parse_path(std::string_view path) {
  std::vector<Segment> out;
  for (const std::string& raw : split_tree_path(path))
    out.push_back(classify(raw));
  return out;
}

std::string scalar_string(const Value& v) {
  if (v.IsString()) return std::string(api::string_view_of(v));
  if (v.IsNull() || v.IsObject() || v.IsArray()) return {};
  return api::to_json(v);
}

// The element of `list` whose map has `key` equal to the string `value`; -1 if none.
long long find_kv(const Value& list, const std::string& key, const std::string& value,
                  bool any_scalar) {
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i) {
    const Value& e = list[i];
    if (!e.IsObject()) continue;
    const Value* m = api::find_member(e, key);
    if (m == nullptr) continue;
    // values.Map compares with ==, so only strings match; tpath compares string forms.
    if (m->IsString() ? api::string_view_of(*m) == value : any_scalar && scalar_string(*m) == value)
      return i;
  }
  return -1;
}

long long find_scalar(const Value& list, const std::string& value) {
  for (rapidjson::SizeType i = 0; i < list.Size(); ++i)
    if (!list[i].IsObject() && !list[i].IsArray() && scalar_string(list[i]) == value) return i;
  return -1;
}

Value& member_or_create(Value& object, const std::string& key, Value init, Allocator& a) {
  if (Value* m = api::find_member(object, key)) return *m;
  object.AddMember(api::make_string(key, a), init, a);
  return (object.MemberEnd() - 1)->value;
}

const char* kind_name(const Value& v) {
  if (v.IsObject()) return "map";
  if (v.IsArray()) return "list";
  if (v.IsString()) return "string";
  if (v.IsBool()) return "bool";
  if (v.IsNull()) return "null";
  return "number";
}

Status set_recurse(Value& base, const std::vector<Segment>& segs, std::size_t at, Value& value,
                   Allocator& a, std::string_view path) {
  const Segment& seg = segs[at];
  if (seg.kind != Segment::kKey)
    return Error{"path " + std::string(path) + ": list selector " + "without a list name"};
  if (!base.IsObject())
    return Error{"path " + std::string(path) + ": cannot set \"" + seg.key + "\" inside a " +
                 kind_name(base)};
  bool next_is_list = at + 1 < segs.size() && is_list_segment(segs[at + 1]);
  if (!next_is_list) {
    bool last = at + 1 == segs.size();
    if (last) {
      if (Value* m = api::find_member(base, seg.key))
        *m = std::move(value);
      else
        base.AddMember(api::make_string(seg.key, a), value, a);
      return api::ok_status();
    }
    Value& child = member_or_create(base, seg.key, Value(rapidjson::kObjectType), a);
    return set_recurse(child, segs, at + 1, value, a, path);
  }
  Value& list = member_or_create(base, seg.key, Value(rapidjson::kArrayType), a);
  if (!list.IsArray())
    return Error{"path " + std::string(path) + ": \"" + seg.key + "\" is a " + kind_name(list) +
                 ", not a list"};
  const Segment& sel = segs[at + 1];
  long long index = 0;
  if (sel.kind == Segment::kKeyValue) {
    index = find_kv(list, sel.key, sel.value, false);
    if (index < 0)
      return Error{"path " + std::string(path) + ": element [" + sel.key + ":" + sel.value +
                   "] not found"};
  } else if (sel.kind == Segment::kIndex) {
    index = sel.index;
  } else {
    return Error{"path " + std::string(path) + ": unknown segment [" + sel.key + "]"};
  }
  bool last = at + 2 == segs.size();
  if (index < 0 || index >= static_cast<long long>(list.Size())) {
    if (last) {
      list.PushBack(value, a);
    } else {
      Value m(rapidjson::kObjectType);
      Status st = set_recurse(m, segs, at + 2, value, a, path);
      if (!st.ok()) return st;
      list.PushBack(m, a);
    }
    return api::ok_status();
  }
  Value& elem = list[static_cast<rapidjson::SizeType>(index)];
  if (last) {
    elem = std::move(value);
    return api::ok_status();
  }
  if (elem.IsNull()) elem.SetObject();
  return set_recurse(elem, segs, at + 2, value, a, path);
}

bool always_string(std::string_view full_path) {
  static constexpr std::string_view kPrefixes[] = {
      "spec.values.compatibilityVersion",
      "spec.tag",
      "spec.values.global.tag",
      "spec.meshConfig.defaultConfig.proxyMetadata.",
      "spec.values.meshConfig.defaultConfig.proxyMetadata.",
      "spec.compatibilityVersion",
  };
  for (std::string_view p : kPrefixes)
    if (full_path.starts_with(p)) return true;
  return false;
}

// strconv.Atoi: optional sign, decimal digits, within int64.
std::optional<long long> go_atoi(std::string_view s) {
  std::size_t i = (!s.empty() && (s[0] == '+' || s[0] == '-')) ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (std::size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  errno = 0;
  std::string text(s);
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE) return std::nullopt;
  return v;
}

// strconv.ParseFloat for decimal forms (digits, '.', exponent, '_' is not allowed without a base
// prefix); hex floats, inf and nan are left as strings since JSON cannot hold the latter two.
std::optional<double> go_parse_float(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool digit = false;
  for (char c : s) {
    if (c >= '0' && c <= '9')
      digit = true;
    else if (c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
      return std::nullopt;
  }
  if (!digit) return std::nullopt;
  std::string text(s);
  char* end = nullptr;
  errno = 0;
  double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<bool> go_parse_bool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False")
    return false;
  return std::nullopt;
}

}  // namespace

std::vector<std::string> split_tree_path(std::string_view path) {
  while (path.starts_with('.'))
    path.remove_prefix(1);
  while (path.ends_with('.') && !path.ends_with("\\."))
    path.remove_suffix(1);
  std::vector<std::string> raw;
  std::string cur;
  char prev = 0;
  for (char c : path) {
    if (c == '.' && prev != '\\') {
      raw.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
    prev = c;
  }
  raw.push_back(cur);
  std::vector<std::string> out;
  for (std::string& s : raw) {
    if (s.empty()) continue;
    std::string unescaped;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '.') continue;
      unescaped += s[i];
    }
    std::size_t bracket = unescaped.find('[');
    if (bracket != std::string::npos && bracket > 0) {
      out.push_back(unescaped.substr(0, bracket));
      out.push_back(unescaped.substr(bracket));
    } else {
      out.push_back(unescaped);
    }
  }
  return out;
}

void merge_into(Value& base, const Value& overlay, Allocator& a) {
  if (!base.IsObject() || !overlay.IsObject()) {
    base.CopyFrom(overlay, a);
    return;
  }
  for (const auto& m : overlay.GetObject()) {
    Value* existing = api::find_member(base, api::string_view_of(m.name));
    if (existing != nullptr && existing->IsObject() && m.value.IsObject()) {
      merge_into(*existing, m.value, a);
    } else if (existing != nullptr) {
      existing->CopyFrom(m.value, a);
    } else {
      base.AddMember(Value(m.name, a), Value(m.value, a), a);
    }
  }
}

api::Result<SetFlag> parse_set_flag(std::string_view flag) {
  std::size_t eq = flag.find('=');
  if (eq == std::string_view::npos)
    return Error{"--set \"" + std::string(flag) + "\": expected path=value"};
  SetFlag f{std::string(trim(flag.substr(0, eq))), std::string(trim(flag.substr(eq + 1)))};
  if (f.path.empty()) return Error{"--set \"" + std::string(flag) + "\": empty path"};
  return f;
}

Value typed_set_value(std::string_view full_path, std::string_view text, Allocator& a) {
  if (always_string(full_path)) return api::make_string(text, a);
  if (auto i = go_atoi(text)) return Value(static_cast<int64_t>(*i));
  if (auto d = go_parse_float(text)) return Value(*d);
  if (auto b = go_parse_bool(text)) return Value(*b);
  std::string s(text);
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ',') continue;
    out += s[i];
  }
  return api::make_string(out, a);
}

Status set_path(Value& root, std::string_view path, Value value, Allocator& a) {
  std::vector<Segment> segs = parse_path(path);
  if (segs.empty()) return Error{"empty path"};
  return set_recurse(root, segs, 0, value, a, path);
}

const Value* get_path(const Value& root, std::string_view path) {
  const Value* cur = &root;
  for (const Segment& seg : parse_path(path)) {
    switch (seg.kind) {
      case Segment::kKey:
        if (!cur->IsObject()) return nullptr;
        cur = api::find_member(*cur, seg.key);
        if (cur == nullptr) return nullptr;
        break;
      case Segment::kIndex:
        if (!cur->IsArray() || seg.index < 0 || seg.index >= static_cast<long long>(cur->Size()))
          return nullptr;
        cur = &(*cur)[static_cast<rapidjson::SizeType>(seg.index)];
        break;
      case Segment::kKeyValue: {
        if (!cur->IsArray()) return nullptr;
        long long i = find_kv(*cur, seg.key, seg.value, true);
        if (i < 0) return nullptr;
        cur = &(*cur)[static_cast<rapidjson::SizeType>(i)];
        break;
      }
      case Segment::kScalar: {
        if (!cur->IsArray()) return nullptr;
        long long i = find_scalar(*cur, seg.key);
        if (i < 0) return nullptr;
        cur = &(*cur)[static_cast<rapidjson::SizeType>(i)];
        break;
      }
    }
  }
  return cur;
}

Status apply_overlay_patch(Value& root, std::string_view path, const Value& value, Allocator& a) {
  std::vector<Segment> segs = parse_path(path);
  if (segs.empty()) return Error{"overlay path \"" + std::string(path) + "\" is empty"};
  auto fail = [&](const std::string& why) {
    return Status(Error{"overlay path " + std::string(path) + ": " + why});
  };
  Value* parent = nullptr;
  Value* cur = &root;
  long long index_in_parent = -1;
  std::string key_in_parent;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const Segment& seg = segs[i];
    bool next_is_list = i + 1 < segs.size() && is_list_segment(segs[i + 1]);
    if (cur->IsNull()) {
      if (is_list_segment(seg))
        cur->SetArray();
      else
        cur->SetObject();
    }
    parent = cur;
    if (cur->IsArray()) {
      long long idx = -1;
      if (seg.kind == Segment::kIndex) {
        idx = seg.index;
        if (idx < 0 || idx >= static_cast<long long>(cur->Size())) {
          if (value.IsNull()) return fail("index " + std::to_string(seg.index) + " out of range");
          cur->PushBack(Value(rapidjson::kObjectType), a);
          idx = cur->Size() - 1;
        }
      } else if (seg.kind == Segment::kKeyValue) {
        idx = find_kv(*cur, seg.key, seg.value, true);
      } else if (seg.kind == Segment::kScalar) {
        idx = find_scalar(*cur, seg.key);
      } else {
        idx = find_scalar(*cur, seg.key);
      }
      if (idx < 0) return fail("element " + seg.key + " not found");
      index_in_parent = idx;
      key_in_parent.clear();
      cur = &(*cur)[static_cast<rapidjson::SizeType>(idx)];
      continue;
    }
    if (cur->IsObject()) {
      if (seg.kind != Segment::kKey)
        return fail("list selector [" + seg.key + "] applied to a map");
      Value* m = api::find_member(*cur, seg.key);
      if (m == nullptr) {
        if (value.IsNull() && i + 1 == segs.size()) return api::ok_status();  // nothing to delete
        Value init = next_is_list ? Value(rapidjson::kArrayType) : Value(rapidjson::kObjectType);
        cur->AddMember(api::make_string(seg.key, a), init, a);
        m = &(cur->MemberEnd() - 1)->value;
      }
      index_in_parent = -1;
      key_in_parent = seg.key;
      cur = m;
      continue;
    }
    return fail(std::string("cannot descend into a ") + kind_name(*cur) + " at \"" + seg.key +
                "\"");
  }
  if (!value.IsNull()) {
    cur->CopyFrom(value, a);
    return api::ok_status();
  }
  if (parent == nullptr) return fail("cannot delete the root");
  if (parent->IsArray()) {
    parent->Erase(parent->Begin() + index_in_parent);
  } else {
    parent->EraseMember(key_in_parent);  // keeps member order
  }
  return api::ok_status();
}

}  // namespace meshop::manifest
