// Annotation validation (upstream pkg/kube/inject/validate.go) and the Go library functions
// its messages come from: strconv.ParseUint/ParseBool/Atoi, netip.ParsePrefix,
// resource.ParseQuantity, strings.TrimSpace. The error texts reach users verbatim in
// admission responses, so they are reproduced exactly, including upstream's quirks (the status
// port check says "excludeInboundPorts invalid", port lists repeat "failed parsing port").
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "operator/inject/mesh/mesh_config.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/functions.hpp"

namespace meshop::inject {
namespace postprocess {
namespace {

using template_engine::go_quote;

// One UTF-8 rune as Go's `for range` over a string decodes it: an invalid or overlong
// sequence, a surrogate or a value above U+10FFFF is U+FFFD of width 1.
// UTF-8 decoding and unicode.IsSpace as Go does them (shared with the template engine).
using template_engine::funcs::decode_rune;
using template_engine::funcs::Rune;

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string num_error(std::string_view fn, std::string_view input, std::string_view what) {
  return "strconv." + std::string(fn) + ": parsing " + go_quote(input) + ": " + std::string(what);
}

// --- net/netip --------------------------------------------------------------------------------

std::string addr_error(std::string_view in, std::string_view msg, std::string_view at = {}) {
  std::string out = "ParseAddr(" + go_quote(in) + "): " + std::string(msg);
  if (!at.empty()) out += " (at " + go_quote(at) + ")";
  return out;
}

// parseIPv4Fields over in[off:end]; "" when valid.
std::string ipv4_fields_error(std::string_view in, std::size_t off, std::size_t end) {
  std::string_view s = in.substr(off, end - off);
  int val = 0, pos = 0, digits = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      if (digits == 1 && val == 0) return addr_error(in, "IPv4 field has octet with leading zero");
      val = val * 10 + (c - '0');
      ++digits;
      if (val > 255) return addr_error(in, "IPv4 field has value >255");
    } else if (c == '.') {
      if (i == 0 || i == s.size() - 1 || s[i - 1] == '.') {
        return addr_error(in, "IPv4 field must have at least one digit", s.substr(i));
      }
      if (pos == 3) return addr_error(in, "IPv4 address too long");
      ++pos;
      val = 0;
      digits = 0;
    } else {
      return addr_error(in, "unexpected character", s.substr(i));
    }
  }
  if (pos < 3) return addr_error(in, "IPv4 address too short");
  return {};
}

// parseIPv6; "" when valid. `has_zone` tells whether a zone was given.
std::string ipv6_error(std::string_view in, bool& has_zone) {
  std::string_view s = in;
  std::string_view zone;
  if (auto pct = s.find('%'); pct != std::string_view::npos) {
    zone = s.substr(pct + 1);
    s = s.substr(0, pct);
    if (zone.empty()) return addr_error(in, "zone must be a non-empty string");
  }
  has_zone = !zone.empty();
  int ellipsis = -1;
  if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
    ellipsis = 0;
    s.remove_prefix(2);
    if (s.empty()) return {};
  }
  int i = 0;
  while (i < 16) {
    std::size_t off = 0;
    std::uint32_t acc = 0;
    for (; off < s.size(); ++off) {
      char c = s[off];
      if (c >= '0' && c <= '9') {
        acc = (acc << 4) + static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        acc = (acc << 4) + static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        acc = (acc << 4) + static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        break;
      }
      if (off > 3) return addr_error(in, "each group must have 4 or less digits", s);
      if (acc > 0xFFFF) return addr_error(in, "IPv6 field has value >=2^16", s);
    }
    if (off == 0) {
      return addr_error(in, "each colon-separated field must have at least one digit", s);
    }
    if (off < s.size() && s[off] == '.') {
      if (ellipsis < 0 && i != 12) {
        return addr_error(
            in, "embedded IPv4 address must replace the final 2 fields of the address", s);
      }
      if (i + 4 > 16) {
        return addr_error(
            in, "too many hex fields to fit an embedded IPv4 at the end of the address", s);
      }
      std::size_t end = in.size();
      if (!zone.empty()) end -= zone.size() + 1;
      if (auto e = ipv4_fields_error(in, end - s.size(), end); !e.empty()) return e;
      s = {};
      i += 4;
      break;
    }
    i += 2;
    s.remove_prefix(off);
    if (s.empty()) break;
    if (s[0] != ':') return addr_error(in, "unexpected character, want colon", s);
    if (s.size() == 1) return addr_error(in, "colon must be followed by more characters", s);
    s.remove_prefix(1);
    if (s[0] == ':') {
      if (ellipsis >= 0) return addr_error(in, "multiple :: in address", s);
      ellipsis = i;
      s.remove_prefix(1);
      if (s.empty()) break;
    }
  }
  if (!s.empty()) return addr_error(in, "trailing garbage after address", s);
  if (i < 16) {
    if (ellipsis < 0) return addr_error(in, "address string too short");
  } else if (ellipsis >= 0) {
    return addr_error(in, "the :: must expand to at least one field of zeros");
  }
  return {};
}

