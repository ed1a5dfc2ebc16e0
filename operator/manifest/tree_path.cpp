#include "operator/manifest/tree_path.hpp"

#include <optional>
#include <string>

namespace meshop::manifest {
namespace {

using api::Value;

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

}  // namespace meshop::manifest
