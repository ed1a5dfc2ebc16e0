#include "api/json_patch.hpp"

#include <algorithm>
#include <vector>

#include "api/json_copy.hpp"
#include "api/json_writer.hpp"

namespace meshop::api {
namespace {

struct PatchFailure {
  std::string message;
};

// The container that holds the value named by `tokens` (all but the last token resolved).
Value& resolve_parent(Value& root, const std::vector<std::string>& tokens, std::string_view path) {
  Value* cur = &root;
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (cur->IsObject()) {
      cur = find_member(*cur, t);
    } else if (cur->IsArray()) {
      long long idx = parse_array_index(t);
      cur = idx >= 0 && idx < static_cast<long long>(cur->Size())
                ? &(*cur)[static_cast<rapidjson::SizeType>(idx)]
                : nullptr;
    } else {
      cur = nullptr;
    }
    if (cur == nullptr) {
      throw PatchFailure{
          "path " + std::string(path) + " does not exist (no " +
          make_json_pointer({tokens.begin(), tokens.begin() + static_cast<long>(i) + 1}) + ")"};
    }
  }
  return *cur;
}

std::vector<std::string> tokens_of(std::string_view path) {
  auto tokens = parse_json_pointer(path);
  if (!tokens) throw PatchFailure{tokens.message()};
  return std::move(tokens).value();
}

rapidjson::SizeType array_index(const Value& array, const std::string& token, std::string_view path,
                                bool allow_end) {
  if (token == "-" && allow_end) return array.Size();
  long long idx = parse_array_index(token);
  long long limit = static_cast<long long>(array.Size()) + (allow_end ? 1 : 0);
  if (idx < 0 || idx >= limit) {
    throw PatchFailure{"path " + std::string(path) + ": array index \"" + token +
                       "\" is out of range (array has " + std::to_string(array.Size()) +
                       " elements)"};
  }
  return static_cast<rapidjson::SizeType>(idx);
}

void add(Document& doc, std::string_view path, Value& value) {
  auto tokens = tokens_of(path);
  if (tokens.empty()) {
    static_cast<Value&>(doc) = value;
    return;
  }
  Value& parent = resolve_parent(doc, tokens, path);
  const std::string& last = tokens.back();
  if (parent.IsObject()) {
    if (Value* existing = find_member(parent, last)) {
      *existing = value;
    } else {
      parent.AddMember(make_string(last, doc.GetAllocator()), value, doc.GetAllocator());
    }
  } else if (parent.IsArray()) {
    rapidjson::SizeType idx = array_index(parent, last, path, true);
    parent.PushBack(Value(), doc.GetAllocator());
    for (rapidjson::SizeType i = parent.Size() - 1; i > idx; --i)
      parent[i].Swap(parent[i - 1]);
    parent[idx] = value;
  } else {
    throw PatchFailure{"path " + std::string(path) + ": parent is not an object or array"};
  }
}

// Removes and returns the value at `path`.
Value remove(Document& doc, std::string_view path) {
  auto tokens = tokens_of(path);
  if (tokens.empty()) throw PatchFailure{"cannot remove the whole document"};
  Value& parent = resolve_parent(doc, tokens, path);
  const std::string& last = tokens.back();
  Value out;
  if (parent.IsObject()) {
    auto it = parent.FindMember(make_string(last, doc.GetAllocator()));
    if (it == parent.MemberEnd())
      throw PatchFailure{"path " + std::string(path) + " does not exist"};
    out = it->value;
    parent.EraseMember(it);
  } else if (parent.IsArray()) {
    rapidjson::SizeType idx = array_index(parent, last, path, false);
    out = parent[idx];
    parent.Erase(parent.Begin() + idx);
  } else {
    throw PatchFailure{"path " + std::string(path) + " does not exist"};
  }
  return out;
}

Value& existing(Document& doc, std::string_view path) {
  Value* v = find(static_cast<Value&>(doc), path);
  if (v == nullptr) {
    tokens_of(path);  // a malformed pointer reports its own error
    throw PatchFailure{"path " + std::string(path) + " does not exist"};
  }
  return *v;
}

std::string string_member(const Value& op, const char* name, std::size_t index) {
  const Value* v = find_member(op, name);
  if (v == nullptr || !v->IsString()) {
    throw PatchFailure{"json patch operation " + std::to_string(index) + ": missing string \"" +
                       name + "\""};
  }
  return std::string(string_view_of(*v));
}

void apply_one(Document& doc, const Value& op, std::size_t index) {
  if (!op.IsObject()) {
    throw PatchFailure{"json patch operation " + std::to_string(index) + " is not an object"};
  }
  std::string kind = string_member(op, "op", index);
  std::string path = string_member(op, "path", index);
  auto value_of = [&]() {
    const Value* v = find_member(op, "value");
    if (v == nullptr) throw PatchFailure{"missing \"value\""};
    return Value(*v, doc.GetAllocator());
  };
  try {
    if (kind == "add") {
      Value v = value_of();
      add(doc, path, v);
    } else if (kind == "remove") {
      remove(doc, path);
    } else if (kind == "replace") {
      Value v = value_of();
      existing(doc, path) = v;
    } else if (kind == "move") {
      std::string from = string_member(op, "from", index);
      if (from == path) return;
      if (path.size() > from.size() && path.compare(0, from.size(), from) == 0 &&
          path[from.size()] == '/') {
        throw PatchFailure{"cannot move " + from + " into its own child " + path};
      }
      Value v = remove(doc, from);
      add(doc, path, v);
    } else if (kind == "copy") {
      std::string from = string_member(op, "from", index);
      Value v(existing(doc, from), doc.GetAllocator());
      add(doc, path, v);
    } else if (kind == "test") {
      const Value* expected = find_member(op, "value");
      if (expected == nullptr) throw PatchFailure{"missing \"value\""};
      if (!json_equal(existing(doc, path), *expected)) {
        throw PatchFailure{"test failed: value at " + path + " is " + to_json(existing(doc, path)) +
                           ", not " + to_json(*expected)};
      }
    } else {
      throw PatchFailure{"unknown op \"" + kind + "\""};
    }
  } catch (const PatchFailure& f) {
    throw PatchFailure{"json patch operation " + std::to_string(index) + " (" + kind + " " + path +
                       "): " + f.message};
  }
}

// ---- diff ----

// Emits the operations into a patch document, or, with a text, writes them as
// to_json(patch) would (same member order, same escaping) without building the document.
class Differ {
 public:
  explicit Differ(Document& patch) : patch_(&patch), alloc_(&patch.GetAllocator()) {}
  explicit Differ(JsonWriter& text) : text_(&text) {}

