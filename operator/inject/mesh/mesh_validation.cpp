#include "operator/inject/mesh/mesh_validation.hpp"

#include <arpa/inet.h>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "operator/inject/mesh/go_duration.hpp"
#include "operator/template/functions.hpp"

namespace meshop::inject {
namespace {

class Errors {
 public:
  explicit Errors(std::string_view path) : path_(path) {}
  void add(std::string_view field, const std::string& message) {
    std::string where(path_);
    if (!field.empty()) {
      if (!where.empty()) where += '.';
      where += field;
    }
    messages_.push_back(where.empty() ? message : where + ": " + message);
  }
  void merge(const api::Status& st) {
    if (!st.ok()) messages_.push_back(st.message());
  }
  api::Status status() const {
    if (messages_.empty()) return api::ok_status();
    std::string out;
    for (const std::string& m : messages_) {
      if (!out.empty()) out += "; ";
      out += m;
    }
    return api::Error{out};
  }

 private:
  std::string path_;
  std::vector<std::string> messages_;
};

api::Error invalid(std::string message) {
  return api::make_error(api::ErrorKind::kInvalid, std::move(message));
}

const api::Value* member(const api::Value* obj, std::string_view name) {
  return obj != nullptr && obj->IsObject() ? api::find_member(*obj, name) : nullptr;
}

std::string_view str(const api::Value* obj, std::string_view name) {
  const api::Value* v = member(obj, name);
  return v != nullptr && v->IsString() ? api::string_view_of(*v) : std::string_view{};
}

std::int64_t num(const api::Value* obj, std::string_view name) {
  const api::Value* v = member(obj, name);
  if (v == nullptr) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsString()) {
    std::int64_t out = 0;
    std::string_view s = api::string_view_of(*v);
    std::from_chars(s.data(), s.data() + s.size(), out);
    return out;
  }
  return 0;
}

// Nanoseconds of a Duration field; nullopt when unset (Go's AsDuration would give 0).
std::optional<std::int64_t> duration(const api::Value* obj, std::string_view name) {
  const api::Value* v = member(obj, name);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  std::int64_t s = 0;
  std::int32_t n = 0;
  if (!parse_proto_duration(api::string_view_of(*v), s, n)) return std::nullopt;
  return s * 1000000000 + n;
}

api::Status validate_port(std::int64_t port) {
  if (port >= 1 && port <= 65535) return api::ok_status();
  return invalid("port number " + std::to_string(port) + " must be in the range 1..65535");
}

bool is_dns1123_label(std::string_view l) {
  if (l.empty() || l.size() > 63) return false;
  // Istio's labels.IsDNS1123Label accepts upper case too.
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(l.front()) || !alnum(l.back())) return false;
  for (char c : l)
    if (!alnum(c) && c != '-') return false;
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t i = s.find(sep, start);
    out.push_back(
        s.substr(start, i == std::string_view::npos ? std::string_view::npos : i - start));
    if (i == std::string_view::npos) break;
    start = i + 1;
  }
  return out;
}

api::Status validate_dns1123_labels(std::string_view domain) {
  auto parts = split(domain, '.');
  std::string_view tld = parts.back();
  bool numeric = !tld.empty();
  std::size_t skip = !tld.empty() && (tld[0] == '-' || tld[0] == '+') ? 1 : 0;
  if (tld.size() == skip) numeric = false;
  for (std::size_t i = skip; i < tld.size(); ++i)
    if (tld[i] < '0' || tld[i] > '9') numeric = false;
  if (numeric)
    return invalid("domain name " + template_engine::go_quote(domain) +
                   " invalid (top level domain " + template_engine::go_quote(tld) +
                   " cannot be all-numeric)");
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 == parts.size() && parts[i].empty()) return api::ok_status();
    if (!is_dns1123_label(parts[i]))
      return invalid("domain name " + template_engine::go_quote(domain) + " invalid (label " +
                     template_engine::go_quote(parts[i]) + " invalid)");
  }
  return api::ok_status();
}

