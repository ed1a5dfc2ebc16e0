// Application probe rewriting (upstream app_probe.go and webhook.go applyRewrite /
// mergeOrAppendProbers).
//
// With mutual TLS the kubelet's probes cannot reach the application directly, so the agent
// takes them over: every httpGet / tcpSocket / grpc probe (and httpGet / tcpSocket lifecycle
// hook) of the application containers becomes an httpGet on the agent's status port at
// /app-health/<container>/<kind>z (/app-lifecycle/... for hooks), and the original actions
// travel to the agent as JSON in ISTIO_KUBE_APP_PROBERS (pilot-agent's status.KubeAppProbers).
//
// That JSON is what Go's encoding/json writes for map[string]*Prober: keys sorted, struct
// fields in Go order with omitempty (`grpc.service` has no omitempty, so it is null when
// unset), HTML characters escaped. Reading an existing value follows encoding/json too
// (member names match case-insensitively, a wrong type fails the whole value).
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"

namespace meshop::inject {
namespace postprocess {
namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// --- the KubeAppProbers model -----------------------------------------------------------------

struct IntOrString {
  bool is_string = false;
  std::int32_t int_value = 0;
  std::string string_value;
};
struct HttpGet {
  std::string path;
  IntOrString port;
  std::string host, scheme;
  std::vector<std::pair<std::string, std::string>> headers;
};
struct TcpSocket {
  IntOrString port;
  std::string host;
};
struct Grpc {
  std::int32_t port = 0;
  std::optional<std::string> service;
};
struct Prober {
  std::optional<HttpGet> http_get;
  std::optional<TcpSocket> tcp_socket;
  std::optional<Grpc> grpc;
  std::int32_t timeout_seconds = 0;
};
// nullopt is a JSON null (a nil *Prober), which Go keeps through a merge.
using Probers = std::map<std::string, std::optional<Prober>>;

// Decodes JSON into the model as Go would decode it into the typed structs. `encoding_json`
// selects encoding/json's rules (case-insensitive member names, integers only as integer
// literals) for values we read back from an env var; otherwise the rules of the pod decoder
// (sigs.k8s.io/json: exact member names; YAML-sourced whole floats are integers).
class Decoder {
 public:
  explicit Decoder(bool encoding_json) : encoding_json_(encoding_json) {}

  const std::string& error() const { return error_; }

  // The value of member `name` as Go assigns it: the last matching member wins.
  const Value* member(const Value& object, std::string_view name) const {
    const Value* found = nullptr;
    for (const auto& m : object.GetObject()) {
      std::string_view key = api::string_view_of(m.name);
      if (key == name || (encoding_json_ && fold_equal(key, name))) found = &m.value;
    }
    return found;
  }

  bool string(const Value* v, std::string& out, const std::string& path) {
    if (v == nullptr || v->IsNull()) return true;
    if (!v->IsString()) return fail(path, "expected a string");
    out.assign(v->GetString(), v->GetStringLength());
    return true;
  }

  bool int32(const Value* v, std::int32_t& out, const std::string& path) {
    if (v == nullptr || v->IsNull()) return true;
    if (v->IsInt()) {
      out = v->GetInt();
      return true;
    }
    if (!encoding_json_ && v->IsDouble()) {
      double d = v->GetDouble();
      // The range first: converting a double outside int64 is undefined behaviour.
      if (d >= std::numeric_limits<std::int32_t>::min() &&
          d <= std::numeric_limits<std::int32_t>::max() && d == std::trunc(d)) {
        out = static_cast<std::int32_t>(d);
        return true;
      }
    }
    return fail(path, "expected a 32-bit integer");
  }

  bool int_or_string(const Value* v, IntOrString& out, const std::string& path) {
    if (v != nullptr && v->IsString()) {
      out = {true, 0, std::string(v->GetString(), v->GetStringLength())};
      return true;
    }
    out = {};  // null unmarshals as the integer 0
    return int32(v, out.int_value, path);
  }

