#include "operator/kube/config.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace meshop::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "meshop-kube-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name, const std::string& content, bool exec = false) const {
    std::string p = path_ + "/" + name;
    fs::create_directories(fs::path(p).parent_path());
    std::ofstream(p) << content;
    if (exec) chmod(p.c_str(), 0755);
    return p;
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// base64 of "CA-PEM", "CERT-PEM", "KEY-PEM".
constexpr const char* kCaB64 = "Q0EtUEVN";
constexpr const char* kCertB64 = "Q0VSVC1QRU0=";
constexpr const char* kKeyB64 = "S0VZLVBFTQ==";

std::string kubeconfig(const std::string& user, const std::string& cluster_extra = {}) {
  return std::string(R"(apiVersion: v1
kind: Config
current-context: ctx
clusters:
- name: c
  cluster:
    server: https://127.0.0.1:6443
)") + cluster_extra +
         R"(contexts:
- name: ctx
  context:
    cluster: c
    user: u
    namespace: team-a
users:
- name: u
  user:
)" + user;
}

TEST(Kubeconfig, ClientCertificateDataAndCertificateAuthorityData) {
  auto cfg =
      parse_kubeconfig(kubeconfig(std::string("    client-certificate-data: ") + kCertB64 +
                                      "\n    client-key-data: " + kKeyB64 + "\n",
                                  std::string("    certificate-authority-data: ") + kCaB64 + "\n"),
                       "/tmp");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg->ca_pem, "CA-PEM");
  EXPECT_EQ(cfg->client_cert_pem, "CERT-PEM");
  EXPECT_EQ(cfg->client_key_pem, "KEY-PEM");
  EXPECT_EQ(cfg->default_namespace, "team-a");
  EXPECT_EQ(cfg->context, "ctx");
  EXPECT_FALSE(cfg->exec.has_value());
}

TEST(Kubeconfig, CertificateFilesResolveRelativeToTheKubeconfig) {
  TempDir d;
  d.file("pki/ca.crt", "CA-FILE");
  d.file("pki/u.crt", "CERT-FILE");
  d.file("pki/u.key", "KEY-FILE");
  std::string path = d.file(
      "conf/kc.yaml",
      kubeconfig("    client-certificate: ../pki/u.crt\n    client-key: ../pki/u.key\n",
                 "    certificate-authority: ../pki/ca.crt\n    tls-server-name: api.local\n"));
  auto cfg = load_kubeconfig_files({path});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->ca_pem, "CA-FILE");
  EXPECT_EQ(cfg->client_cert_pem, "CERT-FILE");
  EXPECT_EQ(cfg->client_key_pem, "KEY-FILE");
  EXPECT_EQ(cfg->tls_server_name, "api.local");
}

TEST(Kubeconfig, MissingCertificateFileIsAnErrorNamingTheField) {
  auto cfg = parse_kubeconfig(kubeconfig("    client-certificate: /nonexistent/u.crt\n"
                                         "    client-key: /nonexistent/u.key\n"),
                              "/tmp");
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.error().kind, ErrorKind::kConfig);
  EXPECT_NE(cfg.error().message.find("users[u].user.client-certificate"), std::string::npos)
      << cfg.error().message;
}

TEST(Kubeconfig, BearerTokenAndInsecureSkipVerify) {
  auto cfg = parse_kubeconfig(
      kubeconfig("    token: abc.def\n", "    insecure-skip-tls-verify: true\n"), "/tmp");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->token, "abc.def");
  EXPECT_TRUE(cfg->insecure_skip_tls_verify);
  CredentialSource src(*cfg);
  auto cred = src.get();
  ASSERT_TRUE(cred);
  EXPECT_EQ(cred->token, "abc.def");
}

TEST(Kubeconfig, TokenFileIsReReadAfterThePeriod) {
  TempDir d;
  d.file("token", "first\n");
  std::string path = d.file("kc", kubeconfig("    tokenFile: token\n"));
  auto cfg = load_kubeconfig_files({path});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->token_file, d.path() + "/token");
  CredentialSource src(*cfg, std::chrono::seconds(60));
  auto t0 = std::chrono::system_clock::time_point{} + std::chrono::hours(1000);
  EXPECT_EQ(src.get(t0)->token, "first");
  d.file("token", "second");
  EXPECT_EQ(src.get(t0 + std::chrono::seconds(30))->token, "first");  // cached
  EXPECT_EQ(src.get(t0 + std::chrono::seconds(61))->token, "second");
}