api::Status dns1123_preconditions(std::string_view name) {
  if (name.size() > 255)
    return invalid("domain name " + template_engine::go_quote(name) + " too long (max 255)");
  if (name.empty()) return invalid("empty domain name not allowed");
  return api::ok_status();
}

api::Status validate_fqdn(std::string_view fqdn) {
  if (auto e = dns1123_preconditions(fqdn); !e) return e;
  return validate_dns1123_labels(fqdn);
}

api::Status validate_wildcard_domain(std::string_view domain) {
  if (auto e = dns1123_preconditions(domain); !e) return e;
  std::size_t dot = domain.find('.');
  std::string_view first = domain.substr(0, dot);
  // `*`, or a DNS-1123 label optionally prefixed by `*` or `*-`.
  std::string_view label = first;
  if (label.starts_with("*-"))
    label.remove_prefix(2);
  else if (label.starts_with("*"))
    label.remove_prefix(1);
  bool ok = first.size() <= 63 && (first == "*" || is_dns1123_label(label));
  if (!ok)
    return invalid("domain name " + template_engine::go_quote(domain) + " invalid (label " +
                   template_engine::go_quote(first) + " invalid)");
  if (dot != std::string_view::npos) return validate_dns1123_labels(domain.substr(dot + 1));
  return api::ok_status();
}

bool is_ip(std::string_view s) {
  std::string text(s);
  unsigned char buf[16];
  return inet_pton(AF_INET, text.c_str(), buf) == 1 || inet_pton(AF_INET6, text.c_str(), buf) == 1;
}

// ValidateProxyAddress: host:port (net.SplitHostPort) with a valid port and an FQDN or IP.
api::Status validate_proxy_address(std::string_view addr) {
  std::string_view host;
  std::string_view port;
  std::string quoted = template_engine::go_quote(addr);
  if (!addr.empty() && addr[0] == '[') {
    std::size_t end = addr.find(']');
    if (end == std::string_view::npos)
      return invalid("unable to split " + quoted + ": address " + std::string(addr) +
                     ": missing ']' in address");
    host = addr.substr(1, end - 1);
    if (end + 1 >= addr.size() || addr[end + 1] != ':')
      return invalid("unable to split " + quoted + ": address " + std::string(addr) +
                     ": missing port in address");
    port = addr.substr(end + 2);
  } else {
    std::size_t colon = addr.rfind(':');
    if (colon == std::string_view::npos)
      return invalid("unable to split " + quoted + ": address " + std::string(addr) +
                     ": missing port in address");
    host = addr.substr(0, colon);
    if (host.find(':') != std::string_view::npos)
      return invalid("unable to split " + quoted + ": address " + std::string(addr) +
                     ": too many colons in address");
    port = addr.substr(colon + 1);
  }
  int p = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size())
    return invalid("port (" + std::string(port) + ") is not a number");
  if (auto e = validate_port(p); !e) return e;
  if (!validate_fqdn(host) && !is_ip(host))
    return invalid(template_engine::go_quote(host) + " is not a valid hostname or an IP address");
  return api::ok_status();
}

api::Status validate_duration(std::int64_t nanos) {
  if (nanos < 1000000) return invalid("duration must be greater than 1ms");
  if (nanos % 1000000 != 0) return invalid("only durations to ms precision are supported");
  return api::ok_status();
}

api::Status validate_trust_domain(std::string_view domain) {
  if (domain.empty()) return invalid("empty domain name not allowed");
  auto parts = split(domain, '.');
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 == parts.size() && parts[i].empty()) return api::ok_status();
    if (!is_dns1123_label(parts[i]))
      return invalid("trust domain name " + template_engine::go_quote(domain) + " invalid");
  }
  return api::ok_status();
}

std::string with_host_ip(std::string_view addr) {
  std::string s(addr);
  if (auto i = s.find("$(HOST_IP)"); i != std::string::npos) s.replace(i, 10, "127.0.0.1");
  return s;
}