  // `path` is the pointer of a and b; the recursion appends to it and restores it.
  void diff(const Value& a, const Value& b, std::string& path) {
    if (a.IsObject() && b.IsObject()) return diff_objects(a, b, path);
    if (a.IsArray() && b.IsArray()) return diff_arrays(a, b, path);
    if (!json_equal(a, b)) emit("replace", path, &b);
  }

 private:
  void emit(const char* op, const std::string& path, const Value* value) {
    if (text_ != nullptr) {
      JsonWriter& out = *text_;
      // The op names need no escaping: written as the literal they are.
      out.raw(first_ ? "{\"op\":\"" : ",{\"op\":\"");
      first_ = false;
      out.raw(op);
      out.raw("\",\"path\":");
      out.string(path);
      if (value != nullptr) {
        out.raw(",\"value\":");
        out.value(*value);
      }
      out.raw('}');
      return;
    }
    Value o(rapidjson::kObjectType);
    o.AddMember("op", Value(rapidjson::StringRef(op)), *alloc_);
    o.AddMember("path", make_string(path, *alloc_), *alloc_);
    if (value != nullptr) o.AddMember("value", copied_json(*value, *alloc_), *alloc_);
    patch_->PushBack(o, *alloc_);
  }

  // Appends "/" and the escaped token to `path`; returns the length to restore.
  static std::size_t push_token(std::string& path, std::string_view token) {
    std::size_t size = path.size();
    path.push_back('/');
    for (char c : token) {
      if (c == '~') {
        path += "~0";
      } else if (c == '/') {
        path += "~1";
      } else {
        path.push_back(c);
      }
    }
    return size;
  }
  static std::size_t push_index(std::string& path, rapidjson::SizeType k) {
    std::size_t size = path.size();
    path.push_back('/');
    path += std::to_string(k);
    return size;
  }

  // The member of `object` named `name`: looked for first at position `hint`, which then
  // moves past it (the two sides of a diff mostly list their members in the same order, so a
  // lookup is one comparison, not a scan), else by a scan. Member names are unique in a DOM of
  // this library (json.hpp), so the member found is the one find_member finds.
  static const Value* find_hinted(const Value& object, std::string_view name,
                                  rapidjson::SizeType& hint) {
    const auto members = object.MemberBegin();
    const rapidjson::SizeType n = object.MemberCount();
    if (hint < n && string_view_of(members[hint].name) == name) return &members[hint++].value;
    for (rapidjson::SizeType i = 0; i < n; ++i) {
      if (string_view_of(members[i].name) == name) {
        hint = i + 1;
        return &members[i].value;
      }
    }
    return nullptr;
  }

