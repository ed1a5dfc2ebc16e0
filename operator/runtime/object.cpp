#include "operator/runtime/object.hpp"

namespace meshop::runtime {

namespace {
const rapidjson::Value* member(const rapidjson::Value& v, std::string_view name) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(rapidjson::Value(
      rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
  return it == v.MemberEnd() ? nullptr : &it->value;
}
std::string_view str(const rapidjson::Value& v) {
  return {v.GetString(), v.GetStringLength()};
}
}  // namespace

namespace {
constexpr std::size_t align8(std::size_t n) {
  return (n + 7) & ~std::size_t{7};
}
}  // namespace

std::size_t compact_size(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kObjectType: {
      std::size_t n = align8(v.MemberCount() * sizeof(rapidjson::Value::Member));
      for (const auto& m : v.GetObject())
        n += compact_size(m.name) + compact_size(m.value);
      return n;
    }
    case rapidjson::kArrayType: {
      std::size_t n = align8(v.Size() * sizeof(rapidjson::Value));
      for (const auto& e : v.GetArray())
        n += compact_size(e);
      return n;
    }
    case rapidjson::kStringType:
      // Short strings live inside the Value; count every string to stay on the safe side.
      return align8(v.GetStringLength() + 1);
    default:
      return 0;
  }
}

Object compact_object(const rapidjson::Value& value) {
  struct Holder {
    explicit Holder(std::size_t capacity) : pool(capacity), doc(&pool) {}
    rapidjson::MemoryPoolAllocator<> pool;
    rapidjson::Document doc;
  };
  auto holder = std::make_shared<Holder>(compact_size(value) + 64);
  holder->doc.CopyFrom(value, holder->pool);
  return Object(holder, &holder->doc);  // aliasing: the document keeps its pool alive
}

std::string_view meta_string(const rapidjson::Value& object, std::string_view field) {
  const rapidjson::Value* meta = member(object, "metadata");
  if (meta == nullptr) return {};
  const rapidjson::Value* v = member(*meta, field);
  if (v == nullptr || !v->IsString()) return {};
  return str(*v);
}

std::string make_key(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + name.size() + 1);
  if (!ns.empty()) {
    key.append(ns);
    key.push_back('/');
  }
  key.append(name);
  return key;
}

std::string object_key(const rapidjson::Value& object) {
  return make_key(namespace_of(object), name_of(object));
}

std::pair<std::string_view, std::string_view> split_key(std::string_view key) {
  auto slash = key.find('/');
  if (slash == std::string_view::npos) return {{}, key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::vector<std::string> label_pairs(const rapidjson::Value& object) {
  std::vector<std::string> out;
  const rapidjson::Value* meta = member(object, "metadata");
  const rapidjson::Value* labels = meta ? member(*meta, "labels") : nullptr;
  if (labels == nullptr || !labels->IsObject()) return out;
  for (const auto& m : labels->GetObject()) {
    if (!m.value.IsString()) continue;
    std::string pair(str(m.name));
    pair.push_back('=');
    pair.append(str(m.value));
    out.push_back(std::move(pair));
  }
  return out;
}

std::vector<std::string> owner_uids(const rapidjson::Value& object) {
  std::vector<std::string> out;
  const rapidjson::Value* meta = member(object, "metadata");
  const rapidjson::Value* owners = meta ? member(*meta, "ownerReferences") : nullptr;
  if (owners == nullptr || !owners->IsArray()) return out;
  for (const auto& ref : owners->GetArray()) {
    const rapidjson::Value* uid = member(ref, "uid");
    if (uid != nullptr && uid->IsString()) out.emplace_back(str(*uid));
  }
  return out;
}

}  // namespace meshop::runtime
