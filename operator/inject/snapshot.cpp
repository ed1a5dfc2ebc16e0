// build_snapshot: decodes a revision's injector ConfigMap and mesh config once.
#include "operator/inject/snapshot.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

#include "api/hash.hpp"
#include "api/yaml.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::inject {

namespace te = template_engine;

namespace {

api::Error error_at(std::string_view source, std::string_view field, std::string_view what) {
  std::string msg(source);
  msg += ": ";
  if (!field.empty()) {
    msg += field;
    msg += ": ";
  }
  msg += what;
  return api::Error{std::move(msg)};
}

std::string_view json_type_name(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "bool";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
  }
  return "value";
}

std::string expected(std::string_view want, const rapidjson::Value& got) {
  return "expected " + std::string(want) + ", got " + std::string(json_type_name(got));
}

// A list of strings (null = empty).
api::Result<std::vector<std::string>> string_list(const rapidjson::Value& v,
                                                  std::string_view field) {
  std::vector<std::string> out;
  if (v.IsNull()) return out;
  if (!v.IsArray()) return error_at("config", field, expected("list of strings", v));
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    if (!v[i].IsString())
      return error_at("config", std::string(field) + "[" + std::to_string(i) + "]",
                      expected("string", v[i]));
    out.emplace_back(api::string_view_of(v[i]));
  }
  return out;
}

api::Result<std::vector<std::optional<api::LabelSelector>>> selector_list(const rapidjson::Value& v,
                                                                          std::string_view field) {
  std::vector<std::optional<api::LabelSelector>> out;
  if (v.IsNull()) return out;
  if (!v.IsArray()) return error_at("config", field, expected("list of label selectors", v));
  for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
    std::string path = std::string(field) + "[" + std::to_string(i) + "]";
    if (v[i].IsNull()) {
      // A null metav1.LabelSelector entry decodes to the empty selector, which is skipped.
      out.emplace_back(api::LabelSelector());
      continue;
    }
    if (!v[i].IsObject()) return error_at("config", path, expected("label selector", v[i]));
    auto sel = api::LabelSelector::from_json(v[i], path);
    if (sel)
      out.emplace_back(std::move(*sel));
    else
      out.emplace_back(std::nullopt);
  }
  return out;
}

const rapidjson::Value* path_of(const rapidjson::Value& root,
                                std::initializer_list<std::string_view> names) {
  const rapidjson::Value* v = &root;
  for (std::string_view n : names) {
    if (!v->IsObject()) return nullptr;
    v = api::find_member(*v, n);
    if (v == nullptr) return nullptr;
  }
  return v;
}

std::string string_of(const rapidjson::Value& root, std::initializer_list<std::string_view> names) {
  const rapidjson::Value* v = path_of(root, names);
  return v != nullptr && v->IsString() ? std::string(api::string_view_of(*v)) : std::string();
}