  bool http_get(const Value& v, HttpGet& out, const std::string& path) {
    if (!v.IsObject()) return fail(path, "expected an object");
    if (!string(member(v, "path"), out.path, path + ".path") ||
        !int_or_string(member(v, "port"), out.port, path + ".port") ||
        !string(member(v, "host"), out.host, path + ".host") ||
        !string(member(v, "scheme"), out.scheme, path + ".scheme")) {
      return false;
    }
    const Value* headers = member(v, "httpHeaders");
    if (headers == nullptr || headers->IsNull()) return true;
    if (!headers->IsArray()) return fail(path + ".httpHeaders", "expected a list");
    for (rapidjson::SizeType i = 0; i < headers->Size(); ++i) {
      const Value& h = (*headers)[i];
      std::string at = path + ".httpHeaders[" + std::to_string(i) + "]";
      auto& [name, value] = out.headers.emplace_back();
      if (h.IsNull()) continue;
      if (!h.IsObject()) return fail(at, "expected an object");
      if (!string(member(h, "name"), name, at + ".name") ||
          !string(member(h, "value"), value, at + ".value")) {
        return false;
      }
    }
    return true;
  }

  bool tcp_socket(const Value& v, TcpSocket& out, const std::string& path) {
    if (!v.IsObject()) return fail(path, "expected an object");
    return int_or_string(member(v, "port"), out.port, path + ".port") &&
           string(member(v, "host"), out.host, path + ".host");
  }

  bool grpc(const Value& v, Grpc& out, const std::string& path) {
    if (!v.IsObject()) return fail(path, "expected an object");
    if (!int32(member(v, "port"), out.port, path + ".port")) return false;
    const Value* service = member(v, "service");
    if (service == nullptr || service->IsNull()) return true;
    std::string s;
    if (!string(service, s, path + ".service")) return false;
    out.service = std::move(s);
    return true;
  }

  // A Prober as encoding/json decodes one (all handlers and timeoutSeconds).
  bool prober(const Value& v, Prober& out, const std::string& path) {
    if (!v.IsObject()) return fail(path, "expected an object");
    if (const Value* h = member(v, "httpGet"); h != nullptr && !h->IsNull()) {
      if (!http_get(*h, out.http_get.emplace(), path + ".httpGet")) return false;
    }
    if (const Value* t = member(v, "tcpSocket"); t != nullptr && !t->IsNull()) {
      if (!tcp_socket(*t, out.tcp_socket.emplace(), path + ".tcpSocket")) return false;
    }
    if (const Value* g = member(v, "grpc"); g != nullptr && !g->IsNull()) {
      if (!grpc(*g, out.grpc.emplace(), path + ".grpc")) return false;
    }
    return int32(member(v, "timeoutSeconds"), out.timeout_seconds, path + ".timeoutSeconds");
  }

  // kubeProbeToInternalProber / kubeLifecycleHandlerToInternalProber: the first handler of
  // httpGet, tcpSocket, grpc (lifecycle hooks have no grpc and no timeout). nullopt when the
  // probe has none of them.
  std::optional<Prober> from_handler(const Value* v, bool lifecycle, const std::string& path) {
    if (v == nullptr || !v->IsObject()) return std::nullopt;
    Prober p;
    if (!lifecycle &&
        !int32(member(*v, "timeoutSeconds"), p.timeout_seconds, path + ".timeoutSeconds")) {
      return std::nullopt;
    }
    if (const Value* h = member(*v, "httpGet"); h != nullptr && !h->IsNull()) {
      if (!http_get(*h, p.http_get.emplace(), path + ".httpGet")) return std::nullopt;
      return p;
    }
    if (const Value* t = member(*v, "tcpSocket"); t != nullptr && !t->IsNull()) {
      if (!tcp_socket(*t, p.tcp_socket.emplace(), path + ".tcpSocket")) return std::nullopt;
      return p;
    }
    if (const Value* g = member(*v, "grpc"); !lifecycle && g != nullptr && !g->IsNull()) {
      if (!grpc(*g, p.grpc.emplace(), path + ".grpc")) return std::nullopt;
      return p;
    }
    return std::nullopt;
  }

