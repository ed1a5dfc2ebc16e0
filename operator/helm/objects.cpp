#include "operator/helm/objects.hpp"

#include "api/base64.hpp"
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/functions.hpp"

namespace meshop::helm::detail {
namespace {

using template_engine::Args;
using template_engine::Function;
using template_engine::Kind;
using template_engine::List;
using template_engine::Map;
using template_engine::Object;
using template_engine::ParamType;
using template_engine::Result;
using template_engine::StringMap;
using template_engine::Value;

std::string_view base_name(std::string_view p) {
  auto slash = p.rfind('/');
  return slash == std::string_view::npos ? p : p.substr(slash + 1);
}

class Files final : public Object, public std::enable_shared_from_this<Files> {
 public:
  explicit Files(std::map<std::string, std::string> f) : files_(std::move(f)) {}
  std::string_view go_type() const override { return "engine.files"; }
  std::string_view go_kind() const override { return "map"; }
  void format(std::string& out, bool, bool) const override {
    out += "map[";
    bool first = true;
    for (const auto& [k, v] : files_) {
      if (!first) out += ' ';
      first = false;
      out += k + ":[";
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) out += ' ';
        out += std::to_string(static_cast<unsigned char>(v[i]));
      }
      out += ']';
    }
    out += ']';
  }
  std::optional<Function> method(std::string_view name) const override {
    auto self = shared_from_this();
    if (name == "Get" || name == "GetBytes")  // GetBytes' []byte prints as a string here
      return Function({{ParamType::string()}}, [self](Args a) -> Result<Value> {
        auto it = self->files_.find(std::string(a[0].as_string()));
        return Value::string(it == self->files_.end() ? "" : it->second);
      });
    if (name == "Glob")
      return Function({{ParamType::string()}}, [self](Args a) -> Result<Value> {
        std::map<std::string, std::string> hits;
        for (const auto& [k, v] : self->files_)
          if (glob_match(a[0].as_string(), k)) hits.emplace(k, v);
        return make_files(std::move(hits));
      });
    if (name == "AsConfig" || name == "AsSecrets") {
      bool secrets = name == "AsSecrets";
      return Function({}, [self, secrets](Args) -> Result<Value> {
        if (self->files_.empty()) return Value::string("");
        auto m = std::make_shared<StringMap>();
        for (const auto& [k, v] : self->files_)
          m->set(base_name(k), secrets ? api::base64_encode(v) : v);
        return Value::string(to_yaml(Value::string_map(std::move(m))));
      });
    }
    if (name == "Lines")
      return Function({{ParamType::string()}}, [self](Args a) -> Result<Value> {
        auto l = std::make_shared<List>(std::vector<Value>{}, "string");
        auto it = self->files_.find(std::string(a[0].as_string()));
        if (it == self->files_.end()) return Value::list(std::move(l));
        std::string_view s = it->second;
        if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
        for (;;) {
          auto nl = s.find('\n');
          l->items.push_back(Value::string(std::string(s.substr(0, nl))));
          if (nl == std::string_view::npos) break;
          s.remove_prefix(nl + 1);
        }
        return Value::list(std::move(l));
      });
    return std::nullopt;
  }

 private:
  std::map<std::string, std::string> files_;
};

class KubeVersion final : public Object {
 public:
  KubeVersion(std::string v, std::string major, std::string minor)
      : version_(std::move(v)), major_(std::move(major)), minor_(std::move(minor)) {}
  std::string_view go_type() const override { return "common.KubeVersion"; }
  std::string_view go_kind() const override { return "struct"; }
  void format(std::string& out, bool, bool) const override {
    out += "{" + version_ + " " + version_ + " " + major_ + " " + minor_ + "}";
  }
  std::optional<Value> field(std::string_view name) const override {
    if (name == "Version") return Value::string(version_);
    if (name == "Major") return Value::string(major_);
    if (name == "Minor") return Value::string(minor_);
    return std::nullopt;
  }
  std::optional<Function> method(std::string_view name) const override {
    if (name == "String" || name == "GitVersion") {
      std::string v = version_;
      return Function({}, [v](Args) -> Result<Value> { return Value::string(v); });
    }
    return std::nullopt;
  }

 private:
  std::string version_, major_, minor_;
};