api::Status parse_config(std::string_view text, Snapshot& s) {
  auto doc = api::yaml_to_json(text);
  if (!doc) return error_at("config", "", doc.message());
  const rapidjson::Value& root = *doc;
  if (root.IsNull()) {
    s.default_templates = {"sidecar"};
    return api::ok_status();
  }
  if (!root.IsObject()) return error_at("config", "", expected("a mapping", root));
  static const rapidjson::Value kNull;
  auto get = [&](std::string_view name) -> const rapidjson::Value& {
    const rapidjson::Value* v = api::find_member(root, name);
    return v != nullptr ? *v : kNull;
  };

  const rapidjson::Value& policy = get("policy");
  if (!policy.IsNull() && !policy.IsString())
    return error_at("config", "policy", expected("string", policy));
  if (policy.IsString()) s.policy = api::string_view_of(policy);

  auto defaults = string_list(get("defaultTemplates"), "defaultTemplates");
  if (!defaults) return defaults.error();
  s.default_templates = std::move(*defaults);
  if (s.default_templates.empty()) s.default_templates = {"sidecar"};

  const rapidjson::Value& templates = get("templates");
  if (!templates.IsNull()) {
    if (!templates.IsObject())
      return error_at("config", "templates", expected("mapping", templates));
    te::FunctionMap functions = te::default_functions();
    add_proto_functions(functions);
    // protoToJSON (add_proto_functions) is a function of the message it is given.
    std::vector<std::string_view> pure = te::default_pure_functions();
    pure.push_back("protoToJSON");
    for (const auto& m : templates.GetObject()) {
      std::string name(api::string_view_of(m.name));
      std::string field = "templates." + name;
      if (!m.value.IsString() && !m.value.IsNull())
        return error_at("config", field, expected("string", m.value));
      std::string_view source = m.value.IsString() ? api::string_view_of(m.value) : "";
      auto parsed = te::Template::parse("inject", source, functions);
      if (!parsed) return error_at("config", field, parsed.message());
      s.templates[name] = *parsed;
      s.template_memos[name] = {
          std::make_shared<const te::ConstantMemo>(**parsed, snapshot_data_fields(), pure,
                                                   pod_keyed_reads(), pod_expected_values()),
          std::make_shared<const te::ConstantMemo>(**parsed, default_proxy_data_fields(), pure,
                                                   pod_keyed_reads(), pod_expected_values())};
      if (template_may_call_nondeterministic(source)) s.deterministic = false;
    }
  }

  const rapidjson::Value& aliases = get("aliases");
  if (!aliases.IsNull()) {
    if (!aliases.IsObject()) return error_at("config", "aliases", expected("mapping", aliases));
    for (const auto& m : aliases.GetObject()) {
      std::string name(api::string_view_of(m.name));
      auto list = string_list(m.value, "aliases." + name);
      if (!list) return list.error();
      s.aliases[name] = std::move(*list);
    }
  }

  auto never = selector_list(get("neverInjectSelector"), "neverInjectSelector");
  if (!never) return never.error();
  s.never_inject_selector = std::move(*never);
  auto always = selector_list(get("alwaysInjectSelector"), "alwaysInjectSelector");
  if (!always) return always.error();
  s.always_inject_selector = std::move(*always);

  const rapidjson::Value& injected = get("injectedAnnotations");
  if (!injected.IsNull()) {
    if (!injected.IsObject())
      return error_at("config", "injectedAnnotations", expected("mapping", injected));
    for (const auto& m : injected.GetObject()) {
      std::string key(api::string_view_of(m.name));
      if (!m.value.IsString())
        return error_at("config", "injectedAnnotations." + key, expected("string", m.value));
      s.injected_annotations.emplace_back(key, std::string(api::string_view_of(m.value)));
    }
    std::stable_sort(s.injected_annotations.begin(), s.injected_annotations.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return api::ok_status();
}

api::Status parse_values(std::string_view text, Snapshot& s) {
  auto doc = api::yaml_to_json(text);
  if (!doc) return error_at("values", "", doc.message());
  s.values.SetObject();
  if (doc->IsObject()) {
    s.values.CopyFrom(*doc, s.values.GetAllocator());
  } else if (!doc->IsNull()) {
    return error_at("values", "", expected("a mapping", *doc));
  }
  s.values_data = te::funcs::from_rapidjson(s.values);

  const rapidjson::Value& v = s.values;
  s.hub = string_of(v, {"global", "hub"});
  if (const rapidjson::Value* tag = path_of(v, {"global", "tag"}); tag != nullptr && !tag->IsNull())
    s.tag = te::sprint_value(te::funcs::from_rapidjson(*tag));
  s.variant = string_of(v, {"global", "variant"});
  s.proxy_image_name = string_of(v, {"global", "proxy", "image"});
  if (s.proxy_image_name.empty()) s.proxy_image_name = "proxyv2";
  s.proxy_init_image_name = string_of(v, {"global", "proxy_init", "image"});
  if (s.proxy_init_image_name.empty()) s.proxy_init_image_name = "proxyv2";
  s.cluster_name = string_of(v, {"global", "multiCluster", "clusterName"});
  s.network = string_of(v, {"global", "network"});
  if (const rapidjson::Value* hold =
          path_of(v, {"global", "proxy", "holdApplicationUntilProxyStarts"})) {
    if (hold->IsBool()) {
      s.values_hold_application = hold->GetBool();
    } else if (hold->IsObject()) {
      // google.protobuf.BoolValue written as {"value": true}.
      const rapidjson::Value* inner = api::find_member(*hold, "value");
      s.values_hold_application = inner != nullptr && inner->IsBool() && inner->GetBool();
    } else if (!hold->IsNull()) {
      return error_at("values", "global.proxy.holdApplicationUntilProxyStarts",
                      expected("bool", *hold));
    }
  }
  return api::ok_status();
}

}  // namespace

bool kubelet_versions_support_native(const std::vector<std::string>& versions) {
  for (const std::string& version : versions) {
    std::string_view v = version;
    if (!v.empty() && (v[0] == 'v' || v[0] == 'V')) v.remove_prefix(1);
    std::size_t dot = v.find('.');
    if (dot == std::string_view::npos) return false;
    std::string_view rest = v.substr(dot + 1);
    int minor = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), minor);
    if (ec != std::errc() || ptr == rest.data()) return false;
    if (minor < 33) return false;
  }
  return true;
}

std::string injector_fingerprint(const SnapshotSources& sources) {
  std::uint64_t h = api::kFnv1aOffset;
  auto mix = [&h](std::string_view part) {
    // Each part ends with the byte 0xff, which never occurs in UTF-8 text.
    h = api::fnv1a("\xff", api::fnv1a(part, h));
  };
  mix(sources.revision == "default" ? std::string_view() : std::string_view(sources.revision));
  mix(sources.config);
  mix(sources.values);
  mix(sources.mesh);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4)
    out[static_cast<std::size_t>(i)] = kHex[h & 15];
  return out;
}

const std::vector<std::string>& snapshot_data_fields() {
  static const std::vector<std::string> fields = {"CompliancePolicy", "InboundTrafficPolicyMode",
                                                  "MeshConfig",       "NativeSidecars",
                                                  "Revision",         "Values"};
  return fields;
}

