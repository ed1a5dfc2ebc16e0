// Internal: the immutable result of parsing (all trees of one template text) and the entry
// points of the parser and the executor.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "operator/template/ast.hpp"
#include "operator/template/functions.hpp"
#include "operator/template/template.hpp"

namespace meshop::template_engine::detail {

inline constexpr int kMaxExecDepth = 1000;
inline constexpr int kMaxParenDepth = 1000;
inline constexpr int kMaxControlDepth = 1000;
inline constexpr int kMaxExecNesting = 1000;
// Stack the parser or the executor may use below the frame that called them. A safety net
// for builds with large frames (sanitizers), where the counts above are not enough.
inline constexpr std::size_t kStackBudget = 4u << 20;

// Measures stack use from the frame that constructed it.
class StackBudget {
 public:
  StackBudget() : base_(here()) {}
  bool exceeded() const {
    std::uintptr_t h = here();
    return (base_ > h ? base_ - h : h - base_) > kStackBudget;
  }

 private:
  static std::uintptr_t here() {
    return reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  }
  std::uintptr_t base_;
};

struct TemplateSet {
  std::string name;  // the main template; also Go's ParseName used in every position
  std::string text;  // the source, for line:column of execution errors
  std::vector<std::unique_ptr<Node>> arena;
  std::map<std::string, ListNode*, std::less<>> trees;
  FunctionMap funcs;
  std::vector<std::string> var_names;  // VariableNode::var_id -> "$name"; id 0 is "$"
  // The size of the latest output of Template::execute_template, to reserve that much the next
  // time (a template renders about the same text every time). Only a hint.
  mutable std::atomic<std::size_t> output_hint{0};

  template <class T, class... A>
  T* make(A&&... a) {
    auto p = std::make_unique<T>(std::forward<A>(a)...);
    T* raw = p.get();
    raw->id = static_cast<std::uint32_t>(arena.size());
    arena.push_back(std::move(p));
    return raw;
  }
};

// The slots of a ConstantMemo (constant_memo.hpp): per node of `set`, whether it is constant
// and, once evaluated, its value.
struct MemoSlots {
  enum Code : std::uint8_t {
    kNo,       // reads something that is not constant
    kAny,      // a field chain of a constant field: any value is remembered
    kScalar,   // another constant expression: remembered when its value is a scalar
    kLiteral,  // a literal: constant, not worth remembering
    // Constant in the executions whose maps lack every key of key_bits_of(node) (the keyed reads
    // of ConstantMemo): remembered, when a scalar, for those executions only.
    kIfAbsent,
  };
  // A key that keyed reads look up: maps[map] is the field chain of the map.
  // Or, with `equals`, the condition "the field chain maps[map] is not that scalar" (an
  // ExpectedValue; `key` is empty).
  struct Key {
    std::uint32_t map;
    std::string key;
    std::optional<Value> equals;
  };
  // A remembered value, and the node the executor was at when it finished evaluating it
  // (where a later error without a node of its own is reported, as without the memo).
  struct Known {
    Value value;
    const Node* at;
  };
  // The remembered walk of a run (ConstantMemo's "Output runs"): its text, the steps it took,
  // how much deeper than where it started it nested (if/with/range/template) and called
  // templates, and the node the executor was at when it finished.
  // Also the variables the run declares (at its top level), with their values; a run whose
  // variables are not all scalars is walked every time (`walk_only`), as the memo shares no
  // list or map across executions.
  struct KnownText {
    std::string text;
    std::uint64_t steps;
    int nesting;
    int depth;
    const Node* at;
    std::vector<std::pair<int, Value>> vars;
    bool walk_only = false;
  };
  std::shared_ptr<const TemplateSet> set;
  std::vector<std::uint8_t> code;  // by Node::id
  std::unique_ptr<std::atomic<const Known*>[]> values;
  // Runs: by the Node::id of a run's first node, the index in its list one past the run's
  // last node (0: no run starts there), and once walked, the run's KnownText. The run's keys
  // (when it reads keyed reads) are key_bits_of(first node).
  std::vector<std::uint32_t> run_end;
  std::unique_ptr<std::atomic<const KnownText*>[]> texts;
  std::size_t runs = 0;
  bool enabled = false;
  std::size_t constants = 0;
  std::vector<std::vector<std::string>> maps;  // field chains from the root data
  std::vector<Key> keys;
  // By map: its keys and their ids, sorted; the ids of the keys with `equals`.
  std::vector<std::vector<std::pair<std::string, std::uint32_t>>> map_keys;
  std::vector<std::uint32_t> value_keys;
  // The keys of a kIfAbsent node or of a run's first node, as a bit set over `keys`:
  // key_bits[key_range[id].first, +key_words), when key_range[id].second (their number) is
  // not 0.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> key_range;  // by Node::id
  std::uint32_t key_words = 0;
  std::vector<std::uint64_t> key_bits;

