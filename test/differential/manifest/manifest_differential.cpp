// Differential test of meshop's istioctl pipeline (operator/manifest/istioctl_pipeline.hpp)
// against upstream's own renderer (hack/renderoracle generate: istioctl's ManifestGenerate from
// the pinned istio.io/istio module, which embeds the same module's manifests/): every file of
// upstream's operator/cmd/mesh/testdata/manifest-generate/input, every profile of the chart set,
// and a few revisioned installs. meshop renders with --manifests <module>/manifests.
//
//   meshop_manifest_differential --istio DIR --oracle BIN [--manifests DIR] [--generated N]
//       [--also-manifests [VERSION=]DIR]... [--value-combinations N] [--work DIR] [--file F]...
//       [--min-identical N] [--jobs N] [--verbose] [CASE...]
// --generated N (default 100) adds N seeded generated IstioOperators (written under --work);
// --file F (repeatable) adds an IstioOperator file as a case; --also-manifests [VERSION=]DIR
// (another version's manifests/) adds each of its profiles, rendered from DIR by both sides,
// and renders its share of the generated IstioOperators (they take the chart sets in turn)
// from DIR. The
// accept/refuse cases (values:<i>) write each spec fragment of value_fragments() as a file,
// and --value-combinations N (default 60) seeded cases combine two or three of them (-f each).
// --jobs N (default 2): oracle processes run ahead of meshop's renders, N at a time.
//
// Objects are keyed by (API group, kind, namespace, name) and compared as parsed JSON (list
// order counts). Per case and in total it prints
//   N identical, M differ, K only-upstream, L only-meshop
// and, with --verbose, the differing paths; then "accept/refuse agrees on N/M cases". A case
// upstream refuses must be refused by meshop and the other way round (each printed with both
// errors). Exits 1 when an object differs or exists on one side only, when the two disagree
// on refusing a case, or when fewer than N objects are identical (a ratchet:
// MESHOP_MANIFEST_DIFF_MIN_IDENTICAL).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/manifest/istioctl_pipeline.hpp"

namespace fs = std::filesystem;
using namespace meshop;