  void diff_objects(const Value& a, const Value& b, std::string& path) {
    rapidjson::SizeType hint = 0;
    for (const auto& m : a.GetObject()) {
      std::size_t size = push_token(path, string_view_of(m.name));
      if (const Value* bv = find_hinted(b, string_view_of(m.name), hint)) {
        diff(m.value, *bv, path);
      } else {
        emit("remove", path, nullptr);
      }
      path.resize(size);
    }
    hint = 0;
    for (const auto& m : b.GetObject()) {
      if (find_hinted(a, string_view_of(m.name), hint) == nullptr) {
        std::size_t size = push_token(path, string_view_of(m.name));
        emit("add", path, &m.value);
        path.resize(size);
      }
    }
  }

  static const Value* identity(const Value& v) {
    if (!v.IsObject()) return nullptr;
    const Value* name = find_member(v, "name");
    return name != nullptr && name->IsString() ? name : nullptr;
  }

  // Turns old[a0,a1) into new[b0,b1) at running index k.
  void diff_run(const Value& a, rapidjson::SizeType a0, rapidjson::SizeType a1, const Value& b,
                rapidjson::SizeType b0, rapidjson::SizeType b1, std::string& path,
                rapidjson::SizeType& k) {
    // Pair changed elements: same "name" (in order), or positionally when nothing has a name
    // and the counts match.
    std::vector<std::pair<rapidjson::SizeType, rapidjson::SizeType>> pairs;
    bool any_identity = false;
    for (auto i = a0; i < a1; ++i)
      any_identity = any_identity || identity(a[i]) != nullptr;
    for (auto j = b0; j < b1; ++j)
      any_identity = any_identity || identity(b[j]) != nullptr;
    if (any_identity) {
      rapidjson::SizeType next_j = b0;
      for (auto i = a0; i < a1; ++i) {
        const Value* id = identity(a[i]);
        if (id == nullptr) continue;
        for (auto j = next_j; j < b1; ++j) {
          const Value* other = identity(b[j]);
          if (other != nullptr && json_equal(*id, *other)) {
            pairs.emplace_back(i, j);
            next_j = j + 1;
            break;
          }
        }
      }
    } else if (a1 - a0 == b1 - b0) {
      for (rapidjson::SizeType d = 0; d < a1 - a0; ++d)
        pairs.emplace_back(a0 + d, b0 + d);
    }
    pairs.emplace_back(a1, b1);  // sentinel
    rapidjson::SizeType i = a0, j = b0;
    for (const auto& [pi, pj] : pairs) {
      for (; i < pi; ++i) {
        std::size_t size = push_index(path, k);
        emit("remove", path, nullptr);
        path.resize(size);
      }
      for (; j < pj; ++j, ++k) {
        std::size_t size = push_index(path, k);
        emit("add", path, &b[j]);
        path.resize(size);
      }
      if (pi == a1) break;
      std::size_t size = push_index(path, k);
      diff(a[pi], b[pj], path);
      path.resize(size);
      ++i;
      ++j;
      ++k;
    }
  }