  bool has_keys(const Node* n) const { return key_range[n->id].second != 0; }
  std::span<const std::uint64_t> key_bits_of(const Node* n) const {
    const auto& [first, count] = key_range[n->id];
    return {key_bits.data() + first, count != 0 ? key_words : 0u};
  }

  MemoSlots() = default;
  MemoSlots(const MemoSlots&) = delete;
  MemoSlots& operator=(const MemoSlots&) = delete;
  ~MemoSlots() {
    for (std::size_t i = 0; i < code.size(); ++i) {
      delete values[i].load(std::memory_order_relaxed);
      delete texts[i].load(std::memory_order_relaxed);
    }
  }

  Code code_of(const Node* n) const { return static_cast<Code>(code[n->id]); }
  const Known* get(const Node* n) const { return values[n->id].load(std::memory_order_acquire); }
  // Remembers `v` for `n` (its code allowing): the first writer wins.
  void put(const Node* n, const Value& v, const Node* at) const {
    if (code[n->id] != kAny && !is_scalar(v)) return;
    auto* p = new Known{v, at};
    const Known* expected = nullptr;
    if (!values[n->id].compare_exchange_strong(expected, p, std::memory_order_acq_rel)) delete p;
  }
  const KnownText* text(const Node* first) const {
    return texts[first->id].load(std::memory_order_acquire);
  }
  // Remembers the walk of the run starting at `first`: the first writer wins.
  void put_text(const Node* first, KnownText t) const {
    auto* p = new KnownText(std::move(t));
    const KnownText* expected = nullptr;
    if (!texts[first->id].compare_exchange_strong(expected, p, std::memory_order_acq_rel)) delete p;
  }
  static bool is_scalar(const Value& v) {
    switch (v.kind()) {
      case Kind::kList:
      case Kind::kMap:
      case Kind::kStringMap:
      case Kind::kObject:
        return false;
      default:
        return true;
    }
  }
};

// The namespace of a TemplateGroup: every named tree of every file, resolved across sets.
struct TreeRef {
  std::shared_ptr<const TemplateSet> set;
  const ListNode* root;
};
using TreeIndex = std::map<std::string, TreeRef, std::less<>>;

// Go's parse.IsEmptyTree: only whitespace text and comments.
bool is_empty_tree(const Node* n);

// Parses; the error is Go's parse error text.
Result<std::shared_ptr<TemplateSet>> parse_set(std::string name, std::string_view text,
                                               const FunctionMap& funcs);

// Executes the tree `tmpl` on `data`, appending to `out`. On error returns Go's execution
// error text as the error's message; `out` then holds partial output (the caller truncates). String
// literals of the template reach the data (e.g. `set .m "k" "v"`) as references that keep `set`
// alive, so data may outlive the Template it was rendered with.
api::Status execute_set(const std::shared_ptr<const TemplateSet>& set, std::string_view tmpl,
                        const Value& data, std::string& out, const ExecOptions& options,
                        const TreeIndex* index = nullptr);

}  // namespace meshop::template_engine::detail