// --- validate.go checks ---------------------------------------------------------------------

std::string validate_interception_mode(std::string_view mode) {
  if (mode == "REDIRECT" || mode == "TPROXY" || mode == "NONE") return {};
  return "interceptionMode invalid, use REDIRECT,TPROXY,NONE: " + std::string(mode);
}

std::string validate_cidr_list(std::string_view cidrs) {
  if (cidrs.empty()) return {};
  for (std::string_view cidr : split(cidrs, ',')) {
    if (auto e = parse_prefix_error(cidr); !e.empty()) {
      return "failed parsing cidr '" + std::string(cidr) + "': " + e;
    }
  }
  return {};
}

// parsePort: the port with surrounding space trimmed, as a uint16.
std::string parse_port_error(std::string_view port) {
  auto r = go_parse_uint(go_trim_space(port), 16);
  if (r.ok()) return {};
  return "failed parsing port '" + std::string(port) + "': " + r.message();
}

std::string validate_port_list(std::string_view parameter, std::string_view ports) {
  ports = go_trim_space(ports);
  if (ports.empty()) return {};
  for (std::string_view port : split(ports, ',')) {
    if (auto e = parse_port_error(port); !e.empty()) {
      return std::string(parameter) + " invalid: failed parsing port '" + std::string(port) +
             "': " + e;
    }
  }
  return {};
}

std::string validate_interfaces(std::string_view interfaces) {
  if (interfaces.empty()) return {};
  for (std::string_view name : split(interfaces, ',')) {
    name = go_trim_space(name);
    if (name.empty()) return "empty interface name";
    if (name.size() > 15) return "interface name " + go_quote(name) + " too long (max 15 chars)";
    auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
    bool ok = alpha(name[0]);
    for (char c : name.substr(1)) {
      ok = ok && (alpha(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-');
    }
    if (!ok) return "interface name " + go_quote(name) + " contains invalid characters";
  }
  return {};
}

std::string validate_resource_quantity(std::string_view value) {
  for (std::size_t i = 0; i < value.size();) {
    Rune r = decode_rune(value, i);
    if (r.r <= 0x1F || (r.r >= 0x7F && r.r <= 0x9F)) {
      return "value contains control characters";
    }
    i += static_cast<std::size_t>(r.width);
  }
  return parse_quantity_error(value);
}

}  // namespace

// --- Go library functions -------------------------------------------------------------------

// strings.TrimSpace.
std::string_view go_trim_space(std::string_view s) {
  return template_engine::funcs::go_trim_space(s);
}

std::optional<bool> go_parse_bool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return std::nullopt;
}