  // encoding/json's map[string]*Prober.
  bool probers(const Value& v, Probers& out) {
    if (v.IsNull()) return true;
    if (!v.IsObject()) return fail("", "expected an object");
    for (const auto& m : v.GetObject()) {
      std::string key(m.name.GetString(), m.name.GetStringLength());
      if (m.value.IsNull()) {
        out[key] = std::nullopt;
        continue;
      }
      Prober p;
      if (!prober(m.value, p, key)) return false;
      out[key] = std::move(p);
    }
    return true;
  }

 private:
  static bool fold_equal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
      if (lower(a[i]) != lower(b[i])) return false;
    }
    return true;
  }

  bool fail(const std::string& path, std::string_view what) {
    if (error_.empty()) error_ = path + ": " + std::string(what);
    return false;
  }

  bool encoding_json_;
  std::string error_;
};

// --- encoding/json output ---------------------------------------------------------------------

Value int_or_string_json(const IntOrString& v, Allocator& a) {
  return v.is_string ? api::make_string(v.string_value, a) : Value(v.int_value);
}

Value prober_json(const Prober& p, Allocator& a) {
  Value out(rapidjson::kObjectType);
  if (p.http_get) {
    const HttpGet& h = *p.http_get;
    Value o(rapidjson::kObjectType);
    if (!h.path.empty()) o.AddMember("path", api::make_string(h.path, a), a);
    o.AddMember("port", int_or_string_json(h.port, a), a);
    if (!h.host.empty()) o.AddMember("host", api::make_string(h.host, a), a);
    if (!h.scheme.empty()) o.AddMember("scheme", api::make_string(h.scheme, a), a);
    if (!h.headers.empty()) {
      Value headers(rapidjson::kArrayType);
      for (const auto& [name, value] : h.headers) {
        Value header(rapidjson::kObjectType);
        header.AddMember("name", api::make_string(name, a), a);
        header.AddMember("value", api::make_string(value, a), a);
        headers.PushBack(header, a);
      }
      o.AddMember("httpHeaders", headers, a);
    }
    out.AddMember("httpGet", o, a);
  }
  if (p.tcp_socket) {
    Value o(rapidjson::kObjectType);
    o.AddMember("port", int_or_string_json(p.tcp_socket->port, a), a);
    if (!p.tcp_socket->host.empty()) {
      o.AddMember("host", api::make_string(p.tcp_socket->host, a), a);
    }
    out.AddMember("tcpSocket", o, a);
  }
  if (p.grpc) {
    Value o(rapidjson::kObjectType);
    o.AddMember("port", Value(p.grpc->port), a);
    o.AddMember("service", p.grpc->service ? api::make_string(*p.grpc->service, a) : Value(), a);
    out.AddMember("grpc", o, a);
  }
  if (p.timeout_seconds != 0) out.AddMember("timeoutSeconds", Value(p.timeout_seconds), a);
  return out;
}

std::string probers_json(const Probers& probers) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  for (const auto& [key, prober] : probers) {  // std::map: Go's sorted map keys
    d.AddMember(api::make_string(key, a), prober ? prober_json(*prober, a) : Value(), a);
  }
  return api::to_json(d);
}

// --- pod walking ------------------------------------------------------------------------------

struct ProberUrls {
  std::string readyz, livez, startupz, prestopz, poststartz;
};
// pilot-agent's status.FormatProberURL.
ProberUrls prober_urls(std::string_view container) {
  std::string c(container);
  return {"/app-health/" + c + "/readyz", "/app-health/" + c + "/livez",
          "/app-health/" + c + "/startupz", "/app-lifecycle/" + c + "/prestopz",
          "/app-lifecycle/" + c + "/poststartz"};
}

