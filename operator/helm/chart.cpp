#include "operator/helm/chart.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "api/yaml.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::helm {
namespace {

using template_engine::List;
using template_engine::Map;
using template_engine::StringMap;
using template_engine::Value;

api::Result<std::string> read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return api::Error{"cannot read " + p.string()};
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const rapidjson::Value* member(const rapidjson::Value& o, const char* name) {
  if (!o.IsObject()) return nullptr;
  auto it = o.FindMember(name);
  return it == o.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& o, const char* name) {
  const rapidjson::Value* v = member(o, name);
  return v != nullptr && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : "";
}

Value string_list(const rapidjson::Value& o, const char* name) {
  auto l = std::make_shared<List>();
  if (const rapidjson::Value* v = member(o, name); v != nullptr && v->IsArray())
    for (const auto& e : v->GetArray())
      if (e.IsString()) l->items.push_back(Value::string(e.GetString()));
  return Value::list(std::move(l));
}

// Helm's Dependency struct through structToMap.
Value dependency_map(const rapidjson::Value& d) {
  auto m = std::make_shared<Map>();
  m->set("Name", Value::string(string_member(d, "name")));
  m->set("Version", Value::string(string_member(d, "version")));
  m->set("Repository", Value::string(string_member(d, "repository")));
  m->set("Condition", Value::string(string_member(d, "condition")));
  m->set("Tags", string_list(d, "tags"));
  const rapidjson::Value* en = member(d, "enabled");
  m->set("Enabled", Value::boolean(en != nullptr && en->IsBool() && en->GetBool()));
  auto iv = std::make_shared<List>();
  if (const rapidjson::Value* v = member(d, "import-values"); v != nullptr && v->IsArray())
    for (const auto& e : v->GetArray())
      iv->items.push_back(template_engine::funcs::from_rapidjson(e));
  m->set("ImportValues", Value::list(std::move(iv)));
  m->set("Alias", Value::string(string_member(d, "alias")));
  return Value::map(std::move(m));
}

// .Chart: every field of Helm's Metadata, as structToMap writes it (zero values included).
Value metadata_map(const rapidjson::Value& doc) {
  auto m = std::make_shared<Map>();
  for (auto [field, key] : {std::pair{"Name", "name"},
                            {"Home", "home"},
                            {"Version", "version"},
                            {"Description", "description"},
                            {"Icon", "icon"},
                            {"APIVersion", "apiVersion"},
                            {"Condition", "condition"},
                            {"Tags", "tags"},
                            {"AppVersion", "appVersion"},
                            {"KubeVersion", "kubeVersion"},
                            {"Type", "type"}})
    m->set(field, Value::string(string_member(doc, key)));
  m->set("Sources", string_list(doc, "sources"));
  m->set("Keywords", string_list(doc, "keywords"));
  const rapidjson::Value* dep = member(doc, "deprecated");
  m->set("Deprecated", Value::boolean(dep != nullptr && dep->IsBool() && dep->GetBool()));
  auto maint = std::make_shared<List>();
  if (const rapidjson::Value* v = member(doc, "maintainers"); v != nullptr && v->IsArray())
    for (const auto& e : v->GetArray()) {
      auto mm = std::make_shared<Map>();
      mm->set("Name", Value::string(string_member(e, "name")));
      mm->set("Email", Value::string(string_member(e, "email")));
      mm->set("URL", Value::string(string_member(e, "url")));
      maint->items.push_back(Value::map(std::move(mm)));
    }
  m->set("Maintainers", Value::list(std::move(maint)));
  if (const rapidjson::Value* v = member(doc, "annotations"); v != nullptr && v->IsObject()) {
    auto sm = std::make_shared<StringMap>();
    for (const auto& e : v->GetObject())
      if (e.value.IsString()) sm->set(e.name.GetString(), e.value.GetString());
    m->set("Annotations", Value::string_map(std::move(sm)));
  } else {
    m->set("Annotations", Value::typed_nil(template_engine::Kind::kStringMap));
  }
  auto deps = std::make_shared<List>();
  if (const rapidjson::Value* v = member(doc, "dependencies"); v != nullptr && v->IsArray())
    for (const auto& e : v->GetArray())
      deps->items.push_back(dependency_map(e));
  m->set("Dependencies", Value::list(std::move(deps)));
  return Value::map(std::move(m));
}

bool is_packaged(std::string_view name) {
  return name.ends_with(".tgz") || name.ends_with(".tar.gz");
}

api::Result<Chart> load(const ChartTree& tree, const std::string& label,
                        const std::string& parent_path) {
  auto chart_yaml = tree.find("Chart.yaml");
  if (chart_yaml == tree.end())
    return api::Error{"chart " + label + ": Chart.yaml file is missing"};
  auto meta = api::yaml_to_json(chart_yaml->second);
  if (!meta) return api::Error{"chart " + label + ": Chart.yaml: " + meta.message()};
  if (!meta->IsObject()) return api::Error{"chart " + label + ": Chart.yaml: not a mapping"};
  Chart c;
  c.name = string_member(*meta, "name");
  c.version = string_member(*meta, "version");
  c.app_version = string_member(*meta, "appVersion");
  c.type = string_member(*meta, "type");
  std::string api_version = string_member(*meta, "apiVersion");
  if (api_version.empty())
    return api::Error{"chart " + label + ": validation: chart.metadata.apiVersion is required"};
  if (api_version != "v1" && api_version != "v2")
    return api::Error{"chart " + label + ": apiVersion '" + api_version +
                      "' is not valid. The value must be either \"v1\" or \"v2\""};
  if (c.name.empty())
    return api::Error{"chart " + label + ": validation: chart.metadata.name is required"};
  if (c.version.empty())
    return api::Error{"chart " + label + ": validation: chart.metadata.version is required"};
  if (c.type != "" && c.type != "application" && c.type != "library")
    return api::Error{"chart " + label +
                      ": validation: chart.metadata.type must be application or library"};
  c.metadata = metadata_map(*meta);
  c.full_path = parent_path.empty() ? c.name : parent_path + "/charts/" + c.name;
  c.is_root = parent_path.empty();

  c.values = Value::map(std::make_shared<Map>());
  if (auto values = tree.find("values.yaml"); values != tree.end()) {
    auto doc = api::yaml_to_json(values->second);
    if (!doc) return api::Error{"chart " + c.name + ": values.yaml: " + doc.message()};
    if (doc->IsObject())
      c.values = template_engine::funcs::from_rapidjson(*doc);
    else if (!doc->IsNull())
      return api::Error{"chart " + c.name + ": values.yaml: not a mapping"};
  }

  // charts/<sub>/...: what is inside a subchart belongs to it (the tree is sorted, so each
  // subchart's files are contiguous and subcharts come in name order).
  std::map<std::string, ChartTree> subcharts;
  for (const auto& [name, data] : tree) {
    if (name.rfind("charts/", 0) == 0) {
      std::string rest = name.substr(7);
      std::size_t slash = rest.find('/');
      if (slash == std::string::npos) {
        if (is_packaged(rest))
          return api::Error{"chart " + c.name + ": " + name +
                            ": packaged subcharts are not supported; unpack it into charts/"};
        continue;
      }
      subcharts[rest.substr(0, slash)].emplace(rest.substr(slash + 1), data);
      continue;
    }
    if (name == "Chart.yaml" || name == "values.yaml" || name == "Chart.lock" ||
        name == "requirements.yaml" || name == "requirements.lock" || name == "values.schema.json")
      continue;
    if (name.rfind("templates/", 0) == 0)
      c.templates.push_back({name, data});
    else
      c.files.push_back({name, data});
  }
  for (const auto& [sub, files] : subcharts) {
    auto loaded = load(files, label + "/charts/" + sub, c.full_path);
    if (!loaded) return api::Error{"chart " + c.name + ": subchart: " + loaded.message()};
    c.dependencies.push_back(std::move(*loaded));
  }
  return c;
}

}  // namespace

