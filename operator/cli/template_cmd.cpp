// `meshop template render -t TEMPLATE_FILE [-d DATA_FILE]`: renders a Go text/template with
// sprig and Istio functions over JSON or YAML data, as Go's text/template would.
//
// Data is read with the typing of sigs.k8s.io/yaml (JSON is YAML), and numbers become
// float64 as in `map[string]any`. Output goes to stdout only when rendering succeeded; a
// parse or execution error prints Go's message on stderr and exits 1 with nothing on stdout.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "api/yaml.hpp"
#include "operator/cli/cli.hpp"
#include "operator/cli/commands.hpp"
#include "operator/template/funcs_support.hpp"
#include "operator/template/template.hpp"

namespace meshop::cli {
namespace {

struct RenderOptions {
  std::string template_file;
  std::string data_file;
};

bool read_file(const std::string& path, std::string& text, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "Error: cannot read " << (path.empty() ? "\"\"" : path)
        << ": no such file or not readable\n";
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

int render(const RenderOptions& opts, Context& ctx) {
  namespace te = template_engine;
  std::string text;
  if (!read_file(opts.template_file, text, ctx.err)) return kExitError;

  te::Value data;  // no data: Execute(w, nil) gives an invalid dot
  if (!opts.data_file.empty()) {
    std::string raw;
    if (!read_file(opts.data_file, raw, ctx.err)) return kExitError;
    auto doc = api::yaml_to_json(raw);
    if (!doc.ok()) {
      ctx.err << "Error: data file " << opts.data_file << ": " << doc.message() << '\n';
      return kExitError;
    }
    data = te::funcs::from_rapidjson(*doc);
  }

  // Go names the template after the file (template.ParseFiles uses the base name).
  std::string name = opts.template_file;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos)
    name = name.substr(slash + 1);
  auto tmpl = te::Template::parse(name, text);
  if (!tmpl.ok()) {
    ctx.err << tmpl.message() << '\n';
    return kExitError;
  }
  auto out = (*tmpl)->execute(data);
  if (!out.ok()) {
    ctx.err << out.message() << '\n';
    return kExitError;
  }
  ctx.out << *out;
  return kExitOk;
}

}  // namespace

void add_template_command(CLI::App& root, Context& ctx) {
  auto* group = root.add_subcommand("template", "Commands under 'template'");
  group->require_subcommand(1);
  auto* cmd = group->add_subcommand(
      "render",
      "Render a Go text/template (with sprig and Istio functions) over JSON or YAML data.\n"
      "Output goes to stdout; on a parse or execution error the message goes to stderr,\n"
      "nothing is printed on stdout, and the exit code is 1.");
  auto opts = std::make_shared<RenderOptions>();
  cmd->add_option("-t,--template", opts->template_file, "Template file")->required();
  cmd->add_option("-d,--data", opts->data_file,
                  "Data file, JSON or YAML (the template's dot); none: dot is nil");
  cmd->callback([&ctx, opts] { ctx.action = [&ctx, opts] { return render(*opts, ctx); }; });
}

}  // namespace meshop::cli