void validate_tracing(const api::Value* tracing, Errors& errs) {
  if (tracing == nullptr) return;
  if (const api::Value* ls = member(tracing, "lightstep")) {
    std::string_view addr = str(ls, "address");
    if (addr.empty()) errs.add("tracing.lightstep.address", "address is required");
    if (auto e = validate_proxy_address(addr); !e)
      errs.add("tracing.lightstep.address", e.message());
    if (str(ls, "accessToken").empty())
      errs.add("tracing.lightstep.accessToken", "access token is required");
  }
  if (const api::Value* z = member(tracing, "zipkin"))
    if (auto e = validate_proxy_address(with_host_ip(str(z, "address"))); !e)
      errs.add("tracing.zipkin.address", e.message());
  if (const api::Value* d = member(tracing, "datadog"))
    if (auto e = validate_proxy_address(with_host_ip(str(d, "address"))); !e)
      errs.add("tracing.datadog.address", e.message());
  if (const api::Value* tls = member(tracing, "tlsSettings")) {
    std::string_view mode = str(tls, "mode");
    bool skip_verify = member(tls, "insecureSkipVerify") != nullptr &&
                       member(tls, "insecureSkipVerify")->IsBool() &&
                       member(tls, "insecureSkipVerify")->GetBool();
    bool has_sans = member(tls, "subjectAltNames") != nullptr;
    std::string_view credential = str(tls, "credentialName");
    if (skip_verify && mode == "SIMPLE" &&
        (!str(tls, "caCertificates").empty() || !credential.empty() || has_sans))
      errs.add("tracing.tlsSettings",
               "cannot specify CaCertificates or CredentialName or SubjectAltNames when "
               "InsecureSkipVerify is set true");
    if (skip_verify && mode == "MUTUAL" && (!str(tls, "caCertificates").empty() || has_sans))
      errs.add("tracing.tlsSettings",
               "cannot specify CaCertificates or SubjectAltNames when InsecureSkipVerify is set "
               "true");
    if ((mode == "SIMPLE" || mode == "MUTUAL") && !credential.empty()) {
      if (!str(tls, "clientCertificate").empty() || !str(tls, "caCertificates").empty() ||
          !str(tls, "privateKey").empty() || !str(tls, "caCrl").empty())
        errs.add("tracing.tlsSettings",
                 "cannot specify client certificates or CA certificate or CA CRL If "
                 "credentialName is set");
    } else if (mode == "MUTUAL") {
      if (str(tls, "clientCertificate").empty())
        errs.add("tracing.tlsSettings", "client certificate required for mutual tls");
      if (str(tls, "privateKey").empty())
        errs.add("tracing.tlsSettings", "private key required for mutual tls");
    }
  }
}

void validate_private_key_provider(const api::Value* pkp, Errors& errs) {
  if (pkp == nullptr) return;
  for (std::string_view name : {"cryptomb", "qat"}) {
    if (const api::Value* p = member(pkp, name)) {
      std::string field = "privateKeyProvider." + std::string(name) + ".pollDelay";
      auto d = duration(p, "pollDelay");
      if (!d)
        errs.add(field, "pollDelay is required");
      else if (*d == 0)
        errs.add(field, "pollDelay must be non zero");
      return;
    }
  }
  errs.add("privateKeyProvider", "private key provider configuration is required");
}

void validate_connection_settings(const api::Value* cs, Errors& errs) {
  if (cs == nullptr) return;
  for (std::string_view name :
       {"listenerPerConnectionBufferLimitBytes", "clusterPerConnectionBufferLimitBytes"})
    if (member(cs, name) != nullptr && num(cs, name) < 0)
      errs.add("connectionSettings." + std::string(name), "must be non-negative");
  for (std::string_view name :
       {"httpIdleTimeout", "httpMaxConnectionDuration", "httpDrainTimeout", "httpRequestTimeout",
        "httpRequestHeadersTimeout", "httpStreamIdleTimeout", "httpMaxStreamDuration"})
    if (auto d = duration(cs, name); d && *d < 0)
      errs.add("connectionSettings." + std::string(name), "must be non-negative");
  if (member(cs, "httpMaxConcurrentStreams") != nullptr && num(cs, "httpMaxConcurrentStreams") <= 0)
    errs.add("connectionSettings.httpMaxConcurrentStreams", "must be positive");
}

