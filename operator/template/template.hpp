// A parsed Go text/template, executable many times and from many threads at once.
//
//   auto t = Template::parse("inject", text);              // sprig + Istio functions
//   if (!t) { report(t.message()); }                        // "template: inject:3: ..."
//   Result<std::string> out = (*t)->execute(data);          // data: a Value (see data.hpp)
//
// Semantics are Go's text/template with Option("missingkey=default"): the whole language
// (trim markers, comments, if/else if/else, range over lists, maps in key order and ints,
// break/continue, with/else with, define/template/block, variables with Go's scoping,
// pipelines, parenthesised pipelines and chains), the builtins (and, or, not, eq, ne, lt,
// le, gt, ge, len, index, slice, print, printf, println, html, js, urlquery, call), Go fmt
// printing, and Go's error messages:
//   parse:   template: NAME:LINE: MESSAGE
//   execute: template: NAME:LINE:COL: executing "TEMPLATE" at <NODE>: MESSAGE
// An execution that fails produces no output.
//
// Limits (Go has none or larger ones; ours keep the C++ stack bounded on any input):
// nested {{template}} calls 1000 deep ("exceeded maximum template depth (1000)"; Go's limit
// is 100000), if/with/range bodies and template calls nested 1000 deep at run time
// ("exceeded maximum nesting depth (1000)"; under 1 MB of stack at -O2),
// parenthesised expressions 1000 deep ("max expression depth exceeded"), and control
// structures nested 1000 deep ("max control nesting depth exceeded"). As a safety net for builds
// with larger stack frames (sanitizers), parsing and execution also stop with those errors when
// they have used 4 MiB of stack: run them on threads with at least 8 MiB (the Linux default).
//
// Thread safety: a Template is immutable after parse(); execute() may run concurrently from
// any number of threads. The data passed to execute() is only read (unless the template
// calls mutating functions such as sprig's `set`, which mutate it as Go does).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/functions.hpp"
#include "operator/template/value.hpp"

namespace meshop::template_engine {

namespace detail {
struct TemplateSet;
}

class ConstantMemo;

// Bounds for one execution, for callers that run untrusted templates (the webhook and
// kube-inject run templates from injector ConfigMaps; fuzzers). Zero means unlimited, as in Go,
// and is the default: Helm charts and other trusted templates run unbounded.
// Exceeding a bound is an execution error naming the template and the node reached:
//   template: NAME:LINE:COL: executing "T" at <NODE>: execution exceeded the limit of N steps
//   ... output exceeded the limit of N bytes
//   ... execution exceeded the time limit of Nms
// The time limit is checked every 16 steps, so it is exceeded by at most 16 steps' work; a step
// is one node walked or one loop iteration, and every function bounds its own work (e.g.
// `until` counts up to 10,000,000), so nested loops (`range until` in `range until`) stop at
// the step or time limit instead of pinning a thread.
struct ExecOptions {
  std::size_t max_output_bytes = 0;
  // Steps: nodes walked plus loop iterations.
  std::uint64_t max_steps = 0;
  // Wall-clock time from the start of the execution.
  std::chrono::milliseconds max_duration{0};
  // Sub-expressions that are the same in every execution, remembered across executions
  // (constant_memo.hpp). Used only by the Template it was built for; null: none.
  const ConstantMemo* memo = nullptr;

  // The bounds the injection engine uses by default (inject::SnapshotSources::template_limits):
  // far above what Istio's templates need (a 1,000-container pod, the engine's limit, renders
  // in tens of milliseconds), and the time bound well below the webhook's request deadline.
  static constexpr ExecOptions untrusted() {
    ExecOptions o;
    o.max_output_bytes = 16 * 1024 * 1024;
    o.max_steps = 10'000'000;
    o.max_duration = std::chrono::milliseconds(2000);
    return o;
  }
};

class Template {
 public:
  // Parses `text` as the template `name` (plus the templates it defines) with the
  // functions of `functions` on top of the builtins. The function map is copied.
  static Result<std::shared_ptr<const Template>> parse(std::string name, std::string_view text,
                                                       const FunctionMap& functions);
  // Same, with default_functions() (sprig overlaid with Istio's functions).
  static Result<std::shared_ptr<const Template>> parse(std::string name, std::string_view text);

  // Executes the template `name()` on `data`.
  Result<std::string> execute(const Value& data) const;
  Result<std::string> execute(const Value& data, const ExecOptions& options) const;
  // Executes the associated template `template_name` (one of its {{define}}s).
  Result<std::string> execute_template(std::string_view template_name, const Value& data,
                                       const ExecOptions& options = {}) const;
  // Appends the output to `out`; on error returns it and leaves `out` unchanged.
  api::Status execute_into(std::string& out, const Value& data,
                           const ExecOptions& options = {}) const;

  const std::string& name() const;
  // Names of all templates in the set (the main one and every define/block), sorted.
  std::vector<std::string> template_names() const;
  bool has_template(std::string_view name) const;

  explicit Template(std::shared_ptr<const detail::TemplateSet> set);
  ~Template();

 private:
  friend class ConstantMemo;
  std::shared_ptr<const detail::TemplateSet> set_;
};

}  // namespace meshop::template_engine

namespace meshop::template_engine {

// Several template texts sharing one namespace of definitions, as Go's templates associated
// through t.New(name).Parse(text) (Helm parses every file of a chart this way): each text is
// the template of its name, {{template "x"}} and execute_template("x") find "x" wherever it
// was defined, and a later definition replaces an earlier one of the same name unless it is
// empty (Go's AddParseTree). Errors name the file the failing node is in, with its line and
// column in that file.
//
// Not thread-safe while texts are being added; executions may run concurrently afterwards.
class TemplateGroup {
 public:
  explicit TemplateGroup(FunctionMap functions);
  ~TemplateGroup();
  TemplateGroup(const TemplateGroup&);  // cheap: the parsed sets are shared
  TemplateGroup& operator=(const TemplateGroup&);

  // Parses `text` as the template `name`; on a parse error (Go's text, naming `name`) the
  // group is unchanged.
  api::Status add(std::string name, std::string_view text);
  Result<std::string> execute_template(std::string_view name, const Value& data,
                                       const ExecOptions& options = {}) const;
  bool has_template(std::string_view name) const;
  const FunctionMap& functions() const;

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace meshop::template_engine