api::Result<std::uint64_t> go_parse_uint(std::string_view s, int bits) {
  if (s.empty()) return api::Error{num_error("ParseUint", s, "invalid syntax")};
  const std::uint64_t max_value =
      bits >= 64 ? std::numeric_limits<std::uint64_t>::max() : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t cutoff = std::numeric_limits<std::uint64_t>::max() / 10 + 1;
  std::uint64_t n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return api::Error{num_error("ParseUint", s, "invalid syntax")};
    if (n >= cutoff) return api::Error{num_error("ParseUint", s, "value out of range")};
    n *= 10;
    std::uint64_t n1 = n + static_cast<std::uint64_t>(c - '0');
    if (n1 < n || n1 > max_value) {
      return api::Error{num_error("ParseUint", s, "value out of range")};
    }
    n = n1;
  }
  return n;
}

GoAtoi go_atoi(std::string_view s) {
  bool negative = false;
  std::string_view digits = s;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (s.size() > 0 && s.size() < 19) {  // Go's fast path: cannot overflow
    if (digits.empty()) return {};
    std::int64_t n = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return {};
      n = n * 10 + (c - '0');
    }
    return {negative ? -n : n, true};
  }
  // ParseInt(s, 10, 0): ParseUint reports overflow as soon as it happens, before any later
  // bad character, and ParseInt then returns the clamped bound.
  if (digits.empty()) return {};
  auto u = go_parse_uint(digits, 64);
  constexpr std::uint64_t cutoff = std::uint64_t{1} << 63;
  if (!u.ok()) {
    if (u.message().find("out of range") == std::string::npos) return {};
    return {negative ? std::numeric_limits<std::int64_t>::min()
                     : std::numeric_limits<std::int64_t>::max(),
            false};
  }
  if (!negative && *u >= cutoff) return {std::numeric_limits<std::int64_t>::max(), false};
  if (negative && *u > cutoff) return {std::numeric_limits<std::int64_t>::min(), false};
  if (negative) return {static_cast<std::int64_t>(0 - *u), true};
  return {static_cast<std::int64_t>(*u), true};
}

namespace {

// SanitizeLabelName one rune at a time: the character the rune at `i` becomes, and its width.
// ASCII (every byte below 0x80 is a rune of its own) needs no decoding.
char sanitized_rune(std::string_view s, std::size_t i, std::size_t& width) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) {
    width = 1;
    bool keep =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    return keep ? static_cast<char>(c) : '_';
  }
  width = static_cast<std::size_t>(decode_rune(s, i).width);
  return '_';
}

}  // namespace

std::string sanitize_label_name(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0, w = 0; i < s.size(); i += w)
    out.push_back(sanitized_rune(s, i, w));
  return out;
}

bool sanitized_label_is(std::string_view s, std::string_view name) {
  std::size_t j = 0;
  for (std::size_t i = 0, w = 0; i < s.size(); i += w, ++j)
    if (j == name.size() || sanitized_rune(s, i, w) != name[j]) return false;
  return j == name.size();
}

std::string parse_prefix_error(std::string_view s) {
  auto fail = [&](std::string_view msg) {
    return "netip.ParsePrefix(" + go_quote(s) + "): " + std::string(msg);
  };
  std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos) return fail("no '/'");
  std::string_view addr = s.substr(0, slash);
  // ParseAddr: the first '.', ':' or '%' decides the family.
  std::string addr_err = addr_error(addr, "unable to parse IP");
  bool is6 = false, zone = false;
  for (char c : addr) {
    if (c == '.') {
      addr_err = ipv4_fields_error(addr, 0, addr.size());
      break;
    }
    if (c == ':') {
      addr_err = ipv6_error(addr, zone);
      is6 = true;
      break;
    }
    if (c == '%') {
      addr_err = addr_error(addr, "missing IPv6 address");
      break;
    }
  }
  if (!addr_err.empty()) return fail(addr_err);
  if (is6 && zone) return fail("IPv6 zones cannot be present in a prefix");
  std::string_view bits = s.substr(slash + 1);
  if (bits.size() > 1 && (bits[0] < '1' || bits[0] > '9')) {
    return fail("bad bits after slash: " + go_quote(bits));
  }
  GoAtoi n = go_atoi(bits);
  if (!n.ok) return fail("bad bits after slash: " + go_quote(bits));
  if (n.value < 0 || n.value > (is6 ? 128 : 32)) return fail("prefix length out of range");
  return {};
}