void validate_locality_lb(const api::Value* lb, Errors& errs) {
  if (lb == nullptr) return;
  const api::Value* distribute = member(lb, "distribute");
  const api::Value* failover = member(lb, "failover");
  const api::Value* priority = member(lb, "failoverPriority");
  if (distribute != nullptr && failover != nullptr) {
    errs.add("localityLbSetting", "can not simultaneously specify 'distribute' and 'failover'");
    return;
  }
  if (failover != nullptr && priority != nullptr) {
    for (const auto& l : priority->GetArray()) {
      std::string_view label = api::string_view_of(l);
      if (label == "topology.kubernetes.io/region" || label == "topology.kubernetes.io/zone" ||
          label == "topology.istio.io/subzone") {
        errs.add("localityLbSetting", "can not simultaneously set 'failover' and topology label '" +
                                          std::string(label) + "' in 'failover_priority'");
        return;
      }
    }
  }
  if (distribute != nullptr) {
    for (const auto& d : distribute->GetArray()) {
      std::int64_t total = 0;
      if (const api::Value* to = member(&d, "to")) {
        for (auto it = to->MemberBegin(); it != to->MemberEnd(); ++it) {
          std::int64_t w = it->value.IsInt64() ? it->value.GetInt64() : 0;
          if (w <= 0 || w > 100) {
            errs.add("localityLbSetting.distribute", "locality weight must be in range [1, 100]");
            return;
          }
          total += w;
        }
      }
      if (total != 100) {
        errs.add("localityLbSetting.distribute",
                 "total locality weight " + std::to_string(total) + " != 100");
        return;
      }
    }
  }
  if (failover != nullptr) {
    for (const auto& f : failover->GetArray()) {
      std::string_view from = str(&f, "from");
      std::string_view to = str(&f, "to");
      if (from == to)
        errs.add("localityLbSetting.failover",
                 "locality lb failover settings must specify different regions");
      if (from.find('/') != std::string_view::npos || to.find('/') != std::string_view::npos)
        errs.add("localityLbSetting.failover", "locality lb failover only specify region");
      if (from.find('*') != std::string_view::npos || to.find('*') != std::string_view::npos)
        errs.add("localityLbSetting.failover",
                 "locality lb failover region should not contain '*' wildcard");
    }
  }
}

}  // namespace

