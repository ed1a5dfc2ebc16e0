#include "operator/manifest/values_schema.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <cmath>

#include "operator/inject/mesh/proto_json.hpp"

namespace meshop::manifest::values_schema {
namespace {

using inject::proto::FieldDescriptor;
using inject::proto::FieldKind;
using inject::proto::MessageDescriptor;

constexpr std::string_view kIntOrString = "istio.operator.v1alpha1.IntOrString";

std::string describe(const api::Value& v) {
  std::string out = v.IsString()   ? "string"
                    : v.IsBool()   ? "boolean"
                    : v.IsNumber() ? "number"
                    : v.IsObject() ? "mapping"
                    : v.IsArray()  ? "list"
                                   : "null";
  if (v.IsString() || v.IsNumber()) {
    std::string text = api::to_json(v);
    if (text.size() > 64) text = text.substr(0, 61) + "...";
    out += " " + text;
  }
  return out;
}

// "spec.values.global.proxy.privileged: expected ..." -> {path, "expected ..."}: the leaf
// readers put the path in front of their message.
api::FieldError split(const std::string& path, const std::string& message) {
  if (message.starts_with(path + ": ")) return {path, message.substr(path.size() + 2)};
  return {path, message};
}

class Checker {
 public:
  std::vector<api::FieldError> errors;

  void message(const api::Value& in, const MessageDescriptor& type, const std::string& path) {
    if (in.IsNull()) return;
    if (!in.IsObject()) {
      errors.push_back(
          {path, "expected a mapping (" + std::string(type.full_name) + "), got " + describe(in)});
      return;
    }
    for (const auto& m : in.GetObject()) {
      std::string_view name = api::string_view_of(m.name);
      std::string p = path + "." + std::string(name);
      const FieldDescriptor* f = nullptr;
      for (const FieldDescriptor& cand : type.fields)
        if (cand.json_name == name || cand.proto_name == name) f = &cand;
      if (f == nullptr) {
        // jsonpb's words: `unknown field "badKey" in istio.operator.v1alpha1.GlobalConfig`.
        errors.push_back(
            {p, "unknown field \"" + std::string(name) + "\" in " + std::string(type.full_name)});
        continue;
      }
      // A null field is absent, except a singular google.protobuf.Value (null is a value).
      if (m.value.IsNull()) continue;
      field(*f, m.value, p);
    }
  }

 private:
  api::Document scratch_;

  void field(const FieldDescriptor& f, const api::Value& in, const std::string& path) {
    if (f.repeated()) {
      if (!in.IsArray()) {
        errors.push_back({path, "expected a list, got " + describe(in)});
        return;
      }
      for (rapidjson::SizeType i = 0; i < in.Size(); ++i)
        // json.Unmarshal of a null element leaves the zero value.
        if (!in[i].IsNull() || f.kind == FieldKind::kValue)
          singular(f, in[i], path + "[" + std::to_string(i) + "]");
      return;
    }
    if (f.is_map()) {
      if (!in.IsObject()) {
        errors.push_back({path, "expected a mapping, got " + describe(in)});
        return;
      }
      for (const auto& m : in.GetObject())
        if (!m.value.IsNull() || f.kind == FieldKind::kValue)
          singular(f, m.value, path + "." + std::string(api::string_view_of(m.name)));
      return;
    }
    singular(f, in, path);
  }

  void singular(const FieldDescriptor& f, const api::Value& in, const std::string& path) {
    if (f.kind == FieldKind::kMessage) {
      if (f.message->full_name == kIntOrString) {
        int_or_string(in, path);
      } else {
        message(in, *f.message, path);
      }
      return;
    }
    auto v = inject::proto::read_leaf(f, in, scratch_.GetAllocator(), path);
    if (!v.ok()) errors.push_back(split(path, v.message()));
  }

