#include "operator/helm/render.hpp"

#include <algorithm>
#include <unordered_map>

#include "operator/helm/objects.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::helm {
namespace {

using template_engine::Args;
using template_engine::Map;
using template_engine::ParamType;
using template_engine::Result;
using template_engine::TemplateGroup;
using template_engine::Value;

struct Renderable {
  std::string text;
  std::shared_ptr<Map> vals;  // the chart's scope: Chart, Files, Release, Values, ...
  std::string base_path;
};

// recAllTpls: each chart's templates with that chart's scope; subcharts first, so that the
// parent's .Subcharts holds their scopes.
std::shared_ptr<Map> collect(const Chart& c, const Map& parent, bool root,
                             std::map<std::string, Renderable>& out) {
  auto next = std::make_shared<Map>();
  auto meta = std::make_shared<Map>(*c.metadata.as_map());
  meta->set("IsRoot", Value::boolean(root));
  next->set("Chart", Value::map(meta));
  std::map<std::string, std::string> files;
  for (const ChartFile& f : c.files)
    files.emplace(f.name, f.data);
  next->set("Files", detail::make_files(std::move(files)));
  for (const char* k : {"Release", "Capabilities"})
    if (const Value* v = parent.find(k)) next->set(k, *v);
  Value values = Value::map(std::make_shared<Map>());
  const Value* pv = parent.find("Values");
  if (root) {
    if (pv != nullptr) values = *pv;
  } else if (pv != nullptr && pv->kind() == template_engine::Kind::kMap && pv->as_map()) {
    const Value* sub = pv->as_map()->find(c.name);
    if (sub != nullptr && sub->kind() == template_engine::Kind::kMap) values = *sub;
  }
  next->set("Values", values);
  auto subcharts = std::make_shared<Map>();
  next->set("Subcharts", Value::map(subcharts));
  for (const Chart& d : c.dependencies)
    subcharts->set(d.name, Value::map(collect(d, *next, false, out)));
  bool library = c.type == "library";
  for (const ChartFile& t : c.templates) {
    std::string_view base = t.name.substr(t.name.rfind('/') + 1);
    if (library && !base.starts_with("_")) continue;
    out[c.full_path + "/" + t.name] = Renderable{t.data, next, c.full_path + "/templates"};
  }
  return next;
}

// Helm's sortTemplates: deeper paths first, then reverse lexical order, so that the root
// chart's files are parsed last and their definitions win.
std::vector<std::string> parse_order(const std::map<std::string, Renderable>& tpls) {
  std::vector<std::string> keys;
  for (const auto& [k, r] : tpls)
    keys.push_back(k);
  std::sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    auto ca = std::count(a.begin(), a.end(), '/'), cb = std::count(b.begin(), b.end(), '/');
    return ca != cb ? ca > cb : a > b;
  });
  return keys;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += to.size())
    s.replace(p, from.size(), to);
}

// Splits Go's "template: LOCATION: rest" (cleanupParseError / reformatExecErrorMsg).
std::vector<std::string> split_tokens(const std::string& e, std::size_t max) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (out.size() + 1 < max) {
    auto p = e.find(": ", start);
    if (p == std::string::npos) break;
    out.push_back(e.substr(start, p - start));
    start = p + 2;
  }
  out.push_back(e.substr(start));
  return out;
}

std::string parse_error(const std::string& file, const std::string& err) {
  auto tokens = split_tokens(err, std::string::npos);
  if (tokens.size() == 1) return "parse error in (" + file + "): " + err;
  return "parse error at (" + tokens[1] + "): " + tokens.back();
}

std::string exec_error(const std::string& file, const std::string& err) {
  auto tokens = split_tokens(err, 3);
  if (tokens.size() != 3) return "execution error in (" + file + "): " + err;
  auto s = tokens[2].find(kErrStart);
  auto e = tokens[2].rfind(kErrEnd);
  if (s != std::string::npos && e != std::string::npos && e >= s + kErrStart.size())
    return "execution error at (" + tokens[1] +
           "): " + tokens[2].substr(s + kErrStart.size(), e - s - kErrStart.size());
  return err;
}

// include and tpl close over the chart's template group; tpl swaps in its clone while it runs
// so that definitions in the tpl text can be included from it.
struct Binding {
  const TemplateGroup* group = nullptr;
  std::map<std::string, int, std::less<>> included;
  int depth = 0;
};

// fromYaml is a pure function of its text, and charts parse the same text more than once
// (Istio's base chart reads each of its ~1 MB of CRDs with `$crd | fromYaml` twice: once for
// the name, once for the map it relabels). Each distinct text is parsed once per render; every
// call gets its own deep copy, since the result is a Go map the template may `set` into.
class FromYamlMemo {
 public:
  explicit FromYamlMemo(const template_engine::Function& parse) : parse_(parse) {}

  Result<Value> operator()(Args a) {
    std::string_view text = a[0].as_string();
    if (auto it = parsed_.find(text); it != parsed_.end())
      return template_engine::funcs::deep_copy(it->second);
    auto r = parse_.call(a);
    if (!r.ok() || cached_bytes_ + text.size() > kMaxCachedBytes) return r;
    cached_bytes_ += text.size();
    const Value& kept = parsed_.emplace(std::string(text), std::move(r).value()).first->second;
    return template_engine::funcs::deep_copy(kept);
  }