TEST(Kubeconfig, UnsupportedFieldsAreErrorsNamingTheField) {
  struct Case {
    std::string user, cluster, field;
  };
  for (const Case& c : {
           Case{"    token: x\n", "    proxy-url: http://proxy:3128\n",
                "clusters[c].cluster.proxy-url"},
           Case{"    auth-provider:\n      name: gcp\n", "", "users[u].user.auth-provider"},
           Case{"    username: admin\n    password: secret\n", "", "users[u].user."},
           Case{"    token: x\n    as: someone\n", "", "users[u].user.as"},
           Case{"    token: x\n    surprise: 1\n", "", "users[u].user.surprise"},
       }) {
    auto cfg = parse_kubeconfig(kubeconfig(c.user, c.cluster), "/tmp");
    ASSERT_FALSE(cfg) << c.field;
    EXPECT_EQ(cfg.error().kind, ErrorKind::kConfig);
    EXPECT_NE(cfg.error().message.find(c.field), std::string::npos) << cfg.error().message;
  }
}

TEST(Kubeconfig, NonHttpsServerIsRejected) {
  auto cfg = parse_kubeconfig(std::string(R"(current-context: x
contexts: [{name: x, context: {cluster: c}}]
clusters: [{name: c, cluster: {server: "http://127.0.0.1:8080"}}]
)"),
                              "/tmp");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().message.find("clusters[c].cluster.server"), std::string::npos);
}

// kubectl decodes kubeconfigs with sigs.k8s.io/yaml into typed structs: YAML 1.1 booleans are
// booleans, and a value of the wrong JSON kind is an error (not a silent conversion).
TEST(Kubeconfig, ScalarsAreTypedAsKubectlTypesThem) {
  auto yes =
      parse_kubeconfig(kubeconfig("    token: x\n", "    insecure-skip-tls-verify: yes\n"), "/tmp");
  ASSERT_TRUE(yes) << yes.error().message;
  EXPECT_TRUE(yes->insecure_skip_tls_verify);

  struct Case {
    std::string user, cluster, field;
  };
  for (const Case& c : {
           Case{"    token: x\n", "    insecure-skip-tls-verify: \"true\"\n",
                "clusters[c].cluster.insecure-skip-tls-verify is a string, want true or false"},
           Case{"    token: 12345\n", "", "users[u].user.token is a number, want a string"},
           Case{"    token: on\n", "", "users[u].user.token is a boolean, want a string"},
           Case{"    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                "      command: p\n      args: [--port, 8080]\n",
                "", "users[u].user.exec.args[1] is a number"},
           Case{"    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                "      command: p\n      env: [{name: A, value: 1}]\n",
                "", "users[u].user.exec.env[0].value is a number"},
       }) {
    auto cfg = parse_kubeconfig(kubeconfig(c.user, c.cluster), "/tmp");
    ASSERT_FALSE(cfg) << c.field;
    EXPECT_EQ(cfg.error().kind, ErrorKind::kConfig);
    EXPECT_NE(cfg.error().message.find(c.field), std::string::npos) << cfg.error().message;
  }
}

TEST(Kubeconfig, SyntaxErrorNamesFileAndLineAndOnlyTheFirstDocumentCounts) {
  TempDir d;
  std::string bad = d.file("bad", "current-context: x\nclusters:\n- name: [c\n");
  auto cfg = load_kubeconfig_files({bad});
  ASSERT_FALSE(cfg);
  EXPECT_EQ(cfg.error().kind, ErrorKind::kConfig);
  EXPECT_NE(cfg.error().message.find("kubeconfig " + bad + ": "), std::string::npos)
      << cfg.error().message;
  EXPECT_NE(cfg.error().message.find("line "), std::string::npos) << cfg.error().message;

  // As kubectl (and yaml-cpp's Load before): later documents of the file are ignored.
  auto two =
      parse_kubeconfig(kubeconfig("    token: x\n") + "---\ncurrent-context: other\n", "/tmp");
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ(two->context, "ctx");
}

