// `meshop tag set|list|remove|generate`: revision tags, as `istioctl tag` manages them
// (operator/manifest/tag.hpp has the configuration they write).
//
//   meshop tag generate TAG --revision R     the tag's MutatingWebhookConfiguration as YAML
//   meshop tag set TAG --revision R [--overwrite]
//   meshop tag list
//   meshop tag remove TAG...
//
// The revision's own injector configuration (labelled istio.io/rev=R, no istio.io/tag; the one
// named istio-sidecar-injector[-R] when there are several) is read from the cluster and copied.
// The tag's configuration is named istio-revision-tag-<tag>, with -<ns> when the Istio
// namespace (-i/--istioNamespace, else the one the revision's configuration was rendered for)
// is not istio-system, as the chart names it. `list` and `remove` go by the istio.io/tag
// label, so they find a tag under either name; `set` replaces a tag's configuration of the
// other name. `set` refuses a tag that names an existing revision, or that already points at
// another revision, unless --overwrite. Setting `default` also deactivates the default revision's
// own configuration (never-match selectors), so the legacy labels reach the tag's revision only.
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "api/json.hpp"
#include "api/mesh_conventions.hpp"
#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/cluster.hpp"
#include "operator/cli/commands.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/config.hpp"
#include "operator/manifest/tag.hpp"

