// Istio's injection FuncMap (pkg/kube/inject/template.go, reference §3.3), re-implemented
// from its documented behaviour, plus meshop's Helm-style extras.
//
// Upstream's parameters are Kubernetes/protobuf types. Template data here is JSON-shaped
// (or typed Objects), so parameters that upstream declares as metav1.ObjectMeta,
// []corev1.Container or *meshconfig.* are `any` and read by Go field name (`Annotations`,
// `Ports[].ContainerPort`, `ExtensionProviders[].Opentelemetry.ServiceAttributeEnrichment`)
// from a map or an Object. Parameters upstream declares as map[string]string accept a
// map[string]string or a map[string]interface {} whose values are all strings, and fail
// otherwise with Go's argument-type message. hack/gotemplate implements the same contract in
// Go, so the differential suite checks both against each other.
//
// protoToJSON: upstream strips ProxyConfig defaults and prints jsonpb. A typed Object passed
// to it answers through its `ProtoToJSON` method (the injection engine's ProxyConfig object
// implements upstream's cleanProxyConfig + jsonpb there); JSON-shaped data has no message
// type, so it prints compact JSON like structToJSON. Typed objects reach toJson/structToJSON
// through a `MarshalJSON` method returning the JSON text.
#include <charconv>
#include <cstdlib>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine {

namespace {

using namespace funcs;

constexpr ParamType kAny = ParamType::any();
constexpr ParamType kStr = ParamType::string();
constexpr ParamType kInt = ParamType::int_();

Value str(std::string s) {
  return Value::string(std::move(s));
}

Signature fixed(std::initializer_list<ParamType> params) {
  return Signature{std::vector<ParamType>(params), std::nullopt};
}
Signature variadic(std::initializer_list<ParamType> params, ParamType rest) {
  return Signature{std::vector<ParamType>(params), rest};
}

const StringMap* smap(const Value& v) {
  return v.as_string_map();
}

std::optional<std::string> lookup(const Value& string_map, std::string_view key) {
  const StringMap* m = smap(string_map);
  if (m == nullptr) return std::nullopt;
  const std::string* v = m->find(key);
  if (v == nullptr) return std::nullopt;
  return *v;
}

// The value of `key` in a map[string]string argument, without copying the map: the per-pod
// hot path (`isset`, `annotation` run dozens of times per injection).
Result<std::optional<Value>> string_map_find(const Value& m, std::string_view key) {
  if (m.kind() == Kind::kMap) {
    std::optional<Value> found;
    if (m.as_map() != nullptr) {
      for (const auto& [k, e] : m.as_map()->entries()) {
        if (!e.is_string())
          return fail("wrong type for value; expected map[string]string; got " + go_type_name(m));
        if (k == key) found = e;
      }
    }
    return found;
  }
  auto sm = as_string_map(m);
  if (!sm) return fail(sm.error());
  if (auto v = lookup(*sm, key)) return std::optional<Value>(str(*v));
  return std::optional<Value>();
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t at = s.find(sep, start);
    out.emplace_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

// time.Duration.String().
std::string go_duration(std::int64_t d) {
  if (d == 0) return "0s";
  bool neg = d < 0;
  std::uint64_t u = neg ? 0 - static_cast<std::uint64_t>(d) : static_cast<std::uint64_t>(d);
  auto frac = [](std::uint64_t v, int prec, std::string& digits) {
    // Trailing zeros of the fraction are dropped, as Go's fmtFrac.
    std::string f;
    bool print = false;
    for (int i = 0; i < prec; ++i) {
      int digit = static_cast<int>(v % 10);
      print = print || digit != 0;
      if (print) f.insert(f.begin(), static_cast<char>('0' + digit));
      v /= 10;
    }
    if (print) digits = "." + f;
    return v;
  };
  std::string out;
  if (u < 1000000000ULL) {
    std::string unit;
    int prec = 0;
    if (u < 1000ULL) {
      return (neg ? "-" : "") + std::to_string(u) + "ns";
    } else if (u < 1000000ULL) {
      unit = "\u00b5s";
      prec = 3;
    } else {
      unit = "ms";
      prec = 6;
    }
    std::string f;
    std::uint64_t whole = frac(u, prec, f);
    return (neg ? "-" : "") + std::to_string(whole) + f + unit;
  }
  std::string f;
  std::uint64_t secs = frac(u, 9, f);
  std::uint64_t s = secs % 60;
  std::uint64_t mins = secs / 60;
  out = std::to_string(s) + f + "s";
  if (mins > 0) {
    out = std::to_string(mins % 60) + "m" + out;
    std::uint64_t hours = mins / 60;
    if (hours > 0) out = std::to_string(hours) + "h" + out;
  }
  return (neg ? "-" : "") + out;
}

std::string image_tag(std::string image, std::string& digest) {
  std::size_t at = image.find('@');
  if (at != std::string::npos) {
    digest = image.substr(at + 1);
    image.resize(at);
  }
  std::size_t colon = image.rfind(':');
  std::size_t slash = image.rfind('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash))
    return image.substr(colon + 1);
  return "";
}

Result<Value> container_ports(const Value& cs, bool skip_proxy) {
  if (!cs.is_nil_or_invalid() && cs.kind() != Kind::kList)
    return fail("wrong type for value; expected []v1.Container; got " + go_type_name(cs));
  std::vector<std::string> out;
  if (cs.kind() == Kind::kList && cs.as_list()) {
    for (const Value& c : cs.as_list()->items) {
      Value name = member(c, "Name");
      if (skip_proxy && name.is_string() && name.as_string() == "istio-proxy") continue;
      Value ports = member(c, "Ports");
      if (ports.kind() != Kind::kList || ports.as_list() == nullptr) continue;
      for (const Value& p : ports.as_list()->items) {
        Value proto = member(p, "Protocol");
        if (proto.is_string() && (proto.as_string() == "UDP" || proto.as_string() == "SCTP"))
          continue;
        Value n = member(p, "ContainerPort");
        std::int64_t port = 0;
        if (n.kind() == Kind::kFloat64)
          port = static_cast<std::int32_t>(go_float_to_int64(n.as_float()));
        else if (n.is_integer())
          port = static_cast<std::int32_t>(n.int_value());
        out.push_back(std::to_string(port));
      }
    }
  }
  return str(join(out, ","));
}

// omitNil's recursive walk: returns the value and whether anything was removed.
std::pair<Value, bool> omit_nil(const Value& v) {
  if (v.is_nil_or_invalid()) return {Value::nil(), true};
  if (v.kind() == Kind::kMap && v.as_map()) {
    bool changed = false;
    auto out = std::make_shared<Map>();
    for (const auto& [k, e] : v.as_map()->entries()) {
      auto [f, c] = omit_nil(e);
      changed = changed || c;
      if (!f.is_nil()) out->append_sorted(k, f);
    }
    if (!changed) return {v, false};
    if (out->empty()) return {Value::nil(), true};
    return {Value::map(std::move(out)), true};
  }
  if (v.kind() == Kind::kList && v.as_list() && v.as_list()->elem_type.empty()) {
    bool changed = false;
    auto out = std::make_shared<List>();
    for (const Value& e : v.as_list()->items) {
      auto [f, c] = omit_nil(e);
      changed = changed || c;
      if (!f.is_nil()) out->items.push_back(f);
    }
    if (!changed) return {v, false};
    if (out->items.empty()) return {Value::nil(), true};
    return {Value::list(std::move(out)), true};
  }
  return {v, false};
}

Result<Value> merge_string_maps(Args maps) {
  if (maps.empty()) return Value::typed_nil(Kind::kStringMap);
  auto out = std::make_shared<StringMap>();
  for (const Value& m : maps) {
    auto sm = as_string_map(m);
    if (!sm) return fail(sm.error());
    if (smap(*sm))
      for (const auto& [k, v] : smap(*sm)->entries())
        out->set(k, v);
  }
  return Value::string_map(std::move(out));
}

// The JSON DOM sigs.k8s.io/yaml.Marshal converts: what json.Marshal(v) would read back as.
// A float64 whose JSON text is an integer literal becomes an integer, as go-yaml resolves
// "15020" to an int (and "1e+21" or "1.5" to a float). Built directly, not by parsing text:
// RapidJSON's parser trips UBSan (pointer arithmetic on a null stack).
bool to_dom(const Value& v, rapidjson::Value& out, rapidjson::Document::AllocatorType& alloc) {
  switch (v.kind()) {
    case Kind::kInvalid:
    case Kind::kNil:
      out.SetNull();
      return true;
    case Kind::kBool:
      out.SetBool(v.as_bool());
      return true;
    case Kind::kString:
      out.SetString(v.as_string().data(), static_cast<rapidjson::SizeType>(v.as_string().size()),
                    alloc);
      return true;
    case Kind::kFloat64: {
      std::string text;
      if (!append_json(text, v, {})) return false;
      if (text.find_first_of(".eE") == std::string::npos) {
        if (auto i = go_parse_int(text, false)) {
          out.SetInt64(*i);
          return true;
        }
        if (text[0] != '-') {
          std::uint64_t u = 0;
          auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), u);
          if (ec == std::errc() && p == text.data() + text.size()) {
            out.SetUint64(u);
            return true;
          }
        }
      }
      out.SetDouble(v.as_float());
      return true;
    }
    case Kind::kList: {
      out.SetArray();
      if (v.as_list() == nullptr) {
        out.SetNull();
        return true;
      }
      for (const Value& e : v.as_list()->items) {
        rapidjson::Value item;
        if (!to_dom(e, item, alloc)) return false;
        out.PushBack(item, alloc);
      }
      return true;
    }
    case Kind::kMap: {
      if (v.as_map() == nullptr) {
        out.SetNull();
        return true;
      }
      out.SetObject();
      for (const auto& [k, e] : v.as_map()->entries()) {
        rapidjson::Value item;
        if (!to_dom(e, item, alloc)) return false;
        out.AddMember(rapidjson::Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), alloc),
                      item, alloc);
      }
      return true;
    }
    case Kind::kStringMap: {
      if (v.as_string_map() == nullptr) {
        out.SetNull();
        return true;
      }
      out.SetObject();
      for (const auto& [k, e] : v.as_string_map()->entries())
        out.AddMember(rapidjson::Value(k.data(), static_cast<rapidjson::SizeType>(k.size()), alloc),
                      rapidjson::Value(e.data(), static_cast<rapidjson::SizeType>(e.size()), alloc),
                      alloc);
      return true;
    }
    case Kind::kComplex128:
      return false;  // json.Marshal: unsupported type
    case Kind::kObject: {
      // Through its MarshalJSON text, read back as encoding/json would.
      std::string text;
      if (!append_json(text, v, {})) return false;
      auto decoded = parse_json_value(text);
      return decoded.ok() && to_dom(*decoded, out, alloc);
    }
    default:
      if (v.is_unsigned())
        out.SetUint64(v.as_uint());
      else
        out.SetInt64(v.as_int());
      return true;
  }
}