// updateNamedPort in DumpAppProbers: a named port resolves through the container's ports (the
// prober is dropped when the name is unknown); a port already equal to the agent's means the
// probe was rewritten before. gRPC ports are always numbers.
std::optional<Prober> resolve_port(std::optional<Prober> p,
                                   const std::map<std::string, std::int32_t>& named_ports,
                                   std::int64_t target_port) {
  if (!p || p->grpc) return p;
  IntOrString* port = p->http_get ? &p->http_get->port : &p->tcp_socket->port;
  if (port->is_string) {
    auto it = named_ports.find(port->string_value);
    if (it == named_ports.end()) return std::nullopt;
    *port = {false, it->second, {}};
  } else if (port->int_value == target_port) {
    return std::nullopt;
  }
  return p;
}

std::string container_name(const Value& c) {
  const Value* n = api::find_member(c, "name");
  return n != nullptr && n->IsString() ? std::string(n->GetString(), n->GetStringLength())
                                       : std::string();
}

// The JSON path of container `i` of spec.<list>, for messages.
std::string container_path(std::string_view list, rapidjson::SizeType i) {
  return "spec." + std::string(list) + "[" + std::to_string(i) + "]";
}

// Containers of spec.<list> (objects only), with their index (container_path).
template <class V, class F>
void for_each_container(V& pod, std::string_view list, F&& f) {
  if (!pod.IsObject()) return;
  auto* spec = api::find_member(pod, "spec");
  if (spec == nullptr || !spec->IsObject()) return;
  auto* containers = api::find_member(*spec, list);
  if (containers == nullptr || !containers->IsArray()) return;
  for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
    auto& c = (*containers)[i];
    if (c.IsObject()) f(c, i);
  }
}

// rewriteHTTPGetAction on a JSON httpGet: the agent's URL and port; HTTPS becomes HTTP because
// the agent, not the kubelet, talks TLS to the application. Go's field order (path, port
// first) is kept.
void rewrite_http_get(Value& http_get, std::string_view url, std::int32_t port, Allocator& a) {
  Value out(rapidjson::kObjectType);
  out.AddMember("path", api::make_string(url, a), a);
  out.AddMember("port", Value(port), a);
  for (auto& m : http_get.GetObject()) {
    std::string_view key = api::string_view_of(m.name);
    if (key == "path" || key == "port") continue;
    if (key == "scheme" && m.value.IsString() && api::string_view_of(m.value) == "HTTPS") {
      m.value = Value("HTTP");
    }
    out.AddMember(m.name, m.value, a);  // moves
  }
  http_get = std::move(out);
}

// Replaces the handler `replaced` (tcpSocket, grpc) of a probe or hook by an httpGet on the
// agent, at the handler's place.
void replace_with_http_get(Value& handler, std::string_view replaced, std::string_view url,
                           std::int32_t port, Allocator& a) {
  Value http_get(rapidjson::kObjectType);
  http_get.AddMember("path", api::make_string(url, a), a);
  http_get.AddMember("port", Value(port), a);
  Value out(rapidjson::kObjectType);
  bool placed = false;
  for (auto& m : handler.GetObject()) {
    std::string_view key = api::string_view_of(m.name);
    if (key == replaced || key == "httpGet") {
      if (!placed) out.AddMember("httpGet", http_get, a);
      placed = true;
      continue;
    }
    out.AddMember(m.name, m.value, a);
  }
  handler = std::move(out);
}

bool has_handler(const Value& v, std::string_view name) {
  const Value* h = api::find_member(v, name);
  return h != nullptr && h->IsObject();
}

// convertAppProber / convertAppLifecycleHandler on one probe or hook.
void convert_handler(Value* v, bool lifecycle, std::string_view url, std::int32_t port,
                     Allocator& a) {
  if (v == nullptr || !v->IsObject()) return;
  if (has_handler(*v, "httpGet")) {
    rewrite_http_get(*api::find_member(*v, "httpGet"), url, port, a);
  } else if (has_handler(*v, "tcpSocket")) {
    replace_with_http_get(*v, "tcpSocket", url, port, a);
  } else if (!lifecycle && has_handler(*v, "grpc")) {
    replace_with_http_get(*v, "grpc", url, port, a);
  }
}

}  // namespace