api::Status validate_proxy_config(const api::Value& pc, std::string_view path) {
  Errors errs(path);
  const api::Value* p = &pc;
  if (str(p, "configPath").empty()) errs.add("configPath", "config path must be set");
  if (str(p, "binaryPath").empty()) errs.add("binaryPath", "binary path must be set");
  if (member(p, "serviceCluster") != nullptr) {
    if (str(p, "serviceCluster").empty())
      errs.add("serviceCluster", "service cluster must be specified");
  } else if (member(p, "tracingServiceName") == nullptr) {
    errs.add("", "oneof service cluster or tracing service name must be specified");
  }
  std::int64_t drain = duration(p, "drainDuration").value_or(0);
  if (auto e = validate_duration(drain); !e)
    errs.add("drainDuration", "invalid drain duration: " + e.message());
  else if (drain % 1000000000 != 0)
    errs.add("drainDuration", "drain time only supports durations to seconds precision");
  std::string_view discovery = str(p, "discoveryAddress");
  if (discovery.empty())
    errs.add("discoveryAddress", "discovery address must be set to the proxy discovery service");
  else if (auto e = validate_proxy_address(discovery); !e)
    errs.add("discoveryAddress", "invalid discovery address: " + e.message());
  validate_tracing(member(p, "tracing"), errs);
  for (std::string_view name : {"statsdUdpAddress", "envoyMetricsServiceAddress"})
    if (std::string_view a = str(p, name); !a.empty())
      if (auto e = validate_proxy_address(a); !e) errs.add(name, e.message());
  for (std::string_view name : {"envoyMetricsService", "envoyAccessLogService"})
    if (std::string_view a = str(member(p, name), "address"); !a.empty())
      if (auto e = validate_proxy_address(a); !e)
        errs.add(std::string(name) + ".address", e.message());
  if (auto e = validate_port(num(p, "proxyAdminPort")); !e)
    errs.add("proxyAdminPort", "invalid proxy admin port: " + e.message());
  if (std::string_view policy = str(p, "controlPlaneAuthPolicy");
      !policy.empty() && policy != "MUTUAL_TLS")
    errs.add("controlPlaneAuthPolicy",
             "invalid authentication policy: unrecognized control plane auth policy " +
                 template_engine::go_quote(policy));
  if (auto e = validate_port(num(p, "statusPort")); !e)
    errs.add("statusPort", "invalid status port: " + e.message());
  validate_private_key_provider(member(p, "privateKeyProvider"), errs);
  validate_connection_settings(member(p, "connectionSettings"), errs);
  return errs.status();
}

api::Status validate_mesh_config(const api::Value& mesh) {
  Errors errs("");
  const api::Value* m = &mesh;
  if (auto e = validate_port(num(m, "proxyListenPort")); !e)
    errs.add("proxyListenPort", "invalid proxy listen port: " + e.message());
  std::int64_t connect = duration(m, "connectTimeout").value_or(0);
  if (auto e = validate_duration(connect); !e) {
    errs.add("connectTimeout", "invalid connect timeout: " + e.message());
  } else if (connect > 3600LL * 1000000000) {
    errs.add("connectTimeout", "invalid connect timeout: time " + format_go_duration(connect) +
                                   " must be >1ms and <1h0m0s");
  }
  if (auto d = duration(m, "protocolDetectionTimeout"); d && *d != 0 && *d % 1000000 != 0)
    errs.add("protocolDetectionTimeout",
             "invalid protocol detection timeout: only durations to ms precision are supported");
  if (const api::Value* pc = member(m, "defaultConfig"))
    errs.merge(validate_proxy_config(*pc, "defaultConfig"));
  else
    errs.add("defaultConfig", "missing default config");
  validate_locality_lb(member(m, "localityLbSetting"), errs);
  if (const api::Value* settings = member(m, "serviceSettings")) {
    for (rapidjson::SizeType i = 0; i < settings->Size(); ++i) {
      if (const api::Value* hosts = member(&(*settings)[i], "hosts")) {
        for (const auto& h : hosts->GetArray()) {
          if (auto e = validate_wildcard_domain(api::string_view_of(h)); !e)
            errs.add("serviceSettings[" + std::to_string(i) + "].hosts",
                     "host `" + std::string(api::string_view_of(h)) + "`: " + e.message());
        }
      }
    }
  }
  if (auto e = validate_trust_domain(str(m, "trustDomain")); !e)
    errs.add("trustDomain", e.message());
  if (const api::Value* aliases = member(m, "trustDomainAliases")) {
    for (rapidjson::SizeType i = 0; i < aliases->Size(); ++i) {
      std::string_view a = api::string_view_of((*aliases)[i]);
      if (auto e = validate_trust_domain(a); !e)
        errs.add("trustDomainAliases[" + std::to_string(i) + "]",
                 "domain `" + std::string(a) + "`: " + e.message());
    }
  }
  if (member(member(m, "meshMTLS"), "ecdhCurves") != nullptr)
    errs.add("meshMTLS.ecdhCurves", "mesh TLS does not support ECDH curves configuration");
  return errs.status();
}

}  // namespace meshop::inject