  // IntOrString's UnmarshalJSON (operator/pkg/apis/value_types_json.go): a JSON string, or
  // whatever json.Unmarshal takes as an int32.
  void int_or_string(const api::Value& in, const std::string& path) {
    if (in.IsString() || in.IsNull()) return;
    if (in.IsNumber()) {
      double d = in.GetDouble();
      if (in.IsInt64() ? (in.GetInt64() >= INT32_MIN && in.GetInt64() <= INT32_MAX)
                       : (!in.IsUint64() && std::trunc(d) == d && d >= INT32_MIN && d <= INT32_MAX))
        return;
    }
    errors.push_back({path, "expected an integer (int32) or a string, got " + describe(in)});
  }
};

// netip.ParsePrefix: an IPv4 dotted quad (no leading zeros) or an IPv6 address (no zone), then
// "/" and a decimal length without leading zeros, at most 32 or 128.
bool go_parse_prefix(std::string_view s) {
  std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string addr(s.substr(0, slash));
  std::string_view bits = s.substr(slash + 1);
  if (bits.empty() || (bits.size() > 1 && bits[0] == '0')) return false;
  int n = 0;
  auto [ptr, ec] = std::from_chars(bits.data(), bits.data() + bits.size(), n);
  if (ec != std::errc() || ptr != bits.data() + bits.size()) return false;
  unsigned char buf[16];
  if (addr.find(':') == std::string::npos) {
    int octets = 0;
    std::size_t start = 0;
    while (true) {
      std::size_t dot = addr.find('.', start);
      std::string_view part = std::string_view(addr).substr(
          start, dot == std::string::npos ? std::string::npos : dot - start);
      if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
      int v = 0;
      auto [p2, e2] = std::from_chars(part.data(), part.data() + part.size(), v);
      if (e2 != std::errc() || p2 != part.data() + part.size() || v > 255) return false;
      ++octets;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return octets == 4 && n <= 32;
  }
  if (addr.find('%') != std::string::npos) return false;
  return inet_pton(AF_INET6, addr.c_str(), buf) == 1 && n <= 128;
}

std::vector<std::string_view> split_commas(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t c = s.find(',', start);
    out.push_back(
        s.substr(start, c == std::string_view::npos ? std::string_view::npos : c - start));
    if (c == std::string_view::npos) return out;
    start = c + 1;
  }
}

// validation.validateValues' checks beyond decoding: global.proxy.include/excludeIPRanges are
// "*" or comma-separated CIDRs; include/excludeInboundPorts comma-separated port numbers (or
// "*"). Each only when set (a non-empty string).
void check_proxy_lists(const api::Value& values, const std::string& path,
                       std::vector<api::FieldError>& errors) {
  const api::Value* proxy = api::find(values, "/global/proxy");
  if (proxy == nullptr || !proxy->IsObject()) return;
  for (const char* key : {"includeIPRanges", "excludeIPRanges"}) {
    const api::Value* v = api::find_member(*proxy, key);
    if (v == nullptr || !v->IsString()) continue;
    std::string_view s = api::string_view_of(*v);
    if (s.empty() || s == "*") continue;
    for (std::string_view cidr : split_commas(s))
      if (!go_parse_prefix(cidr))
        errors.push_back({path + ".global.proxy." + key,
                          "invalid CIDR \"" + std::string(cidr) + "\" (netip.ParsePrefix)"});
  }
  for (const char* key : {"includeInboundPorts", "excludeInboundPorts"}) {
    const api::Value* v = api::find_member(*proxy, key);
    if (v == nullptr || !v->IsString()) continue;
    std::string_view s = api::string_view_of(*v);
    if (s.empty()) continue;
    for (std::string_view port : split_commas(s)) {
      if (port.empty() || port == "*") continue;
      // strconv.ParseInt(s, 10, 32): an optional sign, decimal digits.
      std::string_view digits = port;
      if (digits[0] == '+' || digits[0] == '-') digits.remove_prefix(1);
      long long n = 0;
      auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      bool parsed = !digits.empty() && ec == std::errc() && ptr == digits.data() + digits.size() &&
                    n <= 2147483648LL;
      if (parsed && port[0] == '-') n = -n;
      if (!parsed || n > 2147483647LL)
        errors.push_back({path + ".global.proxy." + key,
                          "invalid port \"" + std::string(port) + "\" (not a 32-bit integer)"});
      else if (n < 0 || n > 65535)
        errors.push_back({path + ".global.proxy." + key,
                          "port " + std::to_string(n) + " falls outside range [0, 65535]"});
    }
  }
}

}  // namespace

const MessageDescriptor* values_descriptor(std::string_view version) {
  for (const VersionSchema& v : versions())
    if (v.version == version) return v.values;
  return nullptr;
}

std::vector<api::FieldError> check_values(const api::Value& values, const MessageDescriptor& schema,
                                          const std::string& path) {
  Checker c;
  c.message(values, schema, path);
  if (c.errors.empty()) check_proxy_lists(values, path, c.errors);
  return std::move(c.errors);
}

}  // namespace meshop::manifest::values_schema