TEST(Kubeconfig, MergesFilesFirstKeyWinsAndCurrentContextFromFirst) {
  TempDir d;
  std::string a = d.file("a", R"(current-context: one
clusters:
- name: shared
  cluster: {server: "https://first:1"}
contexts:
- name: one
  context: {cluster: shared, user: ua}
users:
- name: ua
  user: {token: token-a}
)");
  std::string b = d.file("b", R"(current-context: two
clusters:
- name: shared
  cluster: {server: "https://second:2"}
- name: only-b
  cluster: {server: "https://third:3"}
contexts:
- name: one
  context: {cluster: only-b, user: ub}
- name: two
  context: {cluster: only-b, user: ub, namespace: nb}
users:
- name: ub
  user: {token: token-b}
)");
  auto cfg = load_kubeconfig_files({a, d.path() + "/missing", b});
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->context, "one");
  EXPECT_EQ(cfg->server, "https://first:1");  // context "one" and cluster "shared" from a
  EXPECT_EQ(cfg->token, "token-a");
  auto two = load_kubeconfig_files({a, b}, "two");  // --context
  ASSERT_TRUE(two) << two.error().message;
  EXPECT_EQ(two->server, "https://third:3");
  EXPECT_EQ(two->token, "token-b");
  EXPECT_EQ(two->default_namespace, "nb");
  // The order matters: b first gives b's current context and b's "shared".
  auto reversed = load_kubeconfig_files({b, a}, "one");
  ASSERT_TRUE(reversed) << reversed.error().message;
  EXPECT_EQ(reversed->server, "https://third:3");
}

TEST(Kubeconfig, KubeconfigEnvironmentListAndExplicitFlag) {
  TempDir d;
  std::string a = d.file("a", kubeconfig("    token: from-a\n"));
  std::string b = d.file("b", R"(current-context: other
contexts: [{name: other, context: {cluster: c2}}]
clusters: [{name: c2, cluster: {server: "https://b:1"}}]
)");
  setenv("KUBECONFIG", (b + ":" + a).c_str(), 1);
  auto env = load_kubeconfig();
  ASSERT_TRUE(env) << env.error().message;
  EXPECT_EQ(env->context, "other");
  auto with_context = load_kubeconfig({.kubeconfig = "", .context = "ctx"});
  ASSERT_TRUE(with_context) << with_context.error().message;
  EXPECT_EQ(with_context->token, "from-a");
  auto flag = load_kubeconfig({.kubeconfig = a, .context = ""});  // replaces $KUBECONFIG
  ASSERT_TRUE(flag) << flag.error().message;
  EXPECT_EQ(flag->context, "ctx");
  unsetenv("KUBECONFIG");
  auto missing = load_kubeconfig({.kubeconfig = d.path() + "/nope", .context = ""});
  ASSERT_FALSE(missing);
}

TEST(Kubeconfig, UnknownContextIsAnError) {
  auto cfg = parse_kubeconfig(kubeconfig("    token: x\n"), "/tmp", "nope");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().message.find("context \"nope\" not found"), std::string::npos);
}

// The plugin records each run and its KUBERNETES_EXEC_INFO, prints an ExecCredential whose
// token counts the runs, and expires at the time given in $EXPIRY.
constexpr const char* kPlugin = R"(#!/bin/sh
dir=$(dirname "$0")
n=$(cat "$dir/runs" 2>/dev/null || echo 0)
n=$((n + 1))
echo $n > "$dir/runs"
printf '%s' "$KUBERNETES_EXEC_INFO" > "$dir/exec-info"
echo "args: $*" > "$dir/args"
cat <<JSON
{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",
 "status":{"token":"tok-$n-$PLUGIN_GREETING","expirationTimestamp":"$EXPIRY"}}
JSON
)";

std::string exec_user(const std::string& command, const std::string& expiry) {
  return "    exec:\n"
         "      apiVersion: client.authentication.k8s.io/v1\n"
         "      command: " +
         command +
         "\n"
         "      args: [\"--flag\", \"value with space\"]\n"
         "      env:\n"
         "      - {name: PLUGIN_GREETING, value: hello}\n"
         "      - {name: EXPIRY, value: \"" +
         expiry +
         "\"}\n"
         "      provideClusterInfo: true\n"
         "      interactiveMode: Never\n";
}