  void diff_arrays(const Value& a, const Value& b, std::string& path) {
    rapidjson::SizeType n = a.Size(), m = b.Size();
    // Common prefix and suffix first: cheap and the usual case.
    rapidjson::SizeType pre = 0;
    while (pre < n && pre < m && json_equal(a[pre], b[pre]))
      ++pre;
    rapidjson::SizeType suf = 0;
    while (suf < n - pre && suf < m - pre && json_equal(a[n - 1 - suf], b[m - 1 - suf]))
      ++suf;
    rapidjson::SizeType k = pre;
    rapidjson::SizeType an = n - pre - suf, bn = m - pre - suf;
    if (an == 0 && bn == 0) return;
    if (an == 0 || bn == 0 || (an > 4096 && bn > 4096)) {
      diff_run(a, pre, n - suf, b, pre, m - suf, path, k);
      return;
    }
    // LCS table over the middle part (suffix lengths), then walk it forward.
    std::vector<std::uint32_t> lcs(static_cast<std::size_t>(an + 1) * (bn + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (bn + 1) + j]; };
    for (std::size_t i = an; i-- > 0;) {
      for (std::size_t j = bn; j-- > 0;) {
        at(i, j) = json_equal(a[static_cast<rapidjson::SizeType>(pre + i)],
                              b[static_cast<rapidjson::SizeType>(pre + j)])
                       ? at(i + 1, j + 1) + 1
                       : std::max(at(i + 1, j), at(i, j + 1));
      }
    }
    std::size_t i = 0, j = 0, run_i = 0, run_j = 0;
    auto flush = [&](std::size_t ei, std::size_t ej) {
      if (run_i < ei || run_j < ej) {
        diff_run(a, static_cast<rapidjson::SizeType>(pre + run_i),
                 static_cast<rapidjson::SizeType>(pre + ei), b,
                 static_cast<rapidjson::SizeType>(pre + run_j),
                 static_cast<rapidjson::SizeType>(pre + ej), path, k);
      }
    };
    while (i < an && j < bn) {
      if (json_equal(a[static_cast<rapidjson::SizeType>(pre + i)],
                     b[static_cast<rapidjson::SizeType>(pre + j)]) &&
          at(i, j) == at(i + 1, j + 1) + 1) {
        flush(i, j);
        ++i;
        ++j;
        ++k;
        run_i = i;
        run_j = j;
      } else if (at(i + 1, j) >= at(i, j + 1)) {
        ++i;
      } else {
        ++j;
      }
    }
    flush(an, bn);
  }

  Document* patch_ = nullptr;
  Allocator* alloc_ = nullptr;
  JsonWriter* text_ = nullptr;  // has "[" and the operations written so far
  bool first_ = true;
};

}  // namespace

Status apply_json_patch(Document& target, const Value& patch) {
  if (!patch.IsArray()) return Error{"json patch must be a JSON array of operations"};
  Document work;
  work.CopyFrom(target, work.GetAllocator());
  try {
    for (rapidjson::SizeType i = 0; i < patch.Size(); ++i)
      apply_one(work, patch[i], i);
  } catch (const PatchFailure& f) {
    return Error{f.message};
  }
  target.Swap(work);
  return ok_status();
}

Document create_json_patch(const Value& from, const Value& to) {
  Document patch(rapidjson::kArrayType);
  std::string path;
  Differ(patch).diff(from, to, path);
  return patch;
}

std::string create_json_patch_text(const Value& from, const Value& to) {
  std::string text;
  // An injection's patch is a few KiB: room for it at once, not by doubling from 15 bytes.
  text.reserve(4096);
  {
    JsonWriter out(text);
    out.raw('[');
    std::string path;
    path.reserve(128);
    Differ(out).diff(from, to, path);
    out.raw(']');
  }
  return text;
}

void apply_merge_patch(Value& target, const Value& patch, Allocator& allocator) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, allocator);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    std::string_view name = string_view_of(m.name);
    auto it = target.FindMember(
        Value(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
    if (m.value.IsNull()) {
      if (it != target.MemberEnd()) target.EraseMember(it);
      continue;
    }
    if (it == target.MemberEnd()) {
      Value v;
      apply_merge_patch(v, m.value, allocator);
      target.AddMember(make_string(name, allocator), v, allocator);
    } else {
      apply_merge_patch(it->value, m.value, allocator);
    }
  }
}

namespace {
void merge_diff(const Value& a, const Value& b, Value& out, Allocator& alloc) {
  out.SetObject();
  for (const auto& m : a.GetObject()) {
    if (find_member(b, string_view_of(m.name)) == nullptr) {
      out.AddMember(Value(m.name, alloc), Value(), alloc);
    }
  }
  for (const auto& m : b.GetObject()) {
    const Value* av = find_member(a, string_view_of(m.name));
    if (av != nullptr && json_equal(*av, m.value)) continue;
    Value v;
    if (av != nullptr && av->IsObject() && m.value.IsObject()) {
      merge_diff(*av, m.value, v, alloc);
    } else {
      v.CopyFrom(m.value, alloc);
    }
    out.AddMember(Value(m.name, alloc), v, alloc);
  }
}
}  // namespace

Document create_merge_patch(const Value& from, const Value& to) {
  Document out;
  if (from.IsObject() && to.IsObject()) {
    merge_diff(from, to, out, out.GetAllocator());
  } else {
    out.CopyFrom(to, out.GetAllocator());
  }
  return out;
}

}  // namespace meshop::api