std::string to_yaml(const Value& v) {
  // Small pool chunks: the values templates print are small, and a document's default first
  // chunk (64 KiB) costs more to allocate and free than the conversion itself.
  rapidjson::MemoryPoolAllocator<> pool(1024);
  rapidjson::Document doc(&pool);
  if (!to_dom(v, doc, doc.GetAllocator())) return "";
  return api::json_to_yaml(doc);
}

}  // namespace

void add_extra_functions(FunctionMap& fm) {
  fm.add("required", fixed({kStr, kAny}), [](Args a) -> Result<Value> {
    if (a[1].is_nil_or_invalid() || (a[1].is_string() && a[1].as_string().empty()))
      return fail(std::string(a[0].as_string()));
    return a[1];
  });
  fm.add("fromYaml", fixed({kStr}), [](Args a) -> Result<Value> {
    auto m = std::make_shared<Map>();
    auto doc = api::yaml_to_json(a[0].as_string());
    if (!doc) {
      m->set("Error", str(doc.message()));
      return Value::map(std::move(m));
    }
    if (doc->IsNull()) return Value::map(std::move(m));
    if (!doc->IsObject()) {
      m->set("Error", str("error unmarshaling JSON: while decoding JSON: json: cannot unmarshal " +
                          std::string(doc->IsArray()    ? "array"
                                      : doc->IsString() ? "string"
                                      : doc->IsBool()   ? "bool"
                                                        : "number") +
                          " into Go value of type map[string]interface {}"));
      return Value::map(std::move(m));
    }
    return from_rapidjson(*doc);
  });
}

