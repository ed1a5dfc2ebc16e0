// validate_annotations() and the Go library functions behind its messages.
//
// The kGo* tables below were produced by running Go 1.26 (net/netip, strconv, strings) and
// k8s.io/apimachinery v0.36.3 (resource.ParseQuantity) on each input; they pin meshop's
// messages to Go's byte for byte.
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "api/json.hpp"
#include "operator/inject/postprocess.hpp"
#include "operator/inject/postprocess_detail.hpp"

namespace meshop::inject {
namespace {

using namespace postprocess;

// clang-format off
const std::vector<std::pair<std::string, std::string>> kGoPrefixes = {
    {"1.1.1.1/99", "netip.ParsePrefix(\"1.1.1.1/99\"): prefix length out of range"},
    {"bad", "netip.ParsePrefix(\"bad\"): no '/'"},
    {"*", "netip.ParsePrefix(\"*\"): no '/'"},
    {"", "netip.ParsePrefix(\"\"): no '/'"},
    {"1.1.1.1/32", ""},
    {" 2.2.2.2/32", "netip.ParsePrefix(\" 2.2.2.2/32\"): ParseAddr(\" 2.2.2.2\"): unexpected character (at \" 2.2.2.2\")"},
    {"10.0.0.0/8", ""},
    {"::/0", ""},
    {"fe80::1%eth0/64", "netip.ParsePrefix(\"fe80::1%eth0/64\"): IPv6 zones cannot be present in a prefix"},
    {"1.2.3/8", "netip.ParsePrefix(\"1.2.3/8\"): ParseAddr(\"1.2.3\"): IPv4 address too short"},
    {"1.2.3.4.5/8", "netip.ParsePrefix(\"1.2.3.4.5/8\"): ParseAddr(\"1.2.3.4.5\"): IPv4 address too long"},
    {"01.2.3.4/8", "netip.ParsePrefix(\"01.2.3.4/8\"): ParseAddr(\"01.2.3.4\"): IPv4 field has octet with leading zero"},
    {"256.1.1.1/8", "netip.ParsePrefix(\"256.1.1.1/8\"): ParseAddr(\"256.1.1.1\"): IPv4 field has value >255"},
    {"1.1.1.1/", "netip.ParsePrefix(\"1.1.1.1/\"): bad bits after slash: \"\""},
    {"1.1.1.1/08", "netip.ParsePrefix(\"1.1.1.1/08\"): bad bits after slash: \"08\""},
    {"1.1.1.1/+8", "netip.ParsePrefix(\"1.1.1.1/+8\"): bad bits after slash: \"+8\""},
    {"::ffff:1.2.3.4/128", ""},
    {"1:2:3:4:5:6:7:8:9/64", "netip.ParsePrefix(\"1:2:3:4:5:6:7:8:9/64\"): ParseAddr(\"1:2:3:4:5:6:7:8:9\"): trailing garbage after address (at \"9\")"},
    {"1::2::3/64", "netip.ParsePrefix(\"1::2::3/64\"): ParseAddr(\"1::2::3\"): multiple :: in address (at \":3\")"},
    {"12345::/16", "netip.ParsePrefix(\"12345::/16\"): ParseAddr(\"12345::\"): each group must have 4 or less digits (at \"12345::\")"},
    {"::1.2.3.4:5/64", "netip.ParsePrefix(\"::1.2.3.4:5/64\"): ParseAddr(\"::1.2.3.4:5\"): unexpected character (at \":5\")"},
    {"1:2:3:4:5:6:7:1.2.3.4/128", "netip.ParsePrefix(\"1:2:3:4:5:6:7:1.2.3.4/128\"): ParseAddr(\"1:2:3:4:5:6:7:1.2.3.4\"): embedded IPv4 address must replace the final 2 fields of the address (at \"1.2.3.4\")"},
    {"%eth0/8", "netip.ParsePrefix(\"%eth0/8\"): ParseAddr(\"%eth0\"): missing IPv6 address"},
    {"abc/8", "netip.ParsePrefix(\"abc/8\"): ParseAddr(\"abc\"): unable to parse IP"},
    {"1:/64", "netip.ParsePrefix(\"1:/64\"): ParseAddr(\"1:\"): colon must be followed by more characters (at \":\")"},
    {"1:2:3:4:5:6:7::8/64", "netip.ParsePrefix(\"1:2:3:4:5:6:7::8/64\"): ParseAddr(\"1:2:3:4:5:6:7::8\"): the :: must expand to at least one field of zeros"},
    {"1.1.1.1/33", "netip.ParsePrefix(\"1.1.1.1/33\"): prefix length out of range"},
    {"::/129", "netip.ParsePrefix(\"::/129\"): prefix length out of range"},
    {"1..1.1/8", "netip.ParsePrefix(\"1..1.1/8\"): ParseAddr(\"1..1.1\"): IPv4 field must have at least one digit (at \".1.1\")"},
    {"1.1.1.1a/8", "netip.ParsePrefix(\"1.1.1.1a/8\"): ParseAddr(\"1.1.1.1a\"): unexpected character (at \"a\")"},
    {"g::/8", "netip.ParsePrefix(\"g::/8\"): ParseAddr(\"g::\"): each colon-separated field must have at least one digit (at \"g::\")"},
    {"::1%/64", "netip.ParsePrefix(\"::1%/64\"): ParseAddr(\"::1%\"): zone must be a non-empty string"},
    {"1.2.3.4/-1", "netip.ParsePrefix(\"1.2.3.4/-1\"): bad bits after slash: \"-1\""},
    {"1.2.3.4/99999999999999999999", "netip.ParsePrefix(\"1.2.3.4/99999999999999999999\"): bad bits after slash: \"99999999999999999999\""},
};
const std::vector<std::pair<std::string, std::string>> kGoQuantities = {
    {"100m", ""},
    {"128Mi", ""},
    {"2", ""},
    {"1Gi", ""},
    {"invalid", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"0", ""},
    {"+", ""},
    {"-", ""},
    {".", ""},
    {"1.", ""},
    {".5", ""},
    {"1e3", ""},
    {"1E-3", ""},
    {"e3", ""},
    {"1k3", "unable to parse quantity's suffix"},
    {"1ki", "unable to parse quantity's suffix"},
    {"1KiB", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1.5Gi", ""},
    {".Ei", "unable to parse numeric part of quantity"},
    {"-.Pi", "unable to parse numeric part of quantity"},
    {"e-10", "unable to parse numeric part of quantity"},
    {".e-10", "unable to parse numeric part of quantity"},
    {"1e-10", ""},
    {"1e99999999999999999999", "unable to parse quantity's suffix"},
    {"1e", "unable to parse quantity's suffix"},
    {"1Ee", "unable to parse quantity's suffix"},
    {"1e+", "unable to parse quantity's suffix"},
    {"1.2.3", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"0.000000001", ""},
    {"123456789012345678901234567890", ""},
    {"1 ", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1m1", "unable to parse quantity's suffix"},
    {"--1", "unable to parse quantity's suffix"},
    {"+1Ti", ""},
    {"1P", ""},
    {"1E", ""},
    {"1Ei", ""},
    {"1e4294967296", ""},
    {"0x10", "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
    {"1n", ""},
    {"1u", ""},
};
const std::vector<std::pair<std::string, std::string>> kGoParseUint16 = {
    {"", "strconv.ParseUint: parsing \"\": invalid syntax"},
    {"abc", "strconv.ParseUint: parsing \"abc\": invalid syntax"},
    {"15020", ""},
    {"65535", ""},
    {"65536", "strconv.ParseUint: parsing \"65536\": value out of range"},
    {"-1", "strconv.ParseUint: parsing \"-1\": invalid syntax"},
    {"+1", "strconv.ParseUint: parsing \"+1\": invalid syntax"},
    {" 1", "strconv.ParseUint: parsing \" 1\": invalid syntax"},
    {"99999999999999999999x", "strconv.ParseUint: parsing \"99999999999999999999x\": value out of range"},
    {"4294967295", "strconv.ParseUint: parsing \"4294967295\": value out of range"},
    {"4294967296", "strconv.ParseUint: parsing \"4294967296\": value out of range"},
    {"1_000", "strconv.ParseUint: parsing \"1_000\": invalid syntax"},
};
const std::vector<std::pair<std::string, std::string>> kGoParseUint32 = {
    {"", "strconv.ParseUint: parsing \"\": invalid syntax"},
    {"abc", "strconv.ParseUint: parsing \"abc\": invalid syntax"},
    {"15020", ""},
    {"65535", ""},
    {"65536", ""},
    {"-1", "strconv.ParseUint: parsing \"-1\": invalid syntax"},
    {"+1", "strconv.ParseUint: parsing \"+1\": invalid syntax"},
    {" 1", "strconv.ParseUint: parsing \" 1\": invalid syntax"},
    {"99999999999999999999x", "strconv.ParseUint: parsing \"99999999999999999999x\": value out of range"},
    {"4294967295", ""},
    {"4294967296", "strconv.ParseUint: parsing \"4294967296\": value out of range"},
    {"1_000", "strconv.ParseUint: parsing \"1_000\": invalid syntax"},
};
const std::vector<std::tuple<std::string, std::int64_t, bool>> kGoAtoi = {
    {"", 0LL, false},
    {"+", 0LL, false},
    {"-", 0LL, false},
    {"80", 80LL, true},
    {"+80", 80LL, true},
    {"-80", -80LL, true},
    {"080", 80LL, true},
    {" 80", 0LL, false},
    {"9223372036854775807", 9223372036854775807LL, true},
    {"9223372036854775808", 9223372036854775807LL, false},
    {"-9223372036854775808", -9223372036854775807LL - 1LL, true},
    {"-9223372036854775809", -9223372036854775807LL - 1LL, false},
    {"99999999999999999999x", 9223372036854775807LL, false},
    {"123456789012345678x", 0LL, false},
    {"1234567890123456789x", 0LL, false},
};
const std::vector<std::pair<std::string, std::string>> kGoTrimSpace = {
    {" a ", "a"},
    {"\xc2""\xa0""x\xe3""\x80""\x80""", "x"},
    {"\xc2""\x85""\x09"" y \x0a""", "y"},
    {"\xff"" ", "\xff"""},
    {" \xe2""\x80""\x8b"" ", "\xe2""\x80""\x8b"""},
};
// clang-format on

TEST(PostprocessGo, ParsePrefixMatchesGo) {
  for (const auto& [input, error] : kGoPrefixes) {
    EXPECT_EQ(parse_prefix_error(input), error) << "input " << input;
  }
}

TEST(PostprocessGo, ParseQuantityMatchesApimachinery) {
  for (const auto& [input, error] : kGoQuantities) {
    EXPECT_EQ(parse_quantity_error(input), error) << "input " << input;
  }
}

TEST(PostprocessGo, ParseUintMatchesGo) {
  for (const auto& [input, error] : kGoParseUint16) {
    auto r = go_parse_uint(input, 16);
    EXPECT_EQ(r.ok() ? std::string() : r.message(), error) << "input " << input;
  }
  for (const auto& [input, error] : kGoParseUint32) {
    auto r = go_parse_uint(input, 32);
    EXPECT_EQ(r.ok() ? std::string() : r.message(), error) << "input " << input;
  }
}

TEST(PostprocessGo, AtoiMatchesGoIncludingValuesReturnedWithErrors) {
  for (const auto& [input, value, ok] : kGoAtoi) {
    GoAtoi r = go_atoi(input);
    EXPECT_EQ(r.value, value) << "input " << input;
    EXPECT_EQ(r.ok, ok) << "input " << input;
  }
}

TEST(PostprocessGo, TrimSpaceMatchesGo) {
  for (const auto& [input, trimmed] : kGoTrimSpace) {
    EXPECT_EQ(go_trim_space(input), trimmed) << "input " << input;
  }
}

TEST(PostprocessGo, ParseBoolAcceptsGoSpellingsOnly) {
  for (const char* t : {"1", "t", "T", "TRUE", "true", "True"})
    EXPECT_EQ(go_parse_bool(t), true);
  for (const char* f : {"0", "f", "F", "FALSE", "false", "False"}) {
    EXPECT_EQ(go_parse_bool(f), false);
  }
  for (const char* bad : {"", "yes", "on", "tRUE", " true", "2"}) {
    EXPECT_FALSE(go_parse_bool(bad).has_value()) << bad;
  }
}

TEST(PostprocessGo, SanitizeLabelNameReplacesEachRune) {
  EXPECT_EQ(sanitize_label_name("prometheus.io/scrape"), "prometheus_io_scrape");
  EXPECT_EQ(sanitize_label_name("prometheus-io/scrape"), "prometheus_io_scrape");
  EXPECT_EQ(sanitize_label_name("Ab_9"), "Ab_9");
  // One multi-byte rune is one underscore; an invalid byte is one rune too.
  EXPECT_EQ(sanitize_label_name("a\xc3\xa9z"), "a_z");
  EXPECT_EQ(sanitize_label_name("a\xff\xfez"), "a__z");
}

api::Document pod_with(std::initializer_list<std::pair<std::string, std::string>> annotations) {
  api::Document pod(rapidjson::kObjectType);
  auto& a = pod.GetAllocator();
  rapidjson::Value ann(rapidjson::kObjectType);
  for (const auto& [k, v] : annotations) {
    ann.AddMember(api::make_string(k, a), api::make_string(v, a), a);
  }
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("annotations", ann, a);
  pod.AddMember("metadata", metadata, a);
  return pod;
}

std::string validation_error(const std::string& name, const std::string& value) {
  auto st = validate_annotations(pod_with({{name, value}}));
  return st.ok() ? std::string() : st.message();
}

TEST(PostprocessValidate, PodWithoutAnnotationsIsValid) {
  api::Document pod(rapidjson::kObjectType);
  EXPECT_TRUE(validate_annotations(pod).ok());
  EXPECT_TRUE(validate_annotations(pod_with({})).ok());
}

TEST(PostprocessValidate, AcceptsValidValuesOfEveryCheckedAnnotation) {
  auto pod = pod_with({
      {"sidecar.istio.io/interceptionMode", "TPROXY"},
      {"status.sidecar.istio.io/port", " 15020 "},
      {"readiness.status.sidecar.istio.io/initialDelaySeconds", "4294967295"},
      {"readiness.status.sidecar.istio.io/periodSeconds", "0"},
      {"readiness.status.sidecar.istio.io/failureThreshold", "30"},
      {"traffic.sidecar.istio.io/includeOutboundIPRanges", "*"},
      {"traffic.sidecar.istio.io/excludeOutboundIPRanges", "10.0.0.0/8,fd00::/8"},
      {"traffic.sidecar.istio.io/includeInboundPorts", "*"},
      {"traffic.sidecar.istio.io/excludeInboundPorts", "80, 443"},
      {"traffic.sidecar.istio.io/excludeOutboundPorts", ""},
      {"traffic.sidecar.istio.io/excludeInterfaces", "eth1, net1.2"},
      {"traffic.sidecar.istio.io/kubevirtInterfaces", "vnet0"},
      {"istio.io/reroute-virtual-interfaces", "veth-a_b"},
      {"prometheus.istio.io/merge-metrics", "F"},
      {"sidecar.istio.io/proxyCPU", "100m"},
      {"sidecar.istio.io/proxyMemory", "128Mi"},
      {"sidecar.istio.io/proxyCPULimit", "2"},
      {"sidecar.istio.io/proxyMemoryLimit", "1Gi"},
      // Not checked: any value passes.
      {"sidecar.istio.io/inject", "maybe"},
      {"sidecar.istio.io/rewriteAppHTTPProbers", "nope"},
  });
  auto st = validate_annotations(pod);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.message());
}

// Each check alone, with upstream's full message (go-multierror list of one).
TEST(PostprocessValidate, RejectsEachInvalidAnnotationWithUpstreamMessage) {
  struct Case {
    std::string name, value, reason;
  };
  const std::vector<Case> cases = {
      {"sidecar.istio.io/interceptionMode", "redirect",
       "interceptionMode invalid, use REDIRECT,TPROXY,NONE: redirect"},
      {"status.sidecar.istio.io/port", "70000",
       "excludeInboundPorts invalid: failed parsing port '70000': strconv.ParseUint: parsing "
       "\"70000\": value out of range"},
      {"readiness.status.sidecar.istio.io/initialDelaySeconds", "-1",
       "strconv.ParseUint: parsing \"-1\": invalid syntax"},
      {"readiness.status.sidecar.istio.io/periodSeconds", "4294967296",
       "strconv.ParseUint: parsing \"4294967296\": value out of range"},
      {"readiness.status.sidecar.istio.io/failureThreshold", "",
       "strconv.ParseUint: parsing \"\": invalid syntax"},
      {"traffic.sidecar.istio.io/includeOutboundIPRanges", "1.1.1.1/99",
       "includeIPRanges invalid: failed parsing cidr '1.1.1.1/99': "
       "netip.ParsePrefix(\"1.1.1.1/99\"): prefix length out of range"},
      {"traffic.sidecar.istio.io/excludeOutboundIPRanges", "*",
       "excludeIPRanges invalid: failed parsing cidr '*': netip.ParsePrefix(\"*\"): no '/'"},
      {"traffic.sidecar.istio.io/excludeOutboundIPRanges", "10.0.0.0/8, 1.1.1.1/32",
       "excludeIPRanges invalid: failed parsing cidr ' 1.1.1.1/32': netip.ParsePrefix(\" "
       "1.1.1.1/32\"): ParseAddr(\" 1.1.1.1\"): unexpected character (at \" 1.1.1.1\")"},
      {"traffic.sidecar.istio.io/includeInboundPorts", "bad",
       "includeInboundPorts invalid: failed parsing port 'bad': failed parsing port 'bad': "
       "strconv.ParseUint: parsing \"bad\": invalid syntax"},
      {"traffic.sidecar.istio.io/excludeInboundPorts", "*",
       "excludeInboundPorts invalid: failed parsing port '*': failed parsing port '*': "
       "strconv.ParseUint: parsing \"*\": invalid syntax"},
      {"traffic.sidecar.istio.io/excludeOutboundPorts", "80,,90",
       "excludeOutboundPorts invalid: failed parsing port '': failed parsing port '': "
       "strconv.ParseUint: parsing \"\": invalid syntax"},
      {"traffic.sidecar.istio.io/excludeInterfaces", "eth0,,eth1", "empty interface name"},
      {"traffic.sidecar.istio.io/kubevirtInterfaces", "averyveryverylongname",
       "interface name \"averyveryverylongname\" too long (max 15 chars)"},
      {"istio.io/reroute-virtual-interfaces", "1eth",
       "interface name \"1eth\" contains invalid "
       "characters"},
      {"prometheus.istio.io/merge-metrics", "yes",
       "strconv.ParseBool: parsing \"yes\": invalid syntax"},
      {"sidecar.istio.io/proxyCPU", "100m\"\n  - name: injected",
       "value contains control "
       "characters"},
      {"sidecar.istio.io/proxyMemory", "1Gi\xc2\x85", "value contains control characters"},
      {"sidecar.istio.io/proxyCPULimit", "notaquantity",
       "quantities must match the regular expression "
       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {"sidecar.istio.io/proxyMemoryLimit", "1ki", "unable to parse quantity's suffix"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(validation_error(c.name, c.value), "1 error occurred:\n\t* invalid value '" +
                                                     c.value + "' for annotation '" + c.name +
                                                     "': " + c.reason + "\n\n")
        << c.name;
  }
}

TEST(PostprocessValidate, ReportsEveryInvalidAnnotationInNameOrder) {
  auto st = validate_annotations(pod_with({
      {"traffic.sidecar.istio.io/includeInboundPorts", "x"},
      {"sidecar.istio.io/interceptionMode", "X"},
      {"sidecar.istio.io/proxyCPU", "100m"},
  }));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "2 errors occurred:\n"
            "\t* invalid value 'X' for annotation 'sidecar.istio.io/interceptionMode': "
            "interceptionMode invalid, use REDIRECT,TPROXY,NONE: X\n"
            "\t* invalid value 'x' for annotation 'traffic.sidecar.istio.io/includeInboundPorts': "
            "includeInboundPorts invalid: failed parsing port 'x': failed parsing port 'x': "
            "strconv.ParseUint: parsing \"x\": invalid syntax\n\n");
}

TEST(PostprocessValidate, ProxyConfigAnnotationJoinsTheSameErrorList) {
  EXPECT_EQ(validation_error("proxy.istio.io/config",
                             "concurrency: 2\nholdApplicationUntilProxyStarts: true"),
            "");
  auto st = validate_annotations(pod_with(
      {{"proxy.istio.io/config", "statusPort: 0"}, {"sidecar.istio.io/interceptionMode", "X"}}));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(
      st.message().rfind("2 errors occurred:\n\t* invalid value 'statusPort: 0' for annotation "
                         "'proxy.istio.io/config': statusPort",
                         0),
      0u)
      << st.message();
  EXPECT_EQ(st.message().find("annotation proxy.istio.io/config:"), std::string::npos);
}

}  // namespace
}  // namespace meshop::inject