 private:
  // The texts kept as keys: a bound on what a template looping over distinct texts can pin.
  static constexpr std::size_t kMaxCachedBytes = std::size_t{64} << 20;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  const template_engine::Function& parse_;
  std::unordered_map<std::string, Value, Hash, std::equal_to<>> parsed_;
  std::size_t cached_bytes_ = 0;
};

constexpr int kMaxIncludeDepth = 1000;  // Helm's recursionMaxNums

}  // namespace

api::Result<Rendered> render(const Chart& chart, const Value& overrides,
                             const ReleaseOptions& release, const Capabilities& capabilities) {
  auto top = std::make_shared<Map>();
  auto rel = std::make_shared<Map>();
  rel->set("Name", Value::string(release.name));
  rel->set("Namespace", Value::string(release.namespace_));
  rel->set("IsUpgrade", Value::boolean(release.is_upgrade));
  rel->set("IsInstall", Value::boolean(release.is_install));
  rel->set("Revision", Value::integer(release.revision));
  rel->set("Service", Value::string("Helm"));
  top->set("Release", Value::map(rel));
  top->set("Capabilities", detail::make_capabilities(capabilities));
  top->set("Values", coalesce_values(chart, overrides));

  std::map<std::string, Renderable> tpls;
  collect(chart, *top, true, tpls);

  auto binding = std::make_shared<Binding>();
  template_engine::FunctionMap fm = helm_functions();
  const ParamType kStr = ParamType::string(), kAny = ParamType::any();
  Binding* b = binding.get();
  fm.add("include", {{kStr, kAny}}, [b](Args a) -> Result<Value> {
    std::string name(a[0].as_string());
    int& n = b->included[name];
    if (n > kMaxIncludeDepth || b->depth > kMaxIncludeDepth)
      return template_engine::fail("rendering template has a nested reference name: " + name +
                                   ": unable to execute template");
    ++n;
    ++b->depth;
    auto out = b->group->execute_template(name, a[1]);
    --b->depth;
    --b->included[name];
    if (!out.ok()) return template_engine::fail(out.error());
    return Value::string(std::move(out).value());
  });
  fm.add("tpl", {{kStr, kAny}}, [b](Args a) -> Result<Value> {
    TemplateGroup clone = *b->group;
    std::string text(a[0].as_string());
    if (auto st = clone.add("gotpl", text); !st)
      return template_engine::fail("cannot parse template " + template_engine::go_quote(text) +
                                   ": " + st.message());
    if (!clone.has_template("gotpl")) return Value::string("");
    if (b->depth > kMaxIncludeDepth)
      return template_engine::fail(
          "rendering template has a nested reference name: gotpl: "
          "unable to execute template");
    const TemplateGroup* saved = b->group;
    b->group = &clone;
    ++b->depth;
    auto out = clone.execute_template("gotpl", a[1]);
    --b->depth;
    b->group = saved;
    if (!out.ok())
      return template_engine::fail("error during tpl function execution for " +
                                   template_engine::go_quote(text) + ": " + out.message());
    std::string s = std::move(out).value();
    replace_all(s, "<no value>", "");
    return Value::string(std::move(s));
  });

  if (const template_engine::Function* parse = helm_functions().find("fromYaml")) {
    auto memo = std::make_shared<FromYamlMemo>(*parse);
    fm.add("fromYaml", parse->signature(), [memo](Args a) { return (*memo)(a); });
  }

  TemplateGroup group(std::move(fm));
  b->group = &group;
  std::vector<std::string> keys = parse_order(tpls);
  for (const std::string& k : keys)
    if (auto st = group.add(k, tpls[k].text); !st) return api::Error{parse_error(k, st.message())};

  Rendered out;
  for (const std::string& k : keys) {
    std::string_view base = std::string_view(k).substr(k.rfind('/') + 1);
    if (base.starts_with("_")) continue;
    const Renderable& r = tpls[k];
    // The chart's scope map itself, as Helm passes it: Istio's zzz_profile.yaml runs first
    // (reverse lexical order) and `set`s .Values on it for every later file of the chart.
    const std::shared_ptr<Map>& data = r.vals;
    auto tmpl = std::make_shared<Map>();
    tmpl->set("Name", Value::string(k));
    tmpl->set("BasePath", Value::string(r.base_path));
    data->set("Template", Value::map(tmpl));
    if (!group.has_template(k)) {  // a file of only whitespace, comments and defines
      out.templates[k] = "";
      continue;
    }
    auto text = group.execute_template(k, Value::map(data));
    if (!text.ok()) return api::Error{exec_error(k, text.message())};
    std::string s = std::move(text).value();
    replace_all(s, "<no value>", "");
    out.templates[k] = std::move(s);
  }
  std::vector<const Chart*> stack{&chart};
  while (!stack.empty()) {
    const Chart* c = stack.back();
    stack.pop_back();
    for (const ChartFile& f : c->crds())
      out.crds[c->full_path + "/" + f.name] = f.data;
    for (const Chart& d : c->dependencies)
      stack.push_back(&d);
  }
  return out;
}

}  // namespace meshop::helm
