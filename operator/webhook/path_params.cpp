#include "operator/webhook/path_params.hpp"

#include <algorithm>
#include <map>

namespace meshop::webhook {
namespace {

constexpr std::string_view kPrefix = "/inject";
constexpr std::string_view kDeprecatedEnv = ":ENV:";
constexpr std::string_view kSlash = "--slash--";

std::vector<std::string> split(std::string_view text, std::string_view sep) {
  std::vector<std::string> parts;
  for (;;) {
    auto at = text.find(sep);
    if (at == std::string_view::npos) {
      parts.emplace_back(text);
      return parts;
    }
    parts.emplace_back(text.substr(0, at));
    text.remove_prefix(at + sep.size());
  }
}

std::string replace_all(std::string value, std::string_view from, std::string_view to) {
  for (size_t at = value.find(from); at != std::string::npos; at = value.find(from, at + to.size()))
    value.replace(at, from.size(), to);
  return value;
}

std::string env_name(const std::string& key) {
  if (key == "cluster") return "ISTIO_META_CLUSTER_ID";
  if (key == "net") return "ISTIO_META_NETWORK";
  std::string upper = key;
  // Go's strings.ToUpper on ASCII; non-ASCII bytes are left as they are (such keys cannot be
  // valid env names anyway, and upstream would pass them on just the same).
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return c >= 'a' && c <= 'z' ? char(c - 32) : char(c); });
  return upper;
}

}  // namespace

bool is_inject_path(std::string_view path) {
  return path == kPrefix || path.starts_with("/inject/");
}

InjectPath parse_inject_path(std::string_view path) {
  InjectPath out;
  if (path.ends_with('/')) path.remove_suffix(1);
  if (!path.starts_with("/inject/")) return out;
  std::string_view rest = path.substr(kPrefix.size() + 1);

  std::vector<std::string> items;
  if (rest.starts_with(kDeprecatedEnv)) {
    auto pairs = split(rest, kDeprecatedEnv);
    for (size_t i = 1; i < pairs.size(); ++i) {  // pairs[0] is the empty text before ":ENV:"
      auto eq = pairs[i].find('=');
      if (eq == std::string::npos || eq == 0) continue;
      items.push_back(pairs[i].substr(0, eq));
      items.push_back(pairs[i].substr(eq + 1));
    }
  } else {
    items = split(rest, "/");
    for (size_t i = 1; i < items.size(); i += 2)
      items[i] = replace_all(items[i], kSlash, "/");
  }

  std::map<std::string, std::string> envs;
  for (size_t i = 0; i < items.size(); i += 2) {
    if (i + 1 == items.size()) {
      out.ignored_keys.push_back(items[i]);
      break;
    }
    if (items[i] == "rev") {
      out.revision = items[i + 1];
      continue;
    }
    std::string name = env_name(items[i]);
    if (!name.empty()) envs[name] = items[i + 1];
  }
  out.envs.assign(envs.begin(), envs.end());
  return out;
}

}  // namespace meshop::webhook
