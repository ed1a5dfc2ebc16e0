#include "operator/template/template.hpp"

#include <algorithm>

#include "operator/template/template_set.hpp"

namespace meshop::template_engine {

Template::Template(std::shared_ptr<const detail::TemplateSet> set) : set_(std::move(set)) {}
Template::~Template() = default;

Result<std::shared_ptr<const Template>> Template::parse(std::string name, std::string_view text,
                                                        const FunctionMap& functions) {
  auto set = detail::parse_set(std::move(name), text, functions);
  if (!set.ok()) return fail(set.error());
  return std::make_shared<const Template>(std::move(set).value());
}

Result<std::shared_ptr<const Template>> Template::parse(std::string name, std::string_view text) {
  return parse(std::move(name), text, default_functions());
}

api::Status Template::execute_into(std::string& out, const Value& data,
                                   const ExecOptions& options) const {
  std::size_t before = out.size();
  auto st = detail::execute_set(set_, set_->name, data, out, options);
  if (!st) out.resize(before);
  return st;
}

Result<std::string> Template::execute(const Value& data) const {
  return execute_template(set_->name, data);
}

Result<std::string> Template::execute(const Value& data, const ExecOptions& options) const {
  return execute_template(set_->name, data, options);
}

Result<std::string> Template::execute_template(std::string_view template_name, const Value& data,
                                               const ExecOptions& options) const {
  std::string out;
  out.reserve(std::max<std::size_t>(4096, set_->output_hint.load(std::memory_order_relaxed)));
  if (auto st = detail::execute_set(set_, template_name, data, out, options); !st)
    return std::move(st).error();
  // A little more than this output (the next one may be a few bytes longer), at most 1 MiB.
  set_->output_hint.store(std::min<std::size_t>(out.size() + out.size() / 16, 1u << 20),
                          std::memory_order_relaxed);
  return out;
}

const std::string& Template::name() const {
  return set_->name;
}

std::vector<std::string> Template::template_names() const {
  std::vector<std::string> names;
  for (const auto& [n, t] : set_->trees)
    names.push_back(n);
  return names;
}

bool Template::has_template(std::string_view name) const {
  return set_->trees.find(name) != set_->trees.end();
}

}  // namespace meshop::template_engine

namespace meshop::template_engine {

struct TemplateGroup::State {
  FunctionMap funcs;
  detail::TreeIndex index;
};

TemplateGroup::TemplateGroup(FunctionMap functions) : state_(std::make_shared<State>()) {
  state_->funcs = std::move(functions);
}
TemplateGroup::~TemplateGroup() = default;
TemplateGroup::TemplateGroup(const TemplateGroup& o) : state_(std::make_shared<State>(*o.state_)) {}
TemplateGroup& TemplateGroup::operator=(const TemplateGroup& o) {
  if (this != &o) state_ = std::make_shared<State>(*o.state_);
  return *this;
}

api::Status TemplateGroup::add(std::string name, std::string_view text) {
  auto set = detail::parse_set(std::move(name), text, state_->funcs);
  if (!set.ok()) return std::move(set).error();
  std::shared_ptr<const detail::TemplateSet> shared = std::move(set).value();
  for (const auto& [n, root] : shared->trees) {
    auto it = state_->index.find(n);
    if (it != state_->index.end() && detail::is_empty_tree(root) &&
        !detail::is_empty_tree(it->second.root))
      continue;
    state_->index.insert_or_assign(n, detail::TreeRef{shared, root});
  }
  return api::ok_status();
}

Result<std::string> TemplateGroup::execute_template(std::string_view name, const Value& data,
                                                    const ExecOptions& options) const {
  auto it = state_->index.find(name);
  if (it == state_->index.end())
    return fail("template: no template " + go_quote(name) + " associated with template " +
                go_quote("gotpl"));
  std::string out;
  if (auto st = detail::execute_set(it->second.set, name, data, out, options, &state_->index); !st)
    return std::move(st).error();
  return out;
}

bool TemplateGroup::has_template(std::string_view name) const {
  return state_->index.find(name) != state_->index.end();
}

const FunctionMap& TemplateGroup::functions() const {
  return state_->funcs;
}

}  // namespace meshop::template_engine