TEST(ExecPlugin, TokenIsCachedUntilExpiryAndRefreshedAfter) {
  TempDir d;
  d.file("plugin.sh", kPlugin, true);
  std::string kc =
      d.file("kc", kubeconfig(exec_user("./plugin.sh", "2030-01-01T00:00:00Z"),
                              std::string("    certificate-authority-data: ") + kCaB64 + "\n"));
  auto cfg = load_kubeconfig_files({kc});
  ASSERT_TRUE(cfg) << cfg.error().message;
  ASSERT_TRUE(cfg->exec.has_value());
  EXPECT_EQ(cfg->exec->command, d.path() + "/plugin.sh");
  CredentialSource src(*cfg);
  using namespace std::chrono;
  auto before = sys_days(year(2029) / 12 / 31);
  auto c1 = src.get(before);
  ASSERT_TRUE(c1) << c1.error().message;
  EXPECT_EQ(c1->token, "tok-1-hello");
  ASSERT_TRUE(c1->expires.has_value());
  EXPECT_EQ(*c1->expires, sys_days(year(2030) / 1 / 1));
  EXPECT_EQ(src.get(before + hours(23))->token, "tok-1-hello");  // cached
  EXPECT_EQ(src.exec_runs(), 1);
  EXPECT_EQ(src.get(sys_days(year(2030) / 1 / 1) + seconds(1))->token, "tok-2-hello");
  src.invalidate();  // as after a 401
  EXPECT_EQ(src.get(before)->token, "tok-3-hello");
  EXPECT_EQ(src.exec_runs(), 3);

  EXPECT_EQ(d.read("args"), "args: --flag value with space\n");
  std::string info = d.read("exec-info");
  EXPECT_NE(info.find(R"("apiVersion":"client.authentication.k8s.io/v1")"), std::string::npos);
  EXPECT_NE(info.find(R"("kind":"ExecCredential")"), std::string::npos);
  EXPECT_NE(info.find(R"("interactive":false)"), std::string::npos);
  EXPECT_NE(info.find(R"("server":"https://127.0.0.1:6443")"), std::string::npos);
  EXPECT_NE(info.find(std::string(R"("certificate-authority-data":")") + kCaB64), std::string::npos)
      << info;
}

TEST(ExecPlugin, ClientCertificateCredential) {
  TempDir d;
  d.file("plugin.sh", R"(#!/bin/sh
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}}'
)",
         true);
  std::string kc = d.file("kc", kubeconfig("    exec:\n"
                                           "      apiVersion: client.authentication.k8s.io/v1\n"
                                           "      command: " +
                                           d.path() + "/plugin.sh\n"));
  auto cfg = load_kubeconfig_files({kc});
  ASSERT_TRUE(cfg) << cfg.error().message;
  CredentialSource src(*cfg);
  auto c = src.get();
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->client_cert_pem, "CERT");
  EXPECT_EQ(c->client_key_pem, "KEY");
  EXPECT_FALSE(c->expires.has_value());
  ASSERT_TRUE(src.get());
  EXPECT_EQ(src.exec_runs(), 1);  // no expiry: cached until invalidated
}

TEST(ExecPlugin, FailureReportsExitCodeAndStderr) {
  TempDir d;
  d.file("plugin.sh", "#!/bin/sh\necho 'no credentials for you' >&2\nexit 3\n", true);
  ExecConfig x;
  x.api_version = "client.authentication.k8s.io/v1";
  x.command = d.path() + "/plugin.sh";
  auto c = run_exec_plugin(x, Config{});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("exit 3"), std::string::npos) << c.error().message;
  EXPECT_NE(c.error().message.find("no credentials for you"), std::string::npos);
}

TEST(ExecPlugin, MissingCommandMentionsInstallHint) {
  ExecConfig x;
  x.api_version = "client.authentication.k8s.io/v1";
  x.command = "meshop-no-such-plugin-binary";
  x.install_hint = "install it from example.com";
  auto c = run_exec_plugin(x, Config{});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("install it from example.com"), std::string::npos)
      << c.error().message;
}