void add_istio_functions(FunctionMap& fm) {
  fm.add("formatDuration", fixed({kAny}), [](Args a) -> Result<Value> {
    Value s = member(a[0], "seconds");
    Value n = member(a[0], "nanos");
    std::int64_t secs = s.kind() == Kind::kFloat64 ? go_float_to_int64(s.as_float()) : 0;
    std::int64_t nanos = n.kind() == Kind::kFloat64 ? go_float_to_int64(n.as_float()) : 0;
    return str(go_duration(static_cast<std::int64_t>(
        static_cast<std::uint64_t>(secs) * 1000000000ULL + static_cast<std::uint64_t>(nanos))));
  });
  fm.add("isset", fixed({kAny, kStr}), [](Args a) -> Result<Value> {
    auto v = string_map_find(a[0], a[1].as_string());
    if (!v) return fail(v.error());
    return Value::boolean(v->has_value());
  });
  fm.add("excludeInboundPort", fixed({kAny, kStr}), [](Args a) -> Result<Value> {
    std::string port(go_trim_space(sprint_value(a[0])));
    if (port.empty() || port == "0") return a[1];
    std::vector<std::string> kept;
    for (const std::string& item : split(a[1].as_string(), ',')) {
      if (item == port) return a[1];
      std::string t(go_trim_space(item));
      if (!t.empty()) kept.push_back(t);
    }
    kept.push_back(port);
    return str(join(kept, ","));
  });
  fm.add("includeInboundPorts", fixed({kAny}), [](Args a) { return container_ports(a[0], false); });
  fm.add("applicationPorts", fixed({kAny}), [](Args a) { return container_ports(a[0], true); });
  fm.add("kubevirtInterfaces", fixed({kStr}), [](Args a) -> Result<Value> { return a[0]; });
  fm.add("excludeInterfaces", fixed({kStr}), [](Args a) -> Result<Value> { return a[0]; });
  fm.add("annotation", fixed({kAny, kStr, kAny}), [](Args a) -> Result<Value> {
    if (!a[0].is_nil_or_invalid() && a[0].kind() != Kind::kMap && a[0].kind() != Kind::kObject)
      return fail("wrong type for value; expected v1.ObjectMeta; got " + go_type_name(a[0]));
    auto v = string_map_find(member(a[0], "Annotations"), a[1].as_string());
    if (!v) return fail(v.error());
    if (v->has_value()) return **v;
    return str(sprint_value(a[2]));
  });
  fm.add("valueOrDefault", fixed({kAny, kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid() || (a[0].is_string() && a[0].as_string().empty())) return a[1];
    return a[0];
  });
  fm.add("toJSON", fixed({kAny}), [](Args a) -> Result<Value> {
    auto m = as_string_map(a[0]);
    if (!m) return fail(m.error());
    if (smap(*m) == nullptr) return str("{}");
    std::string out;
    append_json(out, *m, {});
    return str(std::move(out));
  });
  fm.add("fromJSON", fixed({kStr}), [](Args a) -> Result<Value> {
    auto v = parse_json_value(a[0].as_string());
    if (!v) return str("{}");
    return *v;
  });
  auto struct_to_json = [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return str("{}");
    std::string out;
    if (!append_json(out, a[0], {})) return str("{}");
    return str(std::move(out));
  };
  fm.add("structToJSON", fixed({kAny}), struct_to_json);
  fm.add("protoToJSON", fixed({kAny}), [struct_to_json](Args a) -> Result<Value> {
    // A typed ProxyConfig object provides upstream's default-stripped jsonpb text itself.
    if (a[0].kind() == Kind::kObject && !a[0].as_object()->is_nil()) {
      if (auto m = a[0].as_object()->method("ProtoToJSON")) {
        auto r = m->call({});
        if (r.ok() && r->is_string()) return *r;
        return str("{}");
      }
    }
    return struct_to_json(a);
  });
  fm.add("toYaml", fixed({kAny}), [](Args a) -> Result<Value> { return str(to_yaml(a[0])); });
  fm.add("indent", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    // Upstream pads with fmt's "% Ns", so a negative N pads |N| spaces too.
    std::int64_t n = a[0].as_int() < 0 ? -a[0].as_int() : a[0].as_int();
    std::string pad(static_cast<std::size_t>(std::min<std::int64_t>(n, 1 << 20)), ' ');
    return str(go_replace_all(a[1].as_string(), "\n", "\n" + pad));
  });
  fm.add("directory", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view p = a[0].as_string();
    std::size_t slash = p.rfind('/');
    return str(slash == std::string_view::npos ? "" : std::string(p.substr(0, slash + 1)));
  });
  fm.add("contains", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    return Value::boolean(a[1].as_string().find(a[0].as_string()) != std::string_view::npos);
  });
  fm.add("toLower", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(go_to_lower(a[0].as_string())); });
  fm.add("appendMultusNetwork", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    std::string existing(a[0].as_string());
    std::string network(a[1].as_string());
    if (existing.empty()) return str(network);
    std::size_t end = existing.rfind(']');
    if (end == std::string::npos) {
      for (const std::string& n : split(existing, ','))
        if (go_trim_space(n) == network) return a[0];
      return str(existing + ", " + network);
    }
    auto parsed = parse_json_value(existing);
    // Go unmarshals into []map[string]any: anything but a list of objects (or null) fails.
    if (!parsed) return a[0];
    std::vector<Value> nets;
    if (parsed->kind() == Kind::kList) {
      for (const Value& n : parsed->as_list()->items) {
        if (n.kind() != Kind::kMap && !n.is_nil()) return a[0];
        nets.push_back(n);
      }
    } else if (!parsed->is_nil()) {
      return a[0];
    }
    std::string ns, name = network;
    auto parts = split(network, '/');
    if (parts.size() >= 2) {
      ns = parts[0];
      name = parts[1];
    }
    for (const Value& n : nets) {
      Value nm = member(n, "name");
      if (!nm.is_string() || nm.as_string() != name) continue;
      Value have = member(n, "namespace");
      if (have.is_nil_or_invalid()) have = str("");
      if (have.is_string() && have.as_string() == ns) return a[0];
    }
    std::string entry = ns.empty()
                            ? ", {\"name\": \"" + name + "\"}"
                            : ", {\"name\": \"" + name + "\", \"namespace\": \"" + ns + "\"}";
    return str(existing.substr(0, end) + entry + existing.substr(end));
  });
  fm.add("env", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    std::string key(a[0].as_string());
    const char* v = std::getenv(key.c_str());
    if (v == nullptr || *v == '\0') return a[1];
    return str(v);
  });
  fm.add("omit", variadic({kAny}, kStr), [](Args a) -> Result<Value> {
    auto m = as_string_map(a[0]);
    if (!m) return fail(m.error());
    auto out = std::make_shared<StringMap>();
    if (smap(*m))
      for (const auto& [k, v] : smap(*m)->entries()) {
        bool drop = false;
        for (std::size_t i = 1; i < a.size(); ++i)
          drop = drop || a[i].as_string() == k;
        if (!drop) out->set(k, v);
      }
    return Value::string_map(std::move(out));
  });
  fm.add("strdict", variadic({}, kStr), [](Args a) -> Result<Value> {
    auto out = std::make_shared<StringMap>();
    for (std::size_t i = 0; i < a.size(); i += 2)
      out->set(a[i].as_string(), i + 1 < a.size() ? std::string(a[i + 1].as_string()) : "");
    return Value::string_map(std::move(out));
  });
  fm.add("mergeMaps", variadic({}, kAny), [](Args a) { return merge_string_maps(a); });
  fm.add("toJsonMap", variadic({}, kAny), [](Args a) -> Result<Value> {
    auto m = merge_string_maps(a);
    if (!m) return fail(m.error());
    std::string out;
    append_json(out, *m, {});
    return str(std::move(out));
  });
  fm.add("omitNil", fixed({kAny}), [](Args a) -> Result<Value> { return omit_nil(a[0]).first; });
  fm.add(
      "otelResourceAttributes", fixed({kAny, kAny, kAny, kStr, kAny}), [](Args a) -> Result<Value> {
        auto anns = as_string_map(a[1]);
        if (!anns) return fail(anns.error());
        auto labels = as_string_map(a[2]);
        if (!labels) return fail(labels.error());
        bool enabled = false;
        Value providers = member(a[0], "ExtensionProviders");
        if (providers.kind() == Kind::kList && providers.as_list()) {
          for (const Value& p : providers.as_list()->items) {
            Value e = member(member(p, "Opentelemetry"), "ServiceAttributeEnrichment");
            if (e.is_string() && e.as_string() == "OTEL_SEMANTIC_CONVENTIONS") {
              enabled = true;
              break;
            }
          }
        }
        if (!enabled) return str("");
        std::string ns(a[3].as_string());
        std::vector<Value> cs;
        if (a[4].kind() == Kind::kList && a[4].as_list()) cs = a[4].as_list()->items;
        auto nonempty = [](const Value& m, std::string_view k) -> std::string {
          auto v = lookup(m, k);
          return v ? *v : std::string();
        };
        std::vector<std::string> attrs;
        if (auto v = nonempty(*anns, "resource.opentelemetry.io/service.namespace"); !v.empty())
          attrs.push_back("service.namespace=" + v);
        else if (!ns.empty())
          attrs.push_back("service.namespace=" + ns);
        if (auto v = nonempty(*anns, "resource.opentelemetry.io/service.version"); !v.empty()) {
          attrs.push_back("service.version=" + v);
        } else if (auto l = nonempty(*labels, "app.kubernetes.io/version"); !l.empty()) {
          attrs.push_back("service.version=" + l);
        } else if (cs.size() == 1) {
          Value image = member(cs[0], "Image");
          std::string digest;
          std::string tag =
              image_tag(image.is_string() ? std::string(image.as_string()) : "", digest);
          if (!tag.empty() && !digest.empty())
            attrs.push_back("service.version=" + tag + "@" + digest);
          else if (!digest.empty())
            attrs.push_back("service.version=" + digest);
          else if (!tag.empty())
            attrs.push_back("service.version=" + tag);
        }
        if (auto v = nonempty(*anns, "resource.opentelemetry.io/service.instance.id"); !v.empty()) {
          attrs.push_back("service.instance.id=" + v);
        } else if (!cs.empty()) {
          Value name = member(cs[0], "Name");
          attrs.push_back("service.instance.id=" + ns + ".$(POD_NAME)." +
                          (name.is_string() ? std::string(name.as_string()) : ""));
        }
        return str(join(attrs, ","));
      });
}

}  // namespace meshop::template_engine