bool should_rewrite_app_http_probers(const Value& pod, bool spec_setting) {
  if (auto value = annotation(pod, kRewriteProbersAnnotation)) {
    if (auto b = go_parse_bool(*value)) return *b;
  }
  return spec_setting;
}

api::Result<std::string> dump_app_probers(const Value& pod, std::int64_t target_port) {
  Probers out;
  Decoder decoder(/*encoding_json=*/false);
  // allContainers: init containers first, so a same-named app container's entry wins.
  for (std::string_view list : {"initContainers", "containers"}) {
    for_each_container(pod, list, [&](const Value& c, rapidjson::SizeType index) {
      if (!decoder.error().empty()) return;
      std::string name = container_name(c);
      if (name == kProxyContainerName) return;
      const std::string path = container_path(list, index);
      std::map<std::string, std::int32_t> named_ports;
      if (const Value* ports = api::find_member(c, "ports"); ports != nullptr && ports->IsArray()) {
        for (rapidjson::SizeType i = 0; i < ports->Size(); ++i) {
          const Value& p = (*ports)[i];
          if (!p.IsObject()) continue;
          std::string port_name;
          std::int32_t number = 0;
          std::string at = path + ".ports[" + std::to_string(i) + "]";
          if (!decoder.string(api::find_member(p, "name"), port_name, at + ".name") ||
              !decoder.int32(api::find_member(p, "containerPort"), number, at + ".containerPort")) {
            return;
          }
          if (!port_name.empty()) named_ports[port_name] = number;
        }
      }
      // Paths and URLs are made only for the probes a container has (most have none).
      std::optional<ProberUrls> urls;
      auto add = [&](const char* field, bool lifecycle, const Value& parent,
                     std::string_view parent_path, std::string ProberUrls::*url) {
        const Value* handler = api::find_member(parent, field);
        if (handler == nullptr || !handler->IsObject()) return;  // from_handler: no prober
        std::string at = std::string(parent_path) + "." + field;
        auto p = decoder.from_handler(handler, lifecycle, at);
        if (auto resolved = resolve_port(std::move(p), named_ports, target_port)) {
          if (!urls) urls = prober_urls(name);
          out[(*urls).*url] = std::move(resolved);
        }
      };
      add("readinessProbe", false, c, path, &ProberUrls::readyz);
      add("livenessProbe", false, c, path, &ProberUrls::livez);
      add("startupProbe", false, c, path, &ProberUrls::startupz);
      if (const Value* lc = api::find_member(c, "lifecycle"); lc != nullptr && lc->IsObject()) {
        const std::string lifecycle_path = path + ".lifecycle";
        add("preStop", true, *lc, lifecycle_path, &ProberUrls::prestopz);
        add("postStart", true, *lc, lifecycle_path, &ProberUrls::poststartz);
      }
    });
  }
  if (!decoder.error().empty()) return api::Error{"invalid pod: " + decoder.error()};
  if (out.empty()) return std::string();  // never "{}"
  return probers_json(out);
}

void merge_or_append_probers(bool previously_injected, Value& env, std::string_view new_probers,
                             Allocator& a, std::vector<std::string>* warnings) {
  auto env_var = [&](std::string_view value) {
    Value var(rapidjson::kObjectType);
    var.AddMember("name", api::make_string(kKubeAppProbersEnv, a), a);
    var.AddMember("value", api::make_string(value, a), a);
    return var;
  };
  auto warn = [&](std::string message) {
    if (warnings != nullptr) warnings->push_back(std::move(message));
  };
  if (previously_injected) {
    for (auto& var : env.GetArray()) {
      if (api::string_at(var, {"name"}) != kKubeAppProbersEnv) continue;
      // The pod was injected before: probes it already handed to the agent stay as they were
      // (its app containers now point at the agent and cannot be read back).
      Probers existing, merged;
      auto parsed = api::parse_json(api::string_at(var, {"value"}));
      Decoder decoder(/*encoding_json=*/true);
      if (!parsed.ok() || !decoder.probers(*parsed, existing)) {
        warn("failed to unmarshal existing " + std::string(kKubeAppProbersEnv) + ": " +
             (parsed.ok() ? decoder.error() : parsed.message()) + "; keeping it unchanged");
        return;
      }
      auto fresh = api::parse_json(new_probers);
      Decoder fresh_decoder(/*encoding_json=*/true);
      if (!fresh.ok() || !fresh_decoder.probers(*fresh, merged)) {
        warn("failed to unmarshal new " + std::string(kKubeAppProbersEnv) + "; keeping the old");
        return;
      }
      for (auto& [key, prober] : existing)
        merged[key] = std::move(prober);
      var = env_var(probers_json(merged));
      return;
    }
  }
  env.PushBack(env_var(new_probers), a);
}