const std::vector<std::string>& default_proxy_data_fields() {
  static const std::vector<std::string> fields = [] {
    std::vector<std::string> f = snapshot_data_fields();
    f.insert(f.end(), {"ProxyConfig", "ProxyImage", "ProxyInitImage"});
    return f;
  }();
  return fields;
}

const std::vector<te::KeyedRead>& pod_keyed_reads() {
  static const std::vector<te::KeyedRead> reads = [] {
    std::vector<te::KeyedRead> r;
    const std::vector<std::string> annotations = {"ObjectMeta", "Annotations"};
    const std::vector<std::string> labels = {"ObjectMeta", "Labels"};
    r.push_back({"annotation", {"ObjectMeta"}, annotations});
    for (const auto& map : {annotations, labels}) {
      r.push_back({"isset", map, map});
      r.push_back({"index", map, map});
    }
    return r;
  }();
  return reads;
}

const std::vector<te::ExpectedValue>& pod_expected_values() {
  static const std::vector<te::ExpectedValue> values = {
      {{"ProxyUID"}, te::Value::integer(kDefaultProxyId, te::Kind::kInt64)},
      {{"ProxyGID"}, te::Value::integer(kDefaultProxyId, te::Kind::kInt64)}};
  return values;
}

const std::vector<std::string_view>& nondeterministic_functions() {
  // funcs_sprig_date.cpp: the date formatters and durationRound use now when not given a
  // time; funcs_sprig_crypto.cpp: random values; funcs_sprig_strings.cpp: getHostByName.
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v = {
        "ago",           "date",      "dateInZone",     "date_in_zone", "durationRound",
        "getHostByName", "htmlDate",  "htmlDateInZone", "now",          "randAlpha",
        "randAlphaNum",  "randAscii", "randBytes",      "randInt",      "randNumeric",
        "shuffle",       "uuidv4"};
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

bool template_may_call_nondeterministic(std::string_view text) {
  const auto& names = nondeterministic_functions();
  auto ident_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  };
  std::size_t i = 0;
  while (true) {
    std::size_t open = text.find("{{", i);
    if (open == std::string_view::npos) return false;
    i = open + 2;
    // Inside one action, up to its "}}" (outside literals and comments).
    while (i < text.size()) {
      char c = text[i];
      if (c == '}' && i + 1 < text.size() && text[i + 1] == '}') {
        i += 2;
        break;
      }
      if (c == '"' || c == '\'') {
        for (++i; i < text.size() && text[i] != c; ++i)
          if (text[i] == '\\') ++i;
        ++i;
        continue;
      }
      if (c == '`') {
        std::size_t end = text.find('`', i + 1);
        if (end == std::string_view::npos) return false;
        i = end + 1;
        continue;
      }
      if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
        std::size_t end = text.find("*/", i + 2);
        if (end == std::string_view::npos) return false;
        i = end + 2;
        continue;
      }
      if (!ident_char(c)) {
        ++i;
        continue;
      }
      std::size_t start = i;
      while (i < text.size() && ident_char(text[i]))
        ++i;
      char before = start > 0 ? text[start - 1] : ' ';
      if (before == '.' || before == '$') continue;  // a field or a variable
      if (std::binary_search(names.begin(), names.end(), text.substr(start, i - start)))
        return true;
    }
  }
}

bool snapshot_is_deterministic(const Snapshot& snapshot) {
  return snapshot.deterministic;
}

api::Result<std::shared_ptr<const Snapshot>> build_snapshot(const SnapshotSources& sources) {
  auto s = std::make_shared<Snapshot>();
  s->revision = sources.revision;
  s->fingerprint = injector_fingerprint(sources);
  s->stamp_fingerprint = sources.stamp_fingerprint;
  if (auto st = parse_config(sources.config, *s); !st) return st.error();
  if (auto st = parse_values(sources.values, *s); !st) return st.error();

  auto mesh = parse_mesh_config(sources.mesh);
  if (!mesh) {
    std::string msg = mesh.message();
    if (msg.rfind("mesh", 0) != 0) msg = "mesh: " + msg;
    return api::Error{std::move(msg)};
  }
  s->mesh = std::move(*mesh);
  s->mesh_data = as_template_value(s->mesh);
  s->mesh_status_port = s->mesh->default_proxy_config()->status_port();

  switch (sources.native_sidecars) {
    case NativeSidecars::kEnabled:
      s->native_sidecars = true;
      break;
    case NativeSidecars::kDisabled:
      s->native_sidecars = false;
      break;
    case NativeSidecars::kAuto:
      s->native_sidecars = kubelet_versions_support_native(sources.node_kubelet_versions);
      break;
  }
  s->compliance_policy = sources.compliance_policy;
  s->openshift = sources.openshift;
  s->template_limits = sources.template_limits;
  s->max_pod_containers = sources.max_pod_containers;
  return std::shared_ptr<const Snapshot>(std::move(s));
}

}  // namespace meshop::inject