class VersionSet final : public Object {
 public:
  explicit VersionSet(std::vector<std::string> v) : versions_(std::move(v)) {}
  std::string_view go_type() const override { return "common.VersionSet"; }
  std::string_view go_kind() const override { return "slice"; }
  void format(std::string& out, bool, bool) const override {
    out += '[';
    for (std::size_t i = 0; i < versions_.size(); ++i)
      out += (i ? " " : "") + versions_[i];
    out += ']';
  }
  std::optional<Function> method(std::string_view name) const override {
    if (name != "Has") return std::nullopt;
    auto v = versions_;
    return Function({{ParamType::string()}}, [v](Args a) -> Result<Value> {
      for (const auto& e : v)
        if (e == a[0].as_string()) return Value::boolean(true);
      return Value::boolean(false);
    });
  }

 private:
  std::vector<std::string> versions_;
};

// One glob element at a time; `sep` stops `*` and `?`.
bool match_from(std::string_view p, std::string_view s) {
  while (!p.empty()) {
    char c = p[0];
    if (c == '*') {
      bool super = p.size() > 1 && p[1] == '*';
      std::string_view rest = p.substr(super ? 2 : 1);
      for (std::size_t i = 0; i <= s.size(); ++i) {
        if (match_from(rest, s.substr(i))) return true;
        if (i < s.size() && !super && s[i] == '/') return false;
      }
      return false;
    }
    if (c == '{') {
      // Alternatives up to the matching '}' (no nesting in Helm's patterns we accept).
      auto close = p.find('}');
      if (close == std::string_view::npos) return false;
      std::string_view alts = p.substr(1, close - 1), rest = p.substr(close + 1);
      for (;;) {
        auto comma = alts.find(',');
        std::string alt(alts.substr(0, comma));
        if (match_from(alt + std::string(rest), s)) return true;
        if (comma == std::string_view::npos) return false;
        alts.remove_prefix(comma + 1);
      }
    }
    if (s.empty()) return false;
    if (c == '?') {
      if (s[0] == '/') return false;
    } else if (c == '[') {
      auto close = p.find(']', 1);
      if (close == std::string_view::npos) return false;
      std::string_view cls = p.substr(1, close - 1);
      bool negate = !cls.empty() && cls[0] == '!';
      if (negate) cls.remove_prefix(1);
      bool hit = false;
      for (std::size_t i = 0; i < cls.size(); ++i) {
        if (i + 2 < cls.size() && cls[i + 1] == '-') {
          hit = hit || (s[0] >= cls[i] && s[0] <= cls[i + 2]);
          i += 2;
        } else {
          hit = hit || s[0] == cls[i];
        }
      }
      if (hit == negate || s[0] == '/') return false;
      p = p.substr(close + 1);
      s.remove_prefix(1);
      continue;
    } else {
      if (c == '\\' && p.size() > 1) {
        p.remove_prefix(1);
        c = p[0];
      }
      if (s[0] != c) return false;
    }
    p.remove_prefix(1);
    s.remove_prefix(1);
  }
  return s.empty();
}

}  // namespace

Value make_files(std::map<std::string, std::string> files) {
  return Value::object(std::make_shared<Files>(std::move(files)));
}

Value make_capabilities(const Capabilities& caps) {
  // ParseKubeVersion: "v1.36.0" -> Major "1", Minor "36".
  std::string v = caps.kube_version;
  std::string_view s = v;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  auto dot = s.find('.');
  std::string major(s.substr(0, dot)), minor;
  if (dot != std::string_view::npos) {
    std::string_view r = s.substr(dot + 1);
    std::size_t n = 0;
    while (n < r.size() && r[n] >= '0' && r[n] <= '9')
      ++n;
    minor = std::string(r.substr(0, n));
  }
  auto m = std::make_shared<Map>();
  m->set("KubeVersion", Value::object(std::make_shared<KubeVersion>(v, major, minor)));
  m->set("APIVersions", Value::object(std::make_shared<VersionSet>(caps.api_versions)));
  auto hv = std::make_shared<Map>();
  hv->set("Version", Value::string("v4.2.0"));
  m->set("HelmVersion", Value::map(std::move(hv)));
  return Value::map(std::move(m));
}

bool glob_match(std::string_view pattern, std::string_view name) {
  return match_from(pattern, name);
}

std::string to_yaml(const Value& v) {
  // Istio's injection toYaml is sigs.k8s.io/yaml.Marshal as is; Helm trims the newline.
  static const template_engine::Function istio_to_yaml = [] {
    template_engine::FunctionMap fm;
    template_engine::add_istio_functions(fm);
    return *fm.find("toYaml");
  }();
  Value arg = v;
  auto r = istio_to_yaml.call(template_engine::Args(&arg, 1));
  if (!r.ok()) return "";
  std::string out(r->as_string());
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace meshop::helm::detail
