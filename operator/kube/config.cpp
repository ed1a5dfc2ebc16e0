#include "operator/kube/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/base64.hpp"
#include "api/time.hpp"
#include "api/yaml.hpp"

extern char** environ;

namespace meshop::kube {
namespace {

namespace fs = std::filesystem;

Error config_error(std::string message) {
  return make_error(ErrorKind::kConfig, std::move(message));
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::string resolve(const std::string& path, const std::string& base_dir) {
  if (path.empty() || fs::path(path).is_absolute() || base_dir.empty()) return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// A named entry of clusters/users/contexts with the directory of the file it came from.
struct Entry {
  const api::Value* node;  // null when the entry has no such member
  std::string base_dir;
  std::string file;
};

struct Merged {
  std::map<std::string, Entry> clusters, users, contexts;
  std::string current_context;
};

// The value of `key` in mapping `n`; null when `n` is absent or not a mapping, when the key is
// absent, and when its value is YAML null (kubectl reads `key:` and `key: ~` as unset).
const api::Value* member(const api::Value* n, const char* key) {
  if (n == nullptr || !n->IsObject()) return nullptr;
  auto it = n->FindMember(key);
  if (it == n->MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

const char* kind_name(const api::Value& v) {
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "a list";
  if (v.IsObject()) return "a mapping";
  return "null";
}

// What a field holds. kubectl decodes kubeconfigs as sigs.k8s.io/yaml does (YAML 1.1 scalars
// typed, then JSON into typed Go structs), so an unquoted number or `yes` in a string field
// and a quoted "true" in a boolean field are errors there, and here too.
enum class Kind { kString, kBool, kStringList, kEnvList, kMapping, kAny };

Status check_kind(const api::Value& v, Kind kind, const std::string& where) {
  auto want = [&](const char* what) {
    return config_error(
        where + " is " + kind_name(v) + ", want " + what +
        (v.IsBool() || v.IsNumber() ? " (quote the value to make it a string)" : ""));
  };
  switch (kind) {
    case Kind::kString:
      if (!v.IsString()) return want("a string");
      break;
    case Kind::kBool:
      if (!v.IsBool()) return want("true or false");
      break;
    case Kind::kMapping:
      if (!v.IsObject()) return want("a mapping");
      break;
    case Kind::kStringList:
      if (!v.IsArray()) return want("a list of strings");
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        if (auto st = check_kind(v[i], Kind::kString, where + "[" + std::to_string(i) + "]"); !st) {
          return st;
        }
      }
      break;
    case Kind::kEnvList:
      if (!v.IsArray()) return want("a list of {name, value}");
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        if (auto st = check_kind(v[i], Kind::kMapping, at); !st) return st;
        for (const char* k : {"name", "value"}) {
          const api::Value* f = member(&v[i], k);
          if (f == nullptr) {
            if (std::strcmp(k, "name") == 0) return config_error(at + ".name is missing");
            continue;
          }
          if (auto st = check_kind(*f, Kind::kString, at + "." + k); !st) return st;
        }
      }
      break;
    case Kind::kAny:
      break;
  }
  return Ok{};
}

// The string value of `key` ("" when unset); the caller has checked its kind.
std::string scalar(const api::Value* n, const char* key) {
  const api::Value* v = member(n, key);
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength())
                                       : std::string();
}

Status merge_document(const api::Value& root, const std::string& file, Merged& merged) {
  if (root.IsNull()) return Ok{};
  if (!root.IsObject()) return config_error("kubeconfig " + file + ": top level is not a mapping");
  const std::string base_dir = fs::path(file).parent_path().string();
  struct Section {
    const char* list;
    const char* item;
    std::map<std::string, Entry>* into;
  };
  for (const Section& s :
       {Section{"clusters", "cluster", &merged.clusters}, Section{"users", "user", &merged.users},
        Section{"contexts", "context", &merged.contexts}}) {
    const api::Value* list = member(&root, s.list);
    if (list == nullptr) continue;
    if (!list->IsArray()) {
      return config_error("kubeconfig " + file + ": " + s.list + " is not a list");
    }
    for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
      const api::Value* named = &(*list)[i];
      const std::string at = std::string(s.list) + "[" + std::to_string(i) + "]";
      if (auto st = check_kind(*named, Kind::kMapping, at); !st) {
        return config_error("kubeconfig " + file + ": " + st.error().message);
      }
      if (const api::Value* n = member(named, "name")) {
        if (auto st = check_kind(*n, Kind::kString, at + ".name"); !st) {
          return config_error("kubeconfig " + file + ": " + st.error().message);
        }
      }
      std::string name = scalar(named, "name");
      if (name.empty()) {
        return config_error("kubeconfig " + file + ": " + s.list + "[" + std::to_string(i) +
                            "].name is missing");
      }
      // kubectl: the first file to set a key wins.
      s.into->try_emplace(name, Entry{member(named, s.item), base_dir, file});
    }
  }
  if (const api::Value* cc = member(&root, "current-context")) {
    if (auto st = check_kind(*cc, Kind::kString, "current-context"); !st) {
      return config_error("kubeconfig " + file + ": " + st.error().message);
    }
  }
  if (merged.current_context.empty()) merged.current_context = scalar(&root, "current-context");
  return Ok{};
}

// Reads `<key>` (a file path) or `<key>-data` (base64) into PEM text.
Result<std::string> pem_field(const api::Value* n, const std::string& key, const Entry& e,
                              const std::string& where) {
  std::string data = scalar(n, (key + "-data").c_str());
  std::string path = scalar(n, key.c_str());
  if (!data.empty()) {
    auto decoded = api::base64_decode(data);
    if (!decoded) return config_error(where + "." + key + "-data is not valid base64");
    return *decoded;
  }
  if (!path.empty()) {
    std::string full = resolve(path, e.base_dir);
    auto content = read_file(full);
    if (!content) {
      return config_error(where + "." + key + ": cannot read " + full + ": " +
                          std::strerror(errno));
    }
    return *content;
  }
  return std::string();
}

// Every key of mapping `n` must be in `supported`, and its value (unless null) of that kind.
Status check_fields(const api::Value* n, const std::string& where,
                    const std::map<std::string, Kind>& supported,
                    const std::map<std::string, std::string>& unsupported) {
  if (n == nullptr || n->IsNull()) return Ok{};
  if (!n->IsObject()) return config_error(where + " is not a mapping");
  for (const auto& kv : n->GetObject()) {
    std::string key(kv.name.GetString(), kv.name.GetStringLength());
    if (auto known = supported.find(key); known != supported.end()) {
      if (kv.value.IsNull()) continue;
      if (auto st = check_kind(kv.value, known->second, where + "." + key); !st) return st;
      continue;
    }
    auto it = unsupported.find(key);
    if (it != unsupported.end()) {
      return config_error(where + "." + key + " is not supported by meshop (" + it->second + ")");
    }
    return config_error(where + "." + key + " is not a field meshop understands");
  }
  return Ok{};
}

Result<ExecConfig> parse_exec(const api::Value* n, const Entry& e, const std::string& where) {
  ExecConfig x;
  if (auto st = check_fields(n, where,
                             {{"apiVersion", Kind::kString},
                              {"command", Kind::kString},
                              {"args", Kind::kStringList},
                              {"env", Kind::kEnvList},
                              {"installHint", Kind::kString},
                              {"provideClusterInfo", Kind::kBool},
                              {"interactiveMode", Kind::kString}},
                             {});
      !st) {
    return Error(st.error());
  }
  x.api_version = scalar(n, "apiVersion");
  if (x.api_version != "client.authentication.k8s.io/v1" &&
      x.api_version != "client.authentication.k8s.io/v1beta1") {
    return config_error(where + ".apiVersion \"" + x.api_version +
                        "\" is not supported (want client.authentication.k8s.io/v1)");
  }
  x.command = scalar(n, "command");
  if (x.command.empty()) return config_error(where + ".command is missing");
  // A command with a path separator is relative to the kubeconfig (as kubectl does).
  if (x.command.find('/') != std::string::npos) x.command = resolve(x.command, e.base_dir);
  if (const api::Value* args = member(n, "args")) {
    for (const auto& a : args->GetArray())
      x.args.emplace_back(a.GetString(), a.GetStringLength());
  }
  if (const api::Value* env = member(n, "env")) {
    for (const auto& v : env->GetArray())
      x.env.emplace_back(scalar(&v, "name"), scalar(&v, "value"));
  }
  x.install_hint = scalar(n, "installHint");
  if (const api::Value* p = member(n, "provideClusterInfo")) x.provide_cluster_info = p->GetBool();
  x.interactive_mode = scalar(n, "interactiveMode");
  if (x.interactive_mode == "Always") {
    // An operator never has a terminal to hand the plugin (client-go refuses the same way).
    return config_error(where +
                        ".interactiveMode Always needs a terminal; meshop runs plugins "
                        "non-interactively (use Never or IfAvailable)");
  }
  if (!x.interactive_mode.empty() && x.interactive_mode != "Never" &&
      x.interactive_mode != "IfAvailable") {
    return config_error(where + ".interactiveMode \"" + x.interactive_mode +
                        "\" is not one of Never, IfAvailable, Always");
  }
  return x;
}

Result<Config> select(const Merged& merged, const std::string& context_override) {
  Config cfg;
  cfg.context = context_override.empty() ? merged.current_context : context_override;
  if (cfg.context.empty()) {
    return config_error("kubeconfig: no current-context is set and no --context was given");
  }
  auto ctx = merged.contexts.find(cfg.context);
  if (ctx == merged.contexts.end()) {
    return config_error("kubeconfig: context \"" + cfg.context + "\" not found");
  }
  const std::string cwhere = "contexts[" + cfg.context + "].context";
  if (auto st = check_fields(ctx->second.node, cwhere,
                             {{"cluster", Kind::kString},
                              {"user", Kind::kString},
                              {"namespace", Kind::kString},
                              {"extensions", Kind::kAny}},
                             {});
      !st) {
    return Error(st.error());
  }
  cfg.cluster_name = scalar(ctx->second.node, "cluster");
  cfg.user_name = scalar(ctx->second.node, "user");
  if (std::string ns = scalar(ctx->second.node, "namespace"); !ns.empty())
    cfg.default_namespace = ns;

  auto cl = merged.clusters.find(cfg.cluster_name);
  if (cl == merged.clusters.end()) {
    return config_error(cwhere + ".cluster: cluster \"" + cfg.cluster_name + "\" not found");
  }
  const std::string clwhere = "clusters[" + cfg.cluster_name + "].cluster";
  const api::Value* c = cl->second.node;
  if (auto st = check_fields(c, clwhere,
                             {{"server", Kind::kString},
                              {"certificate-authority", Kind::kString},
                              {"certificate-authority-data", Kind::kString},
                              {"insecure-skip-tls-verify", Kind::kBool},
                              {"tls-server-name", Kind::kString},
                              {"extensions", Kind::kAny},
                              {"disable-compression", Kind::kBool}},
                             {{"proxy-url", "no HTTP proxy support; connect directly"}});
      !st) {
    return Error(st.error());
  }
  cfg.server = scalar(c, "server");
  if (cfg.server.empty()) return config_error(clwhere + ".server is missing");
  if (cfg.server.rfind("https://", 0) != 0) {
    return config_error(clwhere + ".server \"" + cfg.server + "\" must be an https:// URL");
  }
  while (cfg.server.size() > 8 && cfg.server.back() == '/')
    cfg.server.pop_back();
  cfg.tls_server_name = scalar(c, "tls-server-name");
  if (const api::Value* v = member(c, "insecure-skip-tls-verify")) {
    cfg.insecure_skip_tls_verify = v->GetBool();
  }
  auto ca = pem_field(c, "certificate-authority", cl->second, clwhere);
  if (!ca) return Error(ca.error());
  cfg.ca_pem = *ca;
  cfg.ca_file = resolve(scalar(c, "certificate-authority"), cl->second.base_dir);
  if (cfg.insecure_skip_tls_verify && !cfg.ca_pem.empty()) {
    return config_error(clwhere +
                        ": insecure-skip-tls-verify and certificate-authority are "
                        "mutually exclusive");
  }

  if (cfg.user_name.empty()) return cfg;  // anonymous
  auto us = merged.users.find(cfg.user_name);
  if (us == merged.users.end()) {
    return config_error(cwhere + ".user: user \"" + cfg.user_name + "\" not found");
  }
  const std::string uwhere = "users[" + cfg.user_name + "].user";
  const api::Value* u = us->second.node;
  if (auto st = check_fields(u, uwhere,
                             {{"client-certificate", Kind::kString},
                              {"client-certificate-data", Kind::kString},
                              {"client-key", Kind::kString},
                              {"client-key-data", Kind::kString},
                              {"token", Kind::kString},
                              {"tokenFile", Kind::kString},
                              {"exec", Kind::kMapping},
                              {"extensions", Kind::kAny}},
                             {{"auth-provider", "use an exec credential plugin instead"},
                              {"username", "basic authentication was removed from Kubernetes"},
                              {"password", "basic authentication was removed from Kubernetes"},
                              {"as", "impersonation"},
                              {"as-uid", "impersonation"},
                              {"as-groups", "impersonation"},
                              {"as-user-extra", "impersonation"}});
      !st) {
    return Error(st.error());
  }
  auto cert = pem_field(u, "client-certificate", us->second, uwhere);
  if (!cert) return Error(cert.error());
  auto key = pem_field(u, "client-key", us->second, uwhere);
  if (!key) return Error(key.error());
  cfg.client_cert_pem = *cert;
  cfg.client_key_pem = *key;
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
    return config_error(uwhere + ": client-certificate and client-key must be given together");
  }
  cfg.token = scalar(u, "token");
  if (std::string tf = scalar(u, "tokenFile"); !tf.empty()) {
    cfg.token_file = resolve(tf, us->second.base_dir);
  }
  if (const api::Value* ex = member(u, "exec")) {
    auto exec = parse_exec(ex, us->second, uwhere + ".exec");
    if (!exec) return Error(exec.error());
    cfg.exec = std::move(*exec);
  }
  return cfg;
}

Result<Config> load_documents(const std::vector<std::pair<api::Document, std::string>>& docs,
                              const std::string& context_override) {
  Merged merged;
  for (const auto& [node, file] : docs) {
    if (auto st = merge_document(node, file, merged); !st) return Error(st.error());
  }
  return select(merged, context_override);
}

const char* getenv_or_null(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

std::string exec_info_json(const ExecConfig& exec, const Config& cluster) {
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  w.StartObject();
  w.Key("apiVersion");
  w.String(exec.api_version.c_str());
  w.Key("kind");
  w.String("ExecCredential");
  w.Key("spec");
  w.StartObject();
  w.Key("interactive");
  w.Bool(false);
  if (exec.provide_cluster_info) {
    w.Key("cluster");
    w.StartObject();
    w.Key("server");
    w.String(cluster.server.c_str());
    if (!cluster.tls_server_name.empty()) {
      w.Key("tls-server-name");
      w.String(cluster.tls_server_name.c_str());
    }
    w.Key("insecure-skip-tls-verify");
    w.Bool(cluster.insecure_skip_tls_verify);
    if (!cluster.ca_pem.empty()) {
      // certificate-authority-data is base64 of the PEM in the kubeconfig; the exec spec
      // carries the decoded bytes base64-encoded again.
      static const char* kAlphabet =
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
      std::string b64;
      const std::string& in = cluster.ca_pem;
      std::size_t i = 0;
      for (; i + 2 < in.size(); i += 3) {
        unsigned n = (static_cast<unsigned char>(in[i]) << 16) |
                     (static_cast<unsigned char>(in[i + 1]) << 8) |
                     static_cast<unsigned char>(in[i + 2]);
        b64 += kAlphabet[(n >> 18) & 63];
        b64 += kAlphabet[(n >> 12) & 63];
        b64 += kAlphabet[(n >> 6) & 63];
        b64 += kAlphabet[n & 63];
      }
      if (i < in.size()) {
        unsigned n = static_cast<unsigned char>(in[i]) << 16;
        if (i + 1 < in.size()) n |= static_cast<unsigned char>(in[i + 1]) << 8;
        b64 += kAlphabet[(n >> 18) & 63];
        b64 += kAlphabet[(n >> 12) & 63];
        b64 += i + 1 < in.size() ? kAlphabet[(n >> 6) & 63] : '=';
        b64 += '=';
      }
      w.Key("certificate-authority-data");
      w.String(b64.c_str());
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  return sb.GetString();
}

// A kubeconfig is read as kubectl reads it: the first YAML document of the file (later ones
// are ignored), scalars typed by YAML 1.1 as sigs.k8s.io/yaml types them.
Result<api::Document> parse_yaml(const std::string& text, const std::string& file) {
  auto doc = api::yaml_to_json(text);
  if (!doc) return config_error("kubeconfig " + file + ": " + doc.message());
  return std::move(*doc);
}

}  // namespace

Result<Config> parse_kubeconfig(const std::string& yaml, const std::string& base_dir,
                                const std::string& context_override) {
  const std::string file = (fs::path(base_dir) / "kubeconfig").string();
  auto doc = parse_yaml(yaml, file);
  if (!doc) return Error(doc.error());
  std::vector<std::pair<api::Document, std::string>> docs;
  docs.emplace_back(std::move(*doc), file);
  return load_documents(docs, context_override);
}

Result<Config> load_kubeconfig_files(const std::vector<std::string>& files,
                                     const std::string& context_override) {
  std::vector<std::pair<api::Document, std::string>> docs;
  for (const auto& f : files) {
    if (f.empty()) continue;
    std::error_code ec;
    if (!fs::exists(f, ec)) continue;  // kubectl skips missing KUBECONFIG entries
    auto text = read_file(f);
    if (!text) return config_error("kubeconfig " + f + ": cannot read: " + std::strerror(errno));
    auto doc = parse_yaml(*text, f);
    if (!doc) return Error(doc.error());
    docs.emplace_back(std::move(*doc), fs::absolute(f).string());
  }
  if (docs.empty()) return config_error("kubeconfig: none of the files exist");
  return load_documents(docs, context_override);
}

Result<Config> load_kubeconfig(const LoadOptions& options) {
  if (!options.kubeconfig.empty()) {
    std::error_code ec;
    if (!fs::exists(options.kubeconfig, ec)) {
      return config_error("--kubeconfig " + options.kubeconfig + ": file does not exist");
    }
    return load_kubeconfig_files({options.kubeconfig}, options.context);
  }
  if (const char* env = getenv_or_null("KUBECONFIG")) {
    std::vector<std::string> files;
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      files.push_back(item);
    return load_kubeconfig_files(files, options.context);
  }
  const char* home = getenv_or_null("HOME");
  if (home == nullptr) return config_error("kubeconfig: $HOME is not set and no KUBECONFIG given");
  return load_kubeconfig_files({std::string(home) + "/.kube/config"}, options.context);
}

Result<Config> in_cluster_config(const std::string& sa_dir) {
  const char* host = getenv_or_null("KUBERNETES_SERVICE_HOST");
  const char* port = getenv_or_null("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr) {
    return config_error(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be set");
  }
  Config cfg;
  std::string h = host;
  if (h.find(':') != std::string::npos && h.front() != '[') h = "[" + h + "]";  // IPv6
  cfg.server = "https://" + h + ":" + port;
  cfg.token_file = sa_dir + "/token";
  if (!read_file(cfg.token_file)) {
    return config_error("in-cluster config: cannot read service-account token " + cfg.token_file);
  }
  cfg.ca_file = sa_dir + "/ca.crt";
  auto ca = read_file(cfg.ca_file);
  if (!ca) return config_error("in-cluster config: cannot read CA " + cfg.ca_file);
  cfg.ca_pem = *ca;
  if (auto ns = read_file(sa_dir + "/namespace"); ns && !trim(*ns).empty()) {
    cfg.default_namespace = trim(*ns);
  }
  return cfg;
}

Result<Config> load_default_config(const LoadOptions& options) {
  if (options.kubeconfig.empty() && getenv_or_null("KUBECONFIG") == nullptr &&
      getenv_or_null("KUBERNETES_SERVICE_HOST") != nullptr) {
    const char* sa_dir = getenv_or_null("MESHOP_SERVICE_ACCOUNT_DIR");
    return sa_dir != nullptr && *sa_dir != '\0' ? in_cluster_config(sa_dir) : in_cluster_config();
  }
  return load_kubeconfig(options);
}

Result<Credential> run_exec_plugin(const ExecConfig& exec, const Config& cluster,
                                   std::chrono::milliseconds timeout) {
  const std::string where = "exec credential plugin " + exec.command;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0)
    return config_error(where + ": pipe: " + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return config_error(where + ": pipe: " + std::strerror(errno));
  }
  // Everything the child needs is built before fork (no allocation after fork).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view kv(*e);
    bool overridden = kv.rfind("KUBERNETES_EXEC_INFO=", 0) == 0;
    for (const auto& [k, v] : exec.env) {
      if (kv.size() > k.size() && kv.substr(0, k.size()) == k && kv[k.size()] == '=') {
        overridden = true;
      }
    }
    if (!overridden) env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : exec.env)
    env_strings.push_back(k + "=" + v);
  env_strings.push_back("KUBERNETES_EXEC_INFO=" + exec_info_json(exec, cluster));
  std::vector<char*> envp;
  for (auto& s : env_strings)
    envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{exec.command};
  argv_strings.insert(argv_strings.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (auto& s : argv_strings)
    argv.push_back(s.data());
  argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) return config_error(where + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execvpe(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  std::string out, err;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[4096];
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int ready = poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;  // re-checks the deadline
    for (auto& f : fds) {
      if (f.fd < 0 || f.revents == 0) continue;
      ssize_t n = read(f.fd, buf, sizeof buf);
      if (n > 0) {
        (f.fd == out_pipe[0] ? out : err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(f.fd);
        f.fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return config_error(where + ": still running after " + std::to_string(timeout.count()) +
                        " ms; killed");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = where + " failed (exit " +
                      std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")";
    if (!trim(err).empty()) msg += ": " + trim(err);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !exec.install_hint.empty()) {
      msg += "; " + exec.install_hint;
    }
    return config_error(msg);
  }
  rapidjson::Document doc;
  doc.Parse(out.c_str(), out.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return config_error(where + ": output is not an ExecCredential JSON object");
  }
  auto str = [](const rapidjson::Value& v, const char* key) -> std::string {
    if (!v.IsObject()) return {};
    auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : std::string();
  };
  if (str(doc, "kind") != "ExecCredential") {
    return config_error(where + ": output kind is \"" + str(doc, "kind") +
                        "\", want ExecCredential");
  }
  if (str(doc, "apiVersion") != exec.api_version) {
    return config_error(where + ": output apiVersion \"" + str(doc, "apiVersion") +
                        "\" does not match " + exec.api_version);
  }
  auto st = doc.FindMember("status");
  if (st == doc.MemberEnd() || !st->value.IsObject()) {
    return config_error(where + ": output has no status");
  }
  Credential cred;
  cred.token = str(st->value, "token");
  cred.client_cert_pem = str(st->value, "clientCertificateData");
  cred.client_key_pem = str(st->value, "clientKeyData");
  if (cred.token.empty() && cred.client_cert_pem.empty()) {
    return config_error(where + ": status has neither token nor clientCertificateData");
  }
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
    return config_error(where + ": status.clientCertificateData and clientKeyData go together");
  }
  if (std::string exp = str(st->value, "expirationTimestamp"); !exp.empty()) {
    auto t = api::parse_rfc3339(exp);
    if (!t)
      return config_error(where + ": status.expirationTimestamp \"" + exp + "\" is not RFC 3339");
    cred.expires = *t;
  }
  return cred;
}

CredentialSource::CredentialSource(Config config, std::chrono::seconds token_file_period)
    : config_(std::move(config)), token_file_period_(token_file_period) {}

void CredentialSource::invalidate() {
  cached_.reset();
}

Result<Credential> CredentialSource::get(Clock::time_point now) {
  if (cached_ && now < cached_until_) return *cached_;
  Credential cred;
  cred.token = config_.token;
  cred.client_cert_pem = config_.client_cert_pem;
  cred.client_key_pem = config_.client_key_pem;
  Clock::time_point until = Clock::time_point::max();
  if (!config_.token_file.empty()) {
    auto text = read_file(config_.token_file);
    if (!text) {
      // Keep using the last token when a rotation is mid-flight.
      if (cached_) return *cached_;
      return config_error("token file " + config_.token_file +
                          ": cannot read: " + std::strerror(errno));
    }
    cred.token = trim(*text);
    until = now + token_file_period_;
  }
  if (config_.exec) {
    ++exec_runs_;
    auto r = run_exec_plugin(*config_.exec, config_);
    if (!r) return r;
    if (!r->token.empty()) cred.token = r->token;
    if (!r->client_cert_pem.empty()) {
      cred.client_cert_pem = r->client_cert_pem;
      cred.client_key_pem = r->client_key_pem;
    }
    cred.expires = r->expires;
    if (r->expires) until = std::min(until, *r->expires);
  }
  cached_ = cred;
  cached_until_ = until;
  return cred;
}

}  // namespace meshop::kube
