#include "operator/template/template.hpp"

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

std::optional<std::string> Template::execute_into(std::string& out, const Value& data,
                                                  const ExecOptions& options) const {
  std::size_t before = out.size();
  auto err = detail::execute_set(set_, set_->name, data, out, options);
  if (err) out.resize(before);
  return err;
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
  out.reserve(4096);
  if (auto err = detail::execute_set(set_, template_name, data, out, options)) return fail(*err);
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