std::string parse_quantity_error(std::string_view str) {
  static const std::string kFormatWrong =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  static const std::string kNumeric = "unable to parse numeric part of quantity";
  static const std::string kSuffix = "unable to parse quantity's suffix";
  if (str.empty()) return kFormatWrong;
  if (str == "0") return {};

  // parseQuantityString: sign, leading zeros, numerator, '.', denominator, suffix.
  std::size_t pos = 0, end = str.size();
  if (str[0] == '-' || str[0] == '+') ++pos;
  while (pos < end && str[pos] == '0')
    ++pos;
  if (pos >= end) return {};  // only zeros (or only a sign): the value 0
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t num_start = pos;
  while (pos < end && is_digit(str[pos]))
    ++pos;
  std::size_t num_len = pos - num_start;
  if (pos >= end) return {};
  if (num_len == 0) num_len = 1;  // an empty numerator is "0"
  std::size_t denom_len = 0;
  if (str[pos] == '.') {
    ++pos;
    std::size_t denom_start = pos;
    while (pos < end && is_digit(str[pos]))
      ++pos;
    denom_len = pos - denom_start;
    if (pos >= end) return {};
  }
  std::string_view value = str.substr(0, pos);
  std::size_t suffix_start = pos;
  while (pos < end && std::string_view("eEinumkKMGTP").find(str[pos]) != std::string_view::npos) {
    ++pos;
  }
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  while (pos < end && is_digit(str[pos]))
    ++pos;
  if (pos < end) return kFormatWrong;
  std::string_view suffix = str.substr(suffix_start);

  // quantitySuffixer.interpret.
  std::int32_t exponent = 0;
  enum { kDecimalSI, kBinarySI, kDecimalExponent } format = kDecimalSI;
  static const std::map<std::string_view, std::int32_t> kDecimal = {
      {"", 0},  {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3},
      {"M", 6}, {"G", 9},  {"T", 12}, {"P", 15}, {"E", 18}};
  static const std::map<std::string_view, std::int32_t> kBinary = {
      {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  if (auto d = kDecimal.find(suffix); d != kDecimal.end()) {
    exponent = d->second;
  } else if (auto b = kBinary.find(suffix); b != kBinary.end()) {
    exponent = b->second;
    format = kBinarySI;
  } else if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    // strconv.ParseInt(suffix[1:], 10, 64), truncated to int32 as upstream does.
    std::string_view digits = suffix.substr(1);
    bool negative = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    auto u = go_parse_uint(digits, 64);
    if (!u.ok() || *u > (negative ? (std::uint64_t{1} << 63) : (std::uint64_t{1} << 63) - 1)) {
      return kSuffix;
    }
    std::uint64_t bits = negative ? 0 - *u : *u;
    exponent = static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
    format = kDecimalExponent;
  } else {
    return kSuffix;
  }

  // The fast path (an int64 amount) needs no digits in `value`; the inf.Dec path does.
  bool fast = false;
  std::int32_t precision = 0, scale = 0;
  if (format == kBinarySI) {
    precision = denom_len == 0 && exponent >= 0
                    ? 15 - static_cast<std::int32_t>(num_len) - exponent * 3 / 10 - 1
                    : -1;
  } else {
    scale = exponent;
    precision = 18 - static_cast<std::int32_t>(num_len + denom_len);
  }
  if (precision >= 0) {
    scale -= static_cast<std::int32_t>(denom_len);
    fast = scale >= -9;  // larger values overflow into the inf.Dec path, which has digits
  }
  if (!fast && std::none_of(value.begin(), value.end(), is_digit)) return kNumeric;
  return {};
}

namespace {

// check_annotation's verdict from a reason: "" is valid.
api::Status reason_status(std::string reason) {
  if (reason.empty()) return api::ok_status();
  return api::make_error(api::ErrorKind::kInvalid, std::move(reason));
}

std::string check_annotation_reason(std::string_view name, std::string_view value) {
  if (name == "sidecar.istio.io/interceptionMode") return validate_interception_mode(value);
  if (name == "status.sidecar.istio.io/port") {
    auto e = parse_port_error(value);
    return e.empty() ? e : "excludeInboundPorts invalid: " + e;
  }
  if (name == "readiness.status.sidecar.istio.io/initialDelaySeconds" ||
      name == "readiness.status.sidecar.istio.io/periodSeconds" ||
      name == "readiness.status.sidecar.istio.io/failureThreshold") {
    auto r = go_parse_uint(value, 32);
    return r.ok() ? std::string() : r.message();
  }
  if (name == "traffic.sidecar.istio.io/includeOutboundIPRanges") {
    if (value == "*") return std::string();
    auto e = validate_cidr_list(value);
    return e.empty() ? e : "includeIPRanges invalid: " + e;
  }
  if (name == "traffic.sidecar.istio.io/excludeOutboundIPRanges") {
    auto e = validate_cidr_list(value);
    return e.empty() ? e : "excludeIPRanges invalid: " + e;
  }
  if (name == "traffic.sidecar.istio.io/includeInboundPorts") {
    if (value == "*") return std::string();
    return validate_port_list("includeInboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeInboundPorts") {
    return validate_port_list("excludeInboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeOutboundPorts") {
    return validate_port_list("excludeOutboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeInterfaces" ||
      name == "traffic.sidecar.istio.io/kubevirtInterfaces" ||
      name == "istio.io/reroute-virtual-interfaces") {
    return validate_interfaces(value);
  }
  if (name == "prometheus.istio.io/merge-metrics") {
    return go_parse_bool(value) ? std::string() : num_error("ParseBool", value, "invalid syntax");
  }
  if (name == "proxy.istio.io/config") {
    // validateProxyConfig lives with the ProxyConfig model; its message names the annotation,
    // which the list entry already does.
    auto st = validate_proxy_config_annotation(value);
    if (st.ok()) return std::string();
    std::string_view reason = st.message();
    constexpr std::string_view kPrefix = "annotation proxy.istio.io/config: ";
    if (reason.substr(0, kPrefix.size()) == kPrefix) reason.remove_prefix(kPrefix.size());
    return std::string(reason);
  }
  if (name == "sidecar.istio.io/proxyCPU" || name == "sidecar.istio.io/proxyMemory" ||
      name == "sidecar.istio.io/proxyCPULimit" || name == "sidecar.istio.io/proxyMemoryLimit") {
    return validate_resource_quantity(value);
  }
  return std::string();
}

}  // namespace

api::Status check_annotation(std::string_view name, std::string_view value) {
  return reason_status(check_annotation_reason(name, value));
}

}  // namespace postprocess

api::Status validate_annotations(const rapidjson::Value& pod) {
  const rapidjson::Value* annotations = postprocess::annotations_of(pod);
  if (annotations == nullptr) return api::ok_status();
  // Decoding into a Go map keeps the last of duplicate keys; errors come in name order.
  std::map<std::string_view, std::string_view> values;
  for (const auto& m : annotations->GetObject()) {
    if (m.value.IsString()) values[api::string_view_of(m.name)] = api::string_view_of(m.value);
  }
  std::vector<std::string> errors;
  for (const auto& [name, value] : values) {
    if (auto st = postprocess::check_annotation(name, value); !st) {
      errors.push_back("invalid value '" + std::string(value) + "' for annotation '" +
                       std::string(name) + "': " + st.message());
    }
  }
  if (errors.empty()) return api::ok_status();
  // go-multierror's ListFormatFunc.
  std::string message;
  if (errors.size() == 1) {
    message = "1 error occurred:\n\t* " + errors[0] + "\n\n";
  } else {
    message = std::to_string(errors.size()) + " errors occurred:\n\t";
    for (std::size_t i = 0; i < errors.size(); ++i) {
      if (i > 0) message += "\n\t";
      message += "* " + errors[i];
    }
    message += "\n\n";
  }
  return api::Error{std::move(message)};
}

}  // namespace meshop::inject