TEST(ExecPlugin, HungPluginIsKilledAtTheTimeout) {
  TempDir d;
  d.file("plugin.sh", "#!/bin/sh\nexec sleep 600\n", true);
  ExecConfig x;
  x.api_version = "client.authentication.k8s.io/v1";
  x.command = d.path() + "/plugin.sh";
  auto c = run_exec_plugin(x, Config{}, std::chrono::milliseconds(200));
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("killed"), std::string::npos) << c.error().message;
}

TEST(ExecPlugin, WrongApiVersionInOutputIsRejected) {
  TempDir d;
  d.file("plugin.sh", R"(#!/bin/sh
echo '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}}'
)",
         true);
  ExecConfig x;
  x.api_version = "client.authentication.k8s.io/v1";
  x.command = d.path() + "/plugin.sh";
  auto c = run_exec_plugin(x, Config{});
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message.find("apiVersion"), std::string::npos);
}

TEST(ExecPlugin, UnsupportedApiVersionInKubeconfigIsRejected) {
  auto cfg = parse_kubeconfig(kubeconfig("    exec:\n"
                                         "      apiVersion: client.authentication.k8s.io/v1alpha1\n"
                                         "      command: x\n"),
                              "/tmp");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().message.find("users[u].user.exec.apiVersion"), std::string::npos);
}

TEST(ExecPlugin, InteractiveModeAlwaysIsRejected) {
  auto cfg = parse_kubeconfig(kubeconfig("    exec:\n"
                                         "      apiVersion: client.authentication.k8s.io/v1\n"
                                         "      command: x\n"
                                         "      interactiveMode: Always\n"),
                              "/tmp");
  ASSERT_FALSE(cfg);
  EXPECT_NE(cfg.error().message.find("users[u].user.exec.interactiveMode"), std::string::npos)
      << cfg.error().message;
}

TEST(InCluster, ReadsServiceAccountFilesAndBracketsIpv6Hosts) {
  TempDir d;
  d.file("sa/token", "sa-token\n");
  d.file("sa/ca.crt", "SA-CA");
  d.file("sa/namespace", "meshop-system\n");
  setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto cfg = in_cluster_config(d.path() + "/sa");
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->server, "https://[fd00::1]:443");
  EXPECT_EQ(cfg->ca_pem, "SA-CA");
  EXPECT_EQ(cfg->default_namespace, "meshop-system");
  CredentialSource src(*cfg);
  EXPECT_EQ(src.get()->token, "sa-token");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  EXPECT_EQ(in_cluster_config(d.path() + "/sa")->server, "https://10.96.0.1:443");
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  auto missing = in_cluster_config(d.path() + "/sa");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("KUBERNETES_SERVICE_HOST"), std::string::npos);
}

TEST(InCluster, ServiceAccountDirectoryOverridableForTestsOnlyWithoutKubeconfig) {
  TempDir d;
  d.file("minted/token", "minted-token\n");
  d.file("minted/ca.crt", "MINTED-CA");
  const char* kubeconfig = std::getenv("KUBECONFIG");
  std::string saved = kubeconfig != nullptr ? kubeconfig : "";
  unsetenv("KUBECONFIG");
  setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "6443", 1);
  setenv("MESHOP_SERVICE_ACCOUNT_DIR", (d.path() + "/minted").c_str(), 1);
  auto cfg = load_default_config();
  ASSERT_TRUE(cfg) << cfg.error().message;
  EXPECT_EQ(cfg->server, "https://127.0.0.1:6443");
  EXPECT_EQ(cfg->ca_pem, "MINTED-CA");
  EXPECT_EQ(cfg->token_file, d.path() + "/minted/token");
  // Without the override the pod's directory is read (absent here: an error naming it).
  unsetenv("MESHOP_SERVICE_ACCOUNT_DIR");
  auto pod = load_default_config();
  ASSERT_FALSE(pod);
  EXPECT_NE(pod.error().message.find("/var/run/secrets/kubernetes.io/serviceaccount/token"),
            std::string::npos)
      << pod.error().message;
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  if (!saved.empty()) setenv("KUBECONFIG", saved.c_str(), 1);
}

}  // namespace
}  // namespace meshop::kube
