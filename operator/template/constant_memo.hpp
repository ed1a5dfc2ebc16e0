// A memo of the sub-expressions of one Template that give the same value in every execution
// that passes it: those that read only fields of the data that the caller declares constant.
//
//   auto memo = std::make_shared<const ConstantMemo>(*tmpl, {"Values", "MeshConfig"},
//                                                    default_pure_functions());
//   ExecOptions o;
//   o.memo = memo.get();
//   tmpl->execute(data_of_pod_1, o);  // evaluates .Values.global.proxy.image, remembers it
//   tmpl->execute(data_of_pod_2, o);  // reads it from the memo
//
// The caller's promise: every execution passed this memo has, as the root data, an object or
// map whose members named `constant_fields` are the same values (the same maps, lists and
// objects, not mutated in between). The injection engine keeps one memo per template of a
// revision's snapshot: `.Values`, `.MeshConfig`, `.Revision` ... come from the snapshot, the
// pod's fields do not; a new snapshot gets new memos.
//
// What is constant (decided once, when the memo is built, from the parse tree):
//   - a field chain starting at a constant field of dot (`.Values.global.proxy.image`);
//   - a literal;
//   - a call of a builtin (except `call`) or of a function of `pure_functions` whose arguments
//     are all constant; a parenthesised pipeline or chain of constant commands.
// It is used only where dot is the root data (not inside `with` or `range`, nor in a
// `{{template}}` called with anything but the root). What is remembered: the value of a
// constant field chain (the very value the data holds), and the value of any other constant
// expression only when it is a scalar (a string, number, bool or nil): a list or map a
// function builds is built afresh in every execution, as without the memo, because a
// template may change it (sprig `append` grows a list it holds alone). The memo is not used
// at all when the template may mutate data (it calls `set`, `unset`, `merge`,
// `mergeOverwrite`, `mergeMaps`, `mustMerge`, `mustMergeOverwrite`, or the builtin `call`).
// Output, errors and limits are those of an execution without the memo: an expression that
// fails is not remembered, and steps are counted per node walked, not per expression.
//
// Keyed reads (optional): calls that read one entry of a map of the root data at a key the
// template spells out, such as `annotation .ObjectMeta "sidecar.istio.io/proxyCPU" .Values.x`
// or `index .ObjectMeta.Labels "app"`. The caller's further promise, for each KeyedRead: a call
// of `function` whose first argument is the field chain `argument` of dot, whose second is a
// string literal, and whose other arguments are constant gives the same value in every
// execution whose map (the field chain `map` of the root data: a map, a map[string]string or
// a nil one) has no entry for that literal. An expression built from constants and such calls
// is then constant in the executions whose maps lack all of its keys (most pods carry none of
// the dozens of annotations an injection template asks about): it is remembered, when a
// scalar, for those executions, and evaluated as without the memo in the others. Each
// execution looks a key up at most once.
//
// Expected values (optional): a field chain of the root data and a scalar it has in most
// executions (the pod's proxy UID: 1337 unless its namespace says otherwise). An expression
// reading it is constant, like one of a keyed read, in the executions in which the chain has
// exactly that value (same kind); it is evaluated as without the memo in the others.
//
// Output runs: beyond values, the memo remembers text. In a list walked with dot the root
// (the template's body, the bodies of its `if`s, a `{{template "x" .}}` callee), a run is a
// stretch of consecutive nodes (texts, actions, if/with/range, template calls) whose every
// expression is constant in the sense above, where the constants also include: dot inside a
// `with` or `range` over a constant pipeline, and variables declared by a constant pipeline
// and never assigned. Such a run prints the same text, declares the same variables, walks
// the same number of steps and nests as deep in every execution (whose maps lack the keys of
// its keyed reads and whose expected values hold): the first execution walks it and
// remembers that; the others append the text and push the variables in one step and count
// its steps (a run that declares a list or map is walked every time). They walk it instead
// when the remembered walk would cross a limit of ExecOptions (steps, output bytes) or the
// nesting and template depth limits from where they are, so limit errors are those of a walk;
// the time limit is checked when the counted steps cross a multiple of 16, as a walk does.
// (The stack-use safety net of sanitizer builds is not replayed: a remembered run uses less
// stack than its walk.) A run is never used by a TemplateGroup execution.
//
// Thread safety: executions may share one memo from any number of threads; a slot is filled
// at most once (the first writer wins; a racing one computed the same value).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/template.hpp"

namespace meshop::template_engine {

namespace detail {
struct MemoSlots;
}

// See "Keyed reads" above.
struct KeyedRead {
  std::string function;               // a function's or a builtin's name
  std::vector<std::string> argument;  // the field chain its first argument is, e.g. {"ObjectMeta"}
  std::vector<std::string> map;       // the map it reads, e.g. {"ObjectMeta", "Annotations"}
};

// See "Expected values" above.
struct ExpectedValue {
  std::vector<std::string> field;  // e.g. {"ProxyUID"}
  Value value;                     // a string, bool or integer
};

class ConstantMemo {
 public:
  ConstantMemo(const Template& t, const std::vector<std::string>& constant_fields,
               const std::vector<std::string_view>& pure_functions,
               const std::vector<KeyedRead>& keyed_reads = {},
               const std::vector<ExpectedValue>& expected_values = {});
  ~ConstantMemo();
  ConstantMemo(const ConstantMemo&) = delete;
  ConstantMemo& operator=(const ConstantMemo&) = delete;

  // False when the template may mutate data: the memo is then never used.
  bool enabled() const;
  // Number of expressions found constant (for tests and logs).
  std::size_t constant_expressions() const;
  // Number of slots filled so far.
  std::size_t filled() const;
  // Number of output runs found, and of those remembered so far.
  std::size_t constant_runs() const;
  std::size_t filled_runs() const;

  const detail::MemoSlots& slots() const { return *slots_; }

 private:
  std::unique_ptr<detail::MemoSlots> slots_;
};

// The functions of default_functions() whose result depends only on their arguments and that
// do not change them (no clock, randomness, environment, DNS or mutation). Sorted.
const std::vector<std::string_view>& default_pure_functions();

}  // namespace meshop::template_engine