void patch_rewrite_probe(Value& pod, std::int64_t default_port, Allocator& a,
                         std::vector<std::string>* warnings) {
  std::int64_t status_port = default_port;
  if (auto value = annotation(pod, kStatusPortAnnotation)) {
    // Upstream takes strconv.Atoi's result even when it fails (0, or the clamped bound).
    GoAtoi n = go_atoi(*value);
    if (!n.ok && warnings != nullptr) {
      warnings->push_back("invalid annotation " + std::string(kStatusPortAnnotation) + "=" +
                          std::string(*value) + ": not an integer");
    }
    status_port = n.value;
  }
  // intstr.FromInt32(int32(port)).
  const auto port = static_cast<std::int32_t>(static_cast<std::uint32_t>(status_port));
  for (std::string_view list : {"containers", "initContainers"}) {
    for_each_container(pod, list, [&](Value& c, rapidjson::SizeType) {
      std::string name = container_name(c);
      if (name == kProxyContainerName) return;
      // The URLs are made only for the probes and hooks a container has (most have none).
      std::optional<ProberUrls> urls;
      auto convert = [&](Value* v, bool lifecycle, std::string ProberUrls::*url) {
        if (v == nullptr || !v->IsObject()) return;  // what convert_handler skips
        if (!urls) urls = prober_urls(name);
        convert_handler(v, lifecycle, (*urls).*url, port, a);
      };
      convert(api::find_member(c, "readinessProbe"), false, &ProberUrls::readyz);
      convert(api::find_member(c, "livenessProbe"), false, &ProberUrls::livez);
      convert(api::find_member(c, "startupProbe"), false, &ProberUrls::startupz);
      if (Value* lc = api::find_member(c, "lifecycle"); lc != nullptr && lc->IsObject()) {
        convert(api::find_member(*lc, "preStop"), true, &ProberUrls::prestopz);
        convert(api::find_member(*lc, "postStart"), true, &ProberUrls::poststartz);
      }
    });
  }
}

}  // namespace postprocess

api::Status rewrite_app_probes(rapidjson::Document& pod, const rapidjson::Value& values,
                               bool was_injected, int status_port,
                               std::vector<std::string>* warnings) {
  using namespace postprocess;
  Value* sidecar = find_sidecar(pod);
  if (sidecar == nullptr) return api::ok_status();
  // values.sidecarInjectorWebhook.rewriteAppHTTPProbe is a BoolValue: anything but a JSON
  // boolean would not have decoded upstream, and absent is false.
  const Value* setting = nullptr;
  if (values.IsObject()) {
    if (const Value* w = api::find_member(values, "sidecarInjectorWebhook"); w && w->IsObject()) {
      setting = api::find_member(*w, "rewriteAppHTTPProbe");
    }
  }
  const bool spec_setting = setting != nullptr && setting->IsBool() && setting->GetBool();
  if (!should_rewrite_app_http_probers(pod, spec_setting)) return api::ok_status();
  auto probers = dump_app_probers(pod, status_port);
  if (!probers.ok()) return api::Error{probers.message()};
  auto& allocator = pod.GetAllocator();
  if (!probers->empty()) {
    merge_or_append_probers(was_injected, ensure_env(*sidecar, allocator), *probers, allocator,
                            warnings);
  }
  patch_rewrite_probe(pod, status_port, allocator, warnings);
  return api::ok_status();
}

}  // namespace meshop::inject