namespace meshop::cli {
namespace {

struct TagOptions {
  std::string kubeconfig, context;
  std::string revision;
  std::string istio_namespace;  // "": the revision configuration's own
  bool overwrite = false;
  std::vector<std::string> tags;
};

using Task = kube::Task<int>;

std::string revision_label(const rapidjson::Value& o) {
  return api::string_at(o, {"metadata", "labels", std::string(manifest::kRevisionLabel)});
}
std::string tag_label(const rapidjson::Value& o) {
  return api::string_at(o, {"metadata", "labels", std::string(manifest::kTagLabel)});
}
std::string name_of(const rapidjson::Value& o) {
  return api::string_at(o, {"metadata", "name"});
}

// The revision's own configuration among `items`, or null.
const rapidjson::Value* revision_webhook(const rapidjson::Value& items, const std::string& rev) {
  std::string preferred = api::revision_webhook_name(rev);
  const rapidjson::Value* found = nullptr;
  for (const rapidjson::Value& m : items.GetArray()) {
    if (revision_label(m) != rev || !tag_label(m).empty()) continue;
    if (name_of(m) == preferred) return &m;
    if (found == nullptr || name_of(m) < name_of(*found)) found = &m;
  }
  return found;
}

rapidjson::Document with_kind(const rapidjson::Value& item) {
  rapidjson::Document d;
  d.CopyFrom(item, d.GetAllocator());
  if (!d.HasMember("apiVersion"))
    d.AddMember("apiVersion", "admissionregistration.k8s.io/v1", d.GetAllocator());
  if (!d.HasMember("kind")) d.AddMember("kind", "MutatingWebhookConfiguration", d.GetAllocator());
  return d;
}

Task generate_or_set(std::shared_ptr<kube::Client> client, TagOptions o, bool apply,
                     std::ostream* out, std::ostream* err) {
  const std::string tag = o.tags.front();
  auto list = co_await client->list_all(kube::resources::kMutatingWebhookConfigurations, "");
  if (!list) {
    *err << "Error: " << list.error().message << '\n';
    co_return kExitError;
  }
  const rapidjson::Value& items = list->list["items"];
  const rapidjson::Value* source = revision_webhook(items, o.revision);
  if (source == nullptr) {
    *err << "Error: no injector configuration of revision \"" << o.revision
         << "\" (a MutatingWebhookConfiguration labelled istio.io/rev=" << o.revision
         << " without istio.io/tag)\n";
    co_return kExitError;
  }
  auto generated = manifest::generate_tag_webhook(*source, tag, o.revision, o.istio_namespace);
  if (!generated) {
    *err << "Error: " << generated.message() << '\n';
    co_return kExitError;
  }
  if (!apply) {
    *out << api::json_to_yaml(*generated);
    co_return kExitOk;
  }
  const std::string name = name_of(*generated);
  const rapidjson::Value* existing = nullptr;
  std::vector<std::string> renamed;  // the tag's configurations under another name
  for (const rapidjson::Value& m : items.GetArray()) {
    if (revision_label(m) == tag && tag_label(m).empty() && !o.overwrite) {
      *err << "Error: revision tag \"" << tag << "\" would shadow revision \"" << tag
           << "\" (mutatingwebhookconfiguration " << name_of(m)
           << "); use --overwrite to set it anyway\n";
      co_return kExitError;
    }
    if (name_of(m) == name) {
      existing = &m;
    } else if (tag_label(m) == tag) {
      renamed.push_back(name_of(m));
    }
    if (tag_label(m) == tag && revision_label(m) != o.revision && !o.overwrite) {
      *err << "Error: revision tag \"" << tag << "\" already points at revision \""
           << revision_label(m) << "\"; use --overwrite to move it\n";
      co_return kExitError;
    }
  }
  if (existing == nullptr) {
    auto created =
        co_await client->create(kube::resources::kMutatingWebhookConfigurations, "", *generated);
    if (!created) {
      *err << "Error: " << created.error().message << '\n';
      co_return kExitError;
    }
  } else {
    auto& a = generated->GetAllocator();
    (*generated)["metadata"].AddMember(
        "resourceVersion",
        api::make_string(api::string_at(*existing, {"metadata", "resourceVersion"}), a), a);
    auto updated =
        co_await client->update(kube::resources::kMutatingWebhookConfigurations, *generated);
    if (!updated) {
      *err << "Error: " << updated.error().message << '\n';
      co_return kExitError;
    }
  }
  *out << "revision tag \"" << tag << "\" -> revision \"" << o.revision << "\" ("
       << (existing == nullptr ? "created" : "updated") << " mutatingwebhookconfiguration " << name
       << ")\n";
  for (const std::string& other : renamed) {
    auto removed =
        co_await client->remove(kube::resources::kMutatingWebhookConfigurations, "", other);
    if (!removed) {
      *err << "Error: removing the tag's old configuration " << other << ": "
           << removed.error().message << '\n';
      co_return kExitError;
    }
    *out << "removed mutatingwebhookconfiguration " << other << " (the tag's old name)\n";
  }
  if (tag == "default") {
    const rapidjson::Value* old_default = revision_webhook(items, "default");
    if (old_default != nullptr && !manifest::is_deactivated(*old_default)) {
      rapidjson::Document deactivated = manifest::deactivate_webhook(with_kind(*old_default));
      auto updated =
          co_await client->update(kube::resources::kMutatingWebhookConfigurations, deactivated);
      if (!updated) {
        *err << "Error: deactivating " << name_of(*old_default) << ": " << updated.error().message
             << '\n';
        co_return kExitError;
      }
      *out << "deactivated mutatingwebhookconfiguration " << name_of(*old_default)
           << " (its selectors never match now)\n";
    }
  }
  co_return kExitOk;
}

Task list_tags(std::shared_ptr<kube::Client> client, std::ostream* out, std::ostream* err) {
  auto list = co_await client->list_all(kube::resources::kMutatingWebhookConfigurations, "");
  if (!list) {
    *err << "Error: " << list.error().message << '\n';
    co_return kExitError;
  }
  auto namespaces = co_await client->list_all(kube::resources::kNamespaces, "");
  if (!namespaces) {
    *err << "Error: " << namespaces.error().message << '\n';
    co_return kExitError;
  }
  std::map<std::string, std::string> tags;  // tag → revision
  for (const rapidjson::Value& m : list->list["items"].GetArray())
    if (!tag_label(m).empty()) tags[tag_label(m)] = revision_label(m);
  if (tags.empty()) {
    *out << "No revision tags.\n";
    co_return kExitOk;
  }
  std::vector<std::vector<std::string>> rows = {{"TAG", "REVISION", "NAMESPACES"}};
  for (const auto& [tag, rev] : tags) {
    std::string used;
    for (const rapidjson::Value& n : namespaces->list["items"].GetArray())
      if (api::string_at(n, {"metadata", "labels", "istio.io/rev"}) == tag)
        used += (used.empty() ? "" : ",") + name_of(n);
    rows.push_back({tag, rev, used.empty() ? "-" : used});
  }
  std::size_t w0 = 0, w1 = 0;
  for (const auto& r : rows) {
    w0 = std::max(w0, r[0].size());
    w1 = std::max(w1, r[1].size());
  }
  for (const auto& r : rows)
    *out << r[0] << std::string(w0 - r[0].size() + 3, ' ') << r[1]
         << std::string(w1 - r[1].size() + 3, ' ') << r[2] << '\n';
  co_return kExitOk;
}

Task remove_tags(std::shared_ptr<kube::Client> client, std::vector<std::string> tags,
                 std::ostream* out, std::ostream* err) {
  auto list = co_await client->list_all(kube::resources::kMutatingWebhookConfigurations, "");
  if (!list) {
    *err << "Error: " << list.error().message << '\n';
    co_return kExitError;
  }
  int rc = kExitOk;
  for (const std::string& tag : tags) {
    // By label, as istioctl's DeleteTagWebhooks: istio-revision-tag-<tag> and -<tag>-<ns>.
    std::vector<std::string> names;
    for (const rapidjson::Value& m : list->list["items"].GetArray())
      if (tag_label(m) == tag) names.push_back(name_of(m));
    if (names.empty()) {
      *err << "Error: revision tag \"" << tag << "\": not found (no "
           << "mutatingwebhookconfiguration labelled istio.io/tag=" << tag << ")\n";
      rc = kExitError;
      continue;
    }
    for (const std::string& name : names) {
      auto removed =
          co_await client->remove(kube::resources::kMutatingWebhookConfigurations, "", name);
      if (!removed) {
        *err << "Error: revision tag \"" << tag << "\": " << removed.error().message << '\n';
        rc = kExitError;
        continue;
      }
      *out << "removed revision tag \"" << tag << "\" (mutatingwebhookconfiguration " << name
           << ")\n";
    }
  }
  co_return rc;
}

// Runs `make(client)` to completion with a client for the options' kubeconfig.
template <class Make>
int with_client(const TagOptions& o, std::ostream& err, Make make) {
  boost::asio::io_context ioc;
  auto client = connect(ioc.get_executor(), o.kubeconfig, o.context, err);
  if (!client) return kExitError;
  int rc = kExitError;
  std::exception_ptr failure;
  boost::asio::co_spawn(ioc, make(client), [&](std::exception_ptr e, int r) {
    failure = e;
    rc = r;
  });
  ioc.run();
  if (failure) {
    try {
      std::rethrow_exception(failure);
    } catch (const std::exception& e) {
      err << "Error: " << e.what() << '\n';
    }
    return kExitError;
  }
  return rc;
}

void add_cluster_flags(CLI::App* cmd, TagOptions* o) {
  cmd->add_option("--kubeconfig", o->kubeconfig, "Kubeconfig file (default: $KUBECONFIG)");
  cmd->add_option("--context", o->context, "Kubeconfig context");
}

}  // namespace

void add_tag_command(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand("tag", "Manage revision tags (istio.io/rev aliases)");
  group->require_subcommand(1);

  for (bool apply : {false, true}) {
    auto o = std::make_shared<TagOptions>();
    CLI::App* cmd = apply ? group->add_subcommand("set", "Point a revision tag at a revision")
                          : group->add_subcommand(
                                "generate", "Print the webhook configuration of a tag (YAML only)");
    cmd->add_option("tag", o->tags, "The tag")->required()->expected(1);
    cmd->add_option("-r,--revision", o->revision, "The revision the tag points at")->required();
    cmd->add_option("-i,--istioNamespace", o->istio_namespace,
                    "Istio namespace; the tag's configuration is istio-revision-tag-<tag>-<ns> "
                    "outside istio-system (default: the revision configuration's namespace)");
    if (apply)
      cmd->add_flag("--overwrite", o->overwrite,
                    "Move an existing tag, or shadow a revision of the same name");
    add_cluster_flags(cmd, o.get());
    cmd->callback([&ctx, o, apply] {
      ctx.action = [&ctx, o, apply] {
        return with_client(*o, ctx.err, [&](std::shared_ptr<kube::Client> c) {
          return generate_or_set(std::move(c), *o, apply, &ctx.out, &ctx.err);
        });
      };
    });
  }

  auto lo = std::make_shared<TagOptions>();
  CLI::App* list =
      group->add_subcommand("list", "List revision tags and the namespaces using them");
  add_cluster_flags(list, lo.get());
  list->callback([&ctx, lo] {
    ctx.action = [&ctx, lo] {
      return with_client(*lo, ctx.err, [&](std::shared_ptr<kube::Client> c) {
        return list_tags(std::move(c), &ctx.out, &ctx.err);
      });
    };
  });

  auto ro = std::make_shared<TagOptions>();
  CLI::App* remove = group->add_subcommand("remove", "Remove revision tags");
  remove->add_option("tags", ro->tags, "Tags to remove")->required();
  add_cluster_flags(remove, ro.get());
  remove->callback([&ctx, ro] {
    ctx.action = [&ctx, ro] {
      return with_client(*ro, ctx.err, [&](std::shared_ptr<kube::Client> c) {
        return remove_tags(std::move(c), ro->tags, &ctx.out, &ctx.err);
      });
    };
  });
}

}  // namespace meshop::cli
