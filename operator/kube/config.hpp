// Where the apiserver is and how to authenticate to it: kubeconfig files (merged as kubectl
// merges KUBECONFIG), --kubeconfig / --context overrides, and in-cluster service-account config.
//
// Loading is synchronous and happens once at startup; unsupported kubeconfig fields
// (proxy-url, auth-provider, username/password, ...) are errors naming the field, never ignored.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "operator/kube/error.hpp"

namespace meshop::kube {

// users[].user.exec: a client.authentication.k8s.io/v1 credential plugin.
struct ExecConfig {
  std::string api_version;  // client.authentication.k8s.io/v1 (v1beta1 accepted too)
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string install_hint;
  bool provide_cluster_info = false;
  std::string interactive_mode;  // Never | IfAvailable | Always; we never have a terminal
};

struct Config {
  // https://host:port (IPv6 literal hosts in brackets).
  std::string server;
  // Overrides the name used for SNI and certificate verification (cluster tls-server-name).
  std::string tls_server_name;
  // PEM of the CA bundle that verifies the server; empty means the system default paths.
  std::string ca_pem;
  std::string ca_file;  // for messages only; ca_pem already holds its content
  bool insecure_skip_tls_verify = false;
  // PEM client certificate and key (from files or *-data).
  std::string client_cert_pem;
  std::string client_key_pem;
  // Static bearer token, or a token file re-read periodically (in-cluster, tokenFile).
  std::string token;
  std::string token_file;
  std::optional<ExecConfig> exec;
  // The namespace of the selected context ("default" when unset).
  std::string default_namespace = "default";
  std::string context;  // name of the selected context ("" for in-cluster)
  std::string cluster_name;
  std::string user_name;
};

struct LoadOptions {
  std::string kubeconfig;  // --kubeconfig: one file, replaces $KUBECONFIG
  std::string context;     // --context: replaces current-context
};

// Loads kubeconfig: --kubeconfig if given, else $KUBECONFIG (':'-separated files merged: for
// each map key the first file that sets it wins; current-context from the first file that
// sets it), else ~/.kube/config. Relative file paths resolve against the file that names them.
Result<Config> load_kubeconfig(const LoadOptions& options = {});
// Parses one already-merged document given as YAML text (tests). `base_dir` resolves paths.
Result<Config> parse_kubeconfig(const std::string& yaml, const std::string& base_dir,
                                const std::string& context_override = {});
Result<Config> load_kubeconfig_files(const std::vector<std::string>& files,
                                     const std::string& context_override = {});

// In-cluster config from KUBERNETES_SERVICE_HOST/PORT and the service-account files under
// `sa_dir` (token, ca.crt, namespace). The token is a token_file so it is re-read.
Result<Config> in_cluster_config(
    const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// What the operator uses: explicit --kubeconfig / $KUBECONFIG, else in-cluster when
// KUBERNETES_SERVICE_HOST is set, else ~/.kube/config. In-cluster, $MESHOP_SERVICE_ACCOUNT_DIR
// (when set and not empty) replaces the pod's service-account directory: the e2e tests run
// `meshop run` outside a pod with a token minted for config/'s ServiceAccount.
Result<Config> load_default_config(const LoadOptions& options = {});

// The current credential: a bearer token and/or a client certificate. Produced by
// CredentialSource from static config, a token file or an exec plugin.
struct Credential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  // When the credential must be refreshed (exec expirationTimestamp, token-file re-read time).
  std::optional<std::chrono::system_clock::time_point> expires;
};

// Produces credentials for a Config, caching them: a token file is re-read every minute, an
// exec plugin result is reused until its expirationTimestamp (or until invalidate() after a
// 401). Runs the exec plugin synchronously (fork/exec, stdout captured) on the caller's thread.
class CredentialSource {
 public:
  using Clock = std::chrono::system_clock;
  explicit CredentialSource(Config config,
                            std::chrono::seconds token_file_period = std::chrono::seconds(60));
  Result<Credential> get(Clock::time_point now = Clock::now());
  // The server said 401: drop the cached credential so the next get() refreshes it.
  void invalidate();
  // How many times the exec plugin ran (tests).
  int exec_runs() const { return exec_runs_; }

 private:
  Config config_;
  std::chrono::seconds token_file_period_;
  std::optional<Credential> cached_;
  Clock::time_point cached_until_{};
  int exec_runs_ = 0;
};

// Runs an exec credential plugin once and parses its ExecCredential (exposed for tests). A
// plugin still running after `timeout` is killed (it would otherwise stall the control loop).
Result<Credential> run_exec_plugin(const ExecConfig& exec, const Config& cluster,
                                   std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace meshop::kube