std::vector<ChartFile> Chart::crds() const {
  std::vector<ChartFile> out;
  for (const ChartFile& f : files)
    if (f.name.rfind("crds/", 0) == 0) out.push_back(f);
  return out;
}

api::Result<ChartTree> read_chart_tree(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return api::Error{"chart directory " + dir.string() + ": not a directory"};
  ChartTree tree;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    // The walk's own path below `dir` (as Helm names a file, symlinks included); lexical, so
    // no syscalls per file.
    std::string name = it->path().lexically_relative(dir).generic_string();
    // A packaged subchart is refused by load(), by name: no need to read it.
    if (name.rfind("charts/", 0) == 0 && is_packaged(name) &&
        std::count(name.begin(), name.end(), '/') == 1) {
      tree.emplace(std::move(name), std::string());
      continue;
    }
    auto data = read_file(it->path());
    if (!data) return api::Error{"chart " + dir.string() + ": " + data.message()};
    tree.emplace(std::move(name), std::move(*data));
  }
  if (ec) return api::Error{"chart " + dir.string() + ": " + ec.message()};
  return tree;
}

api::Result<Chart> load_chart(const std::filesystem::path& dir) {
  auto tree = read_chart_tree(dir);
  if (!tree) return api::Error{tree.message()};
  return load(*tree, dir.string(), "");
}

api::Result<Chart> load_chart(const ChartTree& files, const std::string& label) {
  return load(files, label, "");
}

}  // namespace meshop::helm