namespace {

struct Case {
  std::string name;
  std::vector<std::string> files;
  std::vector<std::string> sets;
  std::string revision;
  bool force = false;
  std::string manifests = {};  // the chart set (--manifests of both sides); empty: the default
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::pair<int, std::string> run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[65536];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    out.append(buf, n);
  return {pclose(p), out};
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using Key = std::tuple<std::string, std::string, std::string, std::string>;

Key key_of(const api::Value& o) {
  std::string av = api::string_at(o, {"apiVersion"});
  std::size_t slash = av.find('/');
  return {slash == std::string::npos ? "" : av.substr(0, slash), api::string_at(o, {"kind"}),
          api::string_at(o, {"metadata", "namespace"}), api::string_at(o, {"metadata", "name"})};
}

std::string key_text(const Key& k) {
  return std::get<0>(k) + "/" + std::get<1>(k) + "/" + std::get<2>(k) + "/" + std::get<3>(k);
}

// JSON pointers where a and b differ (at most `limit`).
void diff_paths(const api::Value& a, const api::Value& b, const std::string& at,
                std::vector<std::string>& out, std::size_t limit) {
  if (out.size() >= limit) return;
  if (a.IsObject() && b.IsObject()) {
    for (const auto& m : a.GetObject()) {
      std::string p = at + "/" + api::escape_json_pointer_token(api::string_view_of(m.name));
      const api::Value* other = api::find_member(b, api::string_view_of(m.name));
      if (other == nullptr)
        out.push_back(p + " (only upstream)");
      else
        diff_paths(m.value, *other, p, out, limit);
      if (out.size() >= limit) return;
    }
    for (const auto& m : b.GetObject())
      if (api::find_member(a, api::string_view_of(m.name)) == nullptr && out.size() < limit)
        out.push_back(at + "/" + api::escape_json_pointer_token(api::string_view_of(m.name)) +
                      " (only meshop)");
    return;
  }
  if (a.IsArray() && b.IsArray() && a.Size() == b.Size()) {
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i)
      diff_paths(a[i], b[i], at + "/" + std::to_string(i), out, limit);
    return;
  }
  if (!api::json_equal(a, b)) {
    std::string ua = api::to_json(a), mb = api::to_json(b);
    if (ua.size() > 120) ua = ua.substr(0, 120) + "...";
    if (mb.size() > 120) mb = mb.substr(0, 120) + "...";
    out.push_back(at + ": upstream " + ua + " meshop " + mb);
  }
}

// A seeded generated IstioOperator: random profile, components on/off, gateways with names,
// labels and namespaces, k8s settings (replicas, env, resources, hpaSpec, PDB, nodeSelector,
// tolerations, service ports and annotations) and overlays, values, meshConfig, hub/tag.
struct Rng {
  unsigned long long s;
  unsigned next() {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<unsigned>(s >> 33);
  }
  bool coin() { return next() % 2 == 0; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[next() % v.size()];
  }
};

std::string k8s_block(Rng& r, const std::string& indent, bool gateway, bool daemonset,
                      const std::string& resource) {
  std::string k;
  auto line = [&](const std::string& l) { k += indent + "  " + l + "\n"; };
  if (!daemonset && r.coin()) line("replicaCount: " + std::to_string(1 + r.next() % 4));
  if (r.coin()) line("env: [{name: GEN_ENV, value: \"" + std::to_string(r.next() % 100) + "\"}]");
  if (r.coin())
    line("resources: {requests: {cpu: " + r.pick<std::string>({"100m", "0.5", "1", "1500m"}) +
         ", memory: 128Mi}, limits: {cpu: " + r.pick<std::string>({"2", "2000m", "500m"}) + "}}");
  if (!daemonset && r.coin())
    line("hpaSpec: {minReplicas: " + std::to_string(1 + r.next() % 3) +
         ", maxReplicas: " + std::to_string(4 + r.next() % 4) + "}");
  if (!daemonset && r.coin()) line("podDisruptionBudget: {maxUnavailable: 1}");
  if (r.coin()) line("nodeSelector: {disk: ssd}");
  if (r.coin()) line("tolerations: [{key: dedicated, operator: Exists, effect: NoSchedule}]");
  if (r.coin()) line("podAnnotations: {gen.example.io/a: \"1\"}");
  if (gateway && r.coin())
    line(
        "service: {type: NodePort, ports: [{name: http2, port: 80, targetPort: 8080}, "
        "{name: https, port: 443, targetPort: 8443, nodePort: 30443}]}");
  if (gateway && r.coin()) line("serviceAnnotations: {gen.example.io/lb: internal}");
  if (!resource.empty() && r.coin()) {
    std::string kind = daemonset ? "DaemonSet" : "Deployment";
    line("overlays:");
    line("- kind: " + kind);
    line("  name: " + resource);
    line("  patches:");
    line("  - path: metadata.labels.gen-overlay");
    line("    value: \"yes\"");
    if (r.coin()) {
      line("  - path: spec.template.spec.containers.[name:" +
           std::string(daemonset ? (resource == "ztunnel" ? "istio-proxy" : "install-cni")
                                 : (gateway ? "istio-proxy" : "discovery")) +
           "].securityContext.runAsNonRoot");
      line("    value: true");
    }
  }
  if (k.empty()) return "";
  return indent + "k8s:\n" + k;
}

std::string generated_iop(unsigned seed) {
  Rng r{seed * 2654435761ULL + 17};
  std::string y = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n";
  y += "  profile: " +
       r.pick<std::string>(
           {"default", "demo", "minimal", "ambient", "stable", "preview", "openshift"}) +
       "\n";
  std::string revision;
  if (r.next() % 4 == 0) {
    revision = r.pick<std::string>({"canary", "1-31", "blue"});
    y += "  revision: " + revision + "\n";
  }
  if (r.coin())
    y += "  hub: gen.example.io/istio\n  tag: " + r.pick<std::string>({"1.31.0", "latest", "1.2"}) +
         "\n";
  if (r.coin())
    y += "  meshConfig: {accessLogFile: /dev/stdout, enableTracing: " +
         std::string(r.coin() ? "true" : "false") + "}\n";
  y += "  components:\n";
  y += "    pilot:\n      enabled: true\n" +
       k8s_block(r, "      ", false, false, revision.empty() ? "istiod" : "istiod-" + revision);
  if (r.next() % 3 == 0)
    y += "    cni:\n      enabled: true\n" + k8s_block(r, "      ", false, true, "istio-cni-node");
  if (r.next() % 4 == 0)
    y += "    ztunnel:\n      enabled: true\n" + k8s_block(r, "      ", false, true, "ztunnel");
  if (r.coin()) {
    y += "    ingressGateways:\n";
    int n = 1 + static_cast<int>(r.next() % 2);
    for (int i = 0; i < n; ++i) {
      std::string name = i == 0 ? "istio-ingressgateway" : "gen-ingress-" + std::to_string(i);
      y += "    - name: " + name + "\n      enabled: " + (r.next() % 5 == 0 ? "false" : "true") +
           "\n";
      if (i > 0 || r.coin())
        y += "      namespace: " + r.pick<std::string>({"istio-system", "gen-gw"}) + "\n";
      if (r.coin()) y += "      label: {istio: " + name + ", gen: \"true\"}\n";
      y += k8s_block(r, "      ", true, false, name);
    }
  }
  if (r.next() % 3 == 0) {
    y += "    egressGateways:\n    - name: istio-egressgateway\n      enabled: true\n" +
         k8s_block(r, "      ", true, false, "istio-egressgateway");
  }
  y += "  values:\n    global:\n      logging: {level: \"default:" +
       r.pick<std::string>({"info", "debug"}) + "\"}\n";
  if (r.coin())
    y += "    pilot: {env: {GEN_PILOT: \"x\"}, autoscaleEnabled: " +
         std::string(r.coin() ? "true" : "false") + "}\n";
  if (r.coin()) y += "    gateways: {istio-ingressgateway: {autoscaleMax: 7}}\n";
  return y;
}

// spec fragments for the accept/refuse cases: each is written as one IstioOperator file and
// combined with others as several -f files. Valid and invalid spec.values (unknown fields at
// every depth, wrong JSON types, quoted numbers, enums, Durations, IntOrString, proto names,
// Struct and Value fields, the Struct fields decoded strictly as Kubernetes types),
// spec.unvalidatedValues (exempt) and values.meshConfig.
const std::vector<std::string>& value_fragments() {
  static const std::vector<std::string> f = {
      // accepted by upstream's decoding
      "values: {global: {proxy: {privileged: true}}}",
      "values: {pilot: {autoscaleMax: \"7\"}}",
      "values: {pilot: {autoscaleMax: 7.0}}",
      "values: {pilot: {traceSampling: \"1.5\"}}",
      "values: {pilot: {traceSampling: 2}}",
      "values: {global: {proxy: {tracer: datadog}}}",
      "values: {global: {proxy: {tracer: 2}}}",
      "values: {pilot: {keepaliveMaxServerConnectionAge: 30m}}",
      "values: {istio_cni: {enabled: false}}",
      "values: {gateways: {istio-ingressgateway: {rollingMaxSurge: \"25%\"}}}",
      "values: {gateways: {istio-ingressgateway: {rollingMaxSurge: 2}}}",
      "values: {pilot: {deploymentLabels: {anything: {nested: [1, 2]}}}}",
      "values: {ztunnel: {whatever: {x: 1}}}",
      "values: {global: {proxy: {privileged: null}}}",
      "values: {pilot: {env: {GEN_FOO: \"1\"}}}",
      "values: {global: {meshID: mesh1}}",
      "values: {cni: {resource_quotas: {pods: \"64\"}}}",
      "values: {revisionTags: [gen-tag]}",
      "values: {global: {logging: {level: \"default:debug\"}}}",
      "values: {global: {readerServiceAccount: {name: gen-reader}}}",
      "unvalidatedValues: {global: {notInTheSchema: 1}, gen: {x: [1]}}",
      "values: {meshConfig: {accessLogFile: /dev/stdout}}",
      "values: {global: {proxy: {includeIPRanges: \"10.0.0.0/8,fd00::/8\", excludeInboundPorts: "
      "\"15020,*\"}}}",
      "values: {global: {proxy: {excludeIPRanges: \"*\", includeInboundPorts: \"\"}}}",
      // Kubernetes-typed values (validateValues' strict decoding), accepted
      "values: {pilot: {affinity: {podAntiAffinity: "
      "{preferredDuringSchedulingIgnoredDuringExecution: "
      "[{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: "
      "{matchLabels: {app: istiod}}}}]}}}}",
      "values: {pilot: {tolerations: [{Key: a, OPERATOR: Exists, value: 5, effect: true, "
      "tolerationSeconds: 30}]}}",
      "values: {global: {proxy: {lifecycle: {preStop: {exec: {command: [sleep, 5]}}}}}}",
      "values: {pilot: {volumes: [{name: 5, emptyDir: {sizeLimit: 1Gi}}], volumeMounts: [{name: v, "
      "mountPath: /v, readOnly: true}]}}",
      "values: {sidecarInjectorWebhook: {neverInjectSelector: [{matchLabels: {a: b}}, "
      "{matchExpressions: [{key: x, operator: Exists}]}]}}",
      "values: {pilot: {topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, "
      "whenUnsatisfiable: DoNotSchedule}]}}",
      "values: {global: {proxy: {seccompProfile: {type: RuntimeDefault}}}}",
      "values: {pilot: {nodeSelector: {notChecked: {x: 1}}}}",
      "values: {global: {proxy: {lifecycle: {postStart: {httpGet: {port: http, path: /x}}}}}}",
      // refused by upstream's decoding
      "values: {global: {badKey: 1}}",
      "values: {pilot: {autoscaleMax: \"seven\"}}",
      "values: {pilot: {autoscaleMax: -1}}",
      "values: {pilot: {autoscaleMax: 7.5}}",
      "values: {global: {proxy: {privileged: \"yes\"}}}",
      "values: {global: {proxy: {image: 5}}}",
      "values: {global: {proxy: {tracer: jaeger}}}",
      "values: {pilot: {keepaliveMaxServerConnectionAge: 30}}",
      "values: {pilot: {keepaliveMaxServerConnectionAge: 1d}}",
      "values: {pilot: {resources: [a]}}",
      "values: {pilot: {deploymentLabels: [a]}}",
      "values: {gateways: {istio-ingressgateway: {rollingMaxSurge: true}}}",
      "values: {genUnknownTop: {}}",
      "values: {global: {proxy: {genUnknownNested: x}}}",
      "values: {revisionTags: gen-tag}",
      "values: {pilot: {autoscaleMax: 5000000000}}",
      "values: {global: {proxy: {privileged: 1}}}",
      "values: {pilot: {traceSampling: \"abc\"}}",
      "values: {pilot: {cpu: {targetAverageUtilization: \"80%\"}}}",
      "values: {gateways: {istio-egressgateway: {genBad: true}}}",
      "values: {meshConfig: {enableTracing: \"yes please\"}}",
      "values: {global: {proxy: {includeIPRanges: \"1.2.3.4/99\"}}}",
      "values: {global: {proxy: {excludeIPRanges: \"10.0.0.0/8, 10.1.0.0/16\"}}}",
      "values: {global: {proxy: {includeIPRanges: \"010.0.0.0/8\"}}}",
      "values: {global: {proxy: {excludeInboundPorts: \"70000\"}}}",
      "values: {global: {proxy: {includeInboundPorts: \"80,http\"}}}",
      // Kubernetes-typed values, refused
      "values: {pilot: {affinity: {bogus: 1}}}",
      "values: {cni: {affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "{nodeSelectorTerms: [{matchFields: [{key: a, operator: In, extra: 1}]}]}}}}}",
      "values: {pilot: {tolerations: [{tolerationSeconds: 1.5}]}}",
      "values: {pilot: {volumes: [{name: v, emptyDir: {sizeLimit: lots}}]}}",
      "values: {pilot: {volumes: [{name: v, secret: {secretName: 5}}]}}",
      "values: {global: {proxy: {lifecycle: {preStop: {httpGet: {port: 1.5}}}}}}",
      "values: {global: {proxy: {seccompProfile: {type: RuntimeDefault, bogus: x}}}}",
      "values: {sidecarInjectorWebhook: {alwaysInjectSelector: [{matchLabels: {a: [b]}}]}}",
      "values: {pilot: {topologySpreadConstraints: [{maxSkew: \"1\"}]}}",
      "values: {global: {waypoint: {nodeSelector: {nodeSelectorTerms: [{bogus: 1}]}}}}",
      "values: {pilot: {volumeMounts: [{name: v, readOnly: \"yes\"}]}}",
      "values: {global: {defaultTolerations: [{thats: not-a-real-field}]}}",
      "values: {gateways: {istio-ingressgateway: {podAntiAffinityLabelSelector: [{key: app, "
      "operator: In, values: gw, topologyKey: zone}]}}}",
  };
  return f;
}

std::string fragment_file(const std::string& fragment) {
  return "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  " + fragment + "\n";
}

}  // namespace

int main(int argc, char** argv) {
  std::string istio, oracle, manifests;
  std::vector<std::string> also_manifests;  // other chart sets whose profiles are cases too
  int value_combinations = 60;
  long min_identical = 1;
  bool verbose = false;
  int generated = 100;
  int jobs = 2;
  std::vector<std::string> extra_files;
  fs::path work;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--istio")
      istio = next();
    else if (a == "--oracle")
      oracle = next();
    else if (a == "--manifests")
      manifests = next();
    else if (a == "--min-identical")
      min_identical = std::stol(next());
    else if (a == "--also-manifests")
      also_manifests.push_back(next());
    else if (a == "--value-combinations")
      value_combinations = std::stoi(next());
    else if (a == "--file")
      extra_files.push_back(next());
    else if (a == "--generated")
      generated = std::stoi(next());
    else if (a == "--work")
      work = next();
    else if (a == "--verbose")
      verbose = true;
    else if (a == "--jobs")
      jobs = std::max(1, std::stoi(next()));
    else
      only.push_back(a);
  }
  if (istio.empty() || oracle.empty()) {
    std::cerr << "usage: meshop_manifest_differential --istio DIR --oracle BIN [--manifests DIR] "
                 "[--min-identical N] [--verbose] [CASE...]\n";
    return 2;
  }
  if (manifests.empty()) manifests = istio + "/manifests";
  bool own_work = work.empty();
  if (own_work)
    work = fs::temp_directory_path() / ("manifest-diff-work-" + std::to_string(getpid()));

  std::vector<Case> cases;
  fs::path inputs = fs::path(istio) / "operator/cmd/mesh/testdata/manifest-generate/input";
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(inputs))
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  for (const std::string& n : names)
    cases.push_back({"file:" + n, {(inputs / n).string()}, {}, ""});
  std::vector<std::string> profiles;
  for (const auto& e : fs::directory_iterator(fs::path(manifests) / "profiles"))
    if (e.path().extension() == ".yaml") profiles.push_back(e.path().stem().string());
  std::sort(profiles.begin(), profiles.end());
  for (const std::string& p : profiles)
    cases.push_back({"profile:" + p, {}, {"profile=" + p}, ""});
  // --also-manifests VERSION=DIR or DIR (named after its module directory then).
  std::vector<std::pair<std::string, std::string>> other_sets;  // (tag, manifests dir)
  for (const std::string& arg : also_manifests) {
    std::size_t eq = arg.find('=');
    if (eq != std::string::npos && arg.find('/') > eq) {
      other_sets.emplace_back(arg.substr(0, eq), arg.substr(eq + 1));
    } else {
      std::string tag = fs::path(arg).parent_path().filename().string();
      other_sets.emplace_back(tag.substr(tag.find('@') + 1), arg);
    }
  }
  for (const auto& [tag, dir] : other_sets) {
    std::vector<std::string> more;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "profiles"))
      if (e.path().extension() == ".yaml") more.push_back(e.path().stem().string());
    std::sort(more.begin(), more.end());
    for (const std::string& p : more) {
      cases.push_back({"profile:" + tag + ":" + p, {}, {"profile=" + p}, ""});
      cases.back().manifests = dir;
    }
  }
  cases.push_back({"revision:canary", {}, {}, "canary"});
  cases.push_back({"revision:canary-minimal", {}, {"profile=minimal"}, "canary"});
  for (const std::string& f : extra_files)
    cases.push_back({"file:" + fs::path(f).filename().string(), {f}, {}, ""});
  // istioctl's --force over an input it rejects (unknown values field).
  cases.push_back({"force:flag_force.yaml", {(inputs / "flag_force.yaml").string()}, {}, ""});
  cases.back().force = true;
  fs::create_directories(work);
  // The generated IstioOperators take the chart sets in turn: the pinned module's, then each
  // --also-manifests one.
  for (int g = 0; g < generated; ++g) {
    fs::path f = work / ("generated-" + std::to_string(g) + ".yaml");
    std::ofstream(f) << generated_iop(static_cast<unsigned>(g));
    std::size_t set = static_cast<std::size_t>(g) % (other_sets.size() + 1);
    if (set == 0) {
      cases.push_back({"generated:" + std::to_string(g), {f.string()}, {}, ""});
    } else {
      cases.push_back({"generated:" + other_sets[set - 1].first + ":" + std::to_string(g),
                       {f.string()},
                       {},
                       ""});
      cases.back().manifests = other_sets[set - 1].second;
    }
  }
  // Accept/refuse cases: every fragment alone, then seeded combinations of two or three.
  const auto& frags = value_fragments();
  std::vector<std::string> frag_files;
  for (std::size_t i = 0; i < frags.size(); ++i) {
    fs::path f = work / ("values-" + std::to_string(i) + ".yaml");
    std::ofstream(f) << fragment_file(frags[i]);
    frag_files.push_back(f.string());
    cases.push_back({"values:" + std::to_string(i), {f.string()}, {}, ""});
  }
  for (int g = 0; g < value_combinations; ++g) {
    Rng r{static_cast<unsigned long long>(g) * 40503ULL + 7};
    Case c{"values-combined:" + std::to_string(g), {}, {}, ""};
    std::size_t n = 2 + r.next() % 2;
    for (std::size_t i = 0; i < n; ++i)
      c.files.push_back(frag_files[r.next() % frag_files.size()]);
    cases.push_back(std::move(c));
  }
  if (!only.empty()) {
    std::vector<Case> kept;
    for (Case& c : cases)
      for (const std::string& o : only)
        if (c.name == o || c.name.substr(c.name.find(':') + 1) == o) kept.push_back(c);
    cases = std::move(kept);
  }

  // The oracle's answer for case i (exit status, stdout or, on failure, stderr).
  auto oracle_answer = [&](std::size_t i) -> std::pair<int, std::string> {
    const Case& c = cases[i];
    std::string cmd = shell_quote(oracle) + " generate";
    for (const std::string& f : c.files)
      cmd += " -f " + shell_quote(f);
    for (const std::string& s : c.sets)
      cmd += " --set " + shell_quote(s);
    if (!c.revision.empty()) cmd += " --revision " + shell_quote(c.revision);
    if (c.force) cmd += " --force";
    if (!c.manifests.empty()) cmd += " --manifests " + shell_quote(c.manifests);
    fs::path err_file = fs::temp_directory_path() /
                        ("manifest-diff-" + std::to_string(getpid()) + "-" + std::to_string(i));
    cmd += " 2>" + shell_quote(err_file.string());
    auto answer = run(cmd);
    if (answer.first != 0) answer.second = read_file(err_file);
    fs::remove(err_file);
    return answer;
  };
  // The oracle (one Go process per case) runs `jobs` cases ahead, in parallel with meshop's
  // renders on this thread.
  std::vector<std::future<std::pair<int, std::string>>> answers(cases.size());
  std::size_t launched = 0;
  auto launch_until = [&](std::size_t n) {
    for (; launched < std::min(n, cases.size()); ++launched)
      answers[launched] = std::async(std::launch::async, oracle_answer, launched);
  };

  long identical = 0, differ = 0, only_up = 0, only_me = 0;
  long err_both = 0, err_up = 0, err_me = 0;
  for (std::size_t at = 0; at < cases.size(); ++at) {
    const Case& c = cases[at];
    launch_until(at + static_cast<std::size_t>(jobs));
    auto [rc, up_text] = answers[at].get();

    manifest::istioctl::PipelineInputs in;
    for (const std::string& f : c.files)
      in.files.push_back({f, read_file(f)});
    in.set_flags = c.sets;
    in.revision = c.revision;
    in.manifests = c.manifests.empty() ? manifests : c.manifests;
    in.force = c.force;
    auto mine = manifest::istioctl::generate(in);

    if (rc != 0 || !mine.ok()) {
      std::string uerr = rc != 0 ? up_text.substr(0, 200) : "";
      std::string merr = mine.ok() ? "" : mine.message().substr(0, 200);
      while (!uerr.empty() && uerr.back() == '\n')
        uerr.pop_back();
      const char* kind =
          rc != 0 && !mine.ok() ? "both" : (rc != 0 ? "only upstream" : "only meshop");
      (rc != 0 && !mine.ok() ? err_both : (rc != 0 ? err_up : err_me)) += 1;
      std::printf("%-50s error (%s): upstream=%s | meshop=%s\n", c.name.c_str(), kind, uerr.c_str(),
                  merr.c_str());
      if (rc != 0) continue;
    }
    auto docs = api::yaml_stream_to_json(up_text);
    if (!docs.ok()) {
      std::printf("%-50s upstream output unparsable: %s\n", c.name.c_str(), docs.message().c_str());
      ++err_up;
      continue;
    }
    std::map<Key, const api::Value*> up, me;
    for (const api::Document& d : *docs)
      if (d.IsObject()) up[key_of(d)] = &d;
    if (mine.ok())
      for (const auto& o : mine->objects)
        me[key_of(o.object)] = &o.object;
    long ci = 0, cd = 0, cu = 0, cm = 0;
    for (const auto& [k, v] : up) {
      auto it = me.find(k);
      if (it == me.end()) {
        ++cu;
        if (verbose) std::printf("  only upstream: %s\n", key_text(k).c_str());
      } else if (api::json_equal(*v, *it->second)) {
        ++ci;
      } else {
        ++cd;
        if (verbose) {
          std::vector<std::string> paths;
          diff_paths(*v, *it->second, "", paths, 8);
          std::printf("  differ: %s\n", key_text(k).c_str());
          for (const std::string& p : paths)
            std::printf("      %s\n", p.c_str());
        }
      }
    }
    for (const auto& [k, v] : me)
      if (up.find(k) == up.end()) {
        ++cm;
        if (verbose) std::printf("  only meshop: %s\n", key_text(k).c_str());
      }
    identical += ci;
    differ += cd;
    only_up += cu;
    only_me += cm;
    std::printf("%-50s %ld identical, %ld differ, %ld only-upstream, %ld only-meshop\n",
                c.name.c_str(), ci, cd, cu, cm);
  }
  std::printf(
      "TOTAL over %zu cases: %ld identical, %ld differ, %ld only-upstream, %ld only-meshop\n",
      cases.size(), identical, differ, only_up, only_me);
  std::printf("errors: %ld both, %ld only upstream, %ld only meshop\n", err_both, err_up, err_me);
  std::printf("accept/refuse agrees on %ld/%zu cases (%ld refused by both)\n",
              static_cast<long>(cases.size()) - err_up - err_me, cases.size(), err_both);
  if (own_work) fs::remove_all(work);
  if (differ > 0 || only_up > 0 || only_me > 0 || err_me > 0 || err_up > 0) {
    std::printf(
        "FAIL: every object must be identical, and meshop must refuse exactly what upstream "
        "refuses\n");
    return 1;
  }
  if (identical == 0 || identical < min_identical) {
    std::printf("FAIL: %ld identical objects, at least %ld required\n", identical, min_identical);
    return 1;
  }
  return 0;
}
