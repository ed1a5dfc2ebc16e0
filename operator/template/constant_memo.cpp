// ConstantMemo: which nodes of a parse tree are constant, given the constant fields of the
// root data and the pure functions (see constant_memo.hpp). The executor (exec.cpp) reads and
// fills the slots.
#include "operator/template/constant_memo.hpp"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <map>
#include <optional>

#include "operator/template/template_set.hpp"

namespace meshop::template_engine {

namespace {

using detail::MemoSlots;
using detail::Node;
using detail::NodeType;

bool contains(const std::vector<std::string_view>& sorted, std::string_view name) {
  return std::binary_search(sorted.begin(), sorted.end(), name);
}

class Classifier {
 public:
  Classifier(const detail::TemplateSet& set, const std::vector<std::string>& fields,
             const std::vector<std::string_view>& pure, const std::vector<KeyedRead>& keyed,
             const std::vector<ExpectedValue>& expected, MemoSlots& slots)
      : fields_(fields),
        pure_(pure),
        keyed_(keyed),
        expected_(expected),
        slots_(slots),
        done_(set.arena.size(), kUnknown),
        keys_(set.arena.size()) {
    std::sort(pure_.begin(), pure_.end());
  }

  MemoSlots::Code classify(const Node* n) {
    std::uint8_t& d = done_[n->id];
    if (d == kUnknown) d = compute(n);
    return static_cast<MemoSlots::Code>(d);
  }
  // The keys a kIfAbsent node needs absent (sorted ids into slots.keys).
  const std::vector<std::uint32_t>& keys(const Node* n) const { return keys_[n->id]; }

 private:
  static constexpr std::uint8_t kUnknown = 0xFF;

  bool pure_call(const detail::IdentifierNode* id) const {
    if (id->fn != nullptr) return contains(pure_, id->name);
    return id->builtin != detail::Builtin::kNone && id->builtin != detail::Builtin::kCall;
  }

  // The id of the key a keyed read `args` (a command) reads, when it is one.
  std::optional<std::uint32_t> keyed_read(const std::vector<Node*>& args) {
    if (args.size() < 3 || args[0]->type != NodeType::kIdentifier ||
        args[1]->type != NodeType::kField || args[2]->type != NodeType::kString)
      return std::nullopt;
    const auto* id = static_cast<const detail::IdentifierNode*>(args[0]);
    const auto& chain = static_cast<const detail::FieldNode*>(args[1])->ident;
    for (const KeyedRead& k : keyed_) {
      if (k.function != id->name || k.argument != chain) continue;
      std::uint32_t map = map_index(k.map);
      const std::string& key = static_cast<const detail::StringNode*>(args[2])->text;
      for (std::uint32_t i = 0; i < slots_.keys.size(); ++i)
        if (slots_.keys[i].map == map && !slots_.keys[i].equals && slots_.keys[i].key == key)
          return i;
      slots_.keys.push_back({map, key, std::nullopt});
      return static_cast<std::uint32_t>(slots_.keys.size() - 1);
    }
    return std::nullopt;
  }

  // The index of field chain `chain` in slots_.maps (added if new).
  std::uint32_t map_index(const std::vector<std::string>& chain) {
    auto m = std::find(slots_.maps.begin(), slots_.maps.end(), chain);
    if (m == slots_.maps.end()) m = slots_.maps.insert(m, chain);
    return static_cast<std::uint32_t>(m - slots_.maps.begin());
  }

  // The id of the key "field chain `chain` has its expected value", when one is declared.
  std::optional<std::uint32_t> expected_read(const std::vector<std::string>& chain) {
    for (const ExpectedValue& e : expected_) {
      if (e.field != chain) continue;
      std::uint32_t map = map_index(chain);
      for (std::uint32_t i = 0; i < slots_.keys.size(); ++i)
        if (slots_.keys[i].map == map && slots_.keys[i].equals) return i;
      slots_.keys.push_back({map, "", e.value});
      return static_cast<std::uint32_t>(slots_.keys.size() - 1);
    }
    return std::nullopt;
  }

  // Adds the keys of `from` to those of `to`.
  void add_keys(const Node* to, const Node* from) { add_keys(to, keys_[from->id]); }
  void add_keys(const Node* to, const std::vector<std::uint32_t>& ids) {
    std::vector<std::uint32_t>& k = keys_[to->id];
    for (std::uint32_t id : ids)
      if (std::find(k.begin(), k.end(), id) == k.end()) k.push_back(id);
    std::sort(k.begin(), k.end());
  }

  // The code of an expression of constant parts: kIfAbsent when one of them is, else
  // `otherwise`.
  static MemoSlots::Code combine(bool any_absent, MemoSlots::Code otherwise) {
    return any_absent ? MemoSlots::kIfAbsent : otherwise;
  }

  std::uint8_t compute(const Node* n) {
    switch (n->type) {
      case NodeType::kString:
      case NodeType::kNumber:
      case NodeType::kBool:
      case NodeType::kNil:
        return MemoSlots::kLiteral;
      case NodeType::kField: {
        const auto& ident = static_cast<const detail::FieldNode*>(n)->ident;
        if (auto key = expected_read(ident)) {
          add_keys(n, {*key});
          return MemoSlots::kIfAbsent;
        }
        if (!ident.empty() && std::find(fields_.begin(), fields_.end(), ident[0]) != fields_.end())
          return MemoSlots::kAny;
        return MemoSlots::kNo;
      }
      case NodeType::kChain: {
        const auto* c = static_cast<const detail::ChainNode*>(n);
        if (c->node->type == NodeType::kNil) return MemoSlots::kNo;  // an error
        MemoSlots::Code inner = classify(c->node);
        if (inner == MemoSlots::kNo) return MemoSlots::kNo;
        add_keys(n, c->node);
        return combine(inner == MemoSlots::kIfAbsent, MemoSlots::kScalar);
      }
      case NodeType::kIdentifier:  // a function called without arguments
        return pure_call(static_cast<const detail::IdentifierNode*>(n)) ? MemoSlots::kScalar
                                                                        : MemoSlots::kNo;
      case NodeType::kPipe: {
        const auto* p = static_cast<const detail::PipeNode*>(n);
        if (p->cmds.empty()) return MemoSlots::kNo;
        MemoSlots::Code last = MemoSlots::kNo;
        bool absent = false;
        for (const Node* c : p->cmds) {
          last = classify(c);
          if (last == MemoSlots::kNo) return MemoSlots::kNo;
          absent = absent || last == MemoSlots::kIfAbsent;
          add_keys(n, c);
        }
        // One command that is a field chain: the pipeline's value is that chain's value.
        return combine(absent, p->cmds.size() == 1 && last == MemoSlots::kAny ? MemoSlots::kAny
                                                                              : MemoSlots::kScalar);
      }
      case NodeType::kCommand: {
        const auto& args = static_cast<const detail::CommandNode*>(n)->args;
        if (args.empty()) return MemoSlots::kNo;
        const Node* first = args[0];
        if (first->type == NodeType::kIdentifier) {
          std::size_t from = 1;
          bool absent = false;
          if (auto key = keyed_read(args)) {
            add_keys(n, {*key});
            absent = true;
            from = 3;
          } else if (!pure_call(static_cast<const detail::IdentifierNode*>(first))) {
            return MemoSlots::kNo;
          }
          for (std::size_t i = from; i < args.size(); ++i) {
            MemoSlots::Code c = classify(args[i]);
            if (c == MemoSlots::kNo) return MemoSlots::kNo;
            absent = absent || c == MemoSlots::kIfAbsent;
            add_keys(n, args[i]);
          }
          return combine(absent, MemoSlots::kScalar);
        }
        if (args.size() != 1) return MemoSlots::kNo;  // a method call, or an error
        switch (first->type) {
          case NodeType::kField:
          case NodeType::kChain:
          case NodeType::kPipe:
          case NodeType::kString:
          case NodeType::kNumber:
          case NodeType::kBool: {
            MemoSlots::Code c = classify(first);
            add_keys(n, first);  // after classify, which finds them
            return c;
          }
          default:  // dot, a variable, nil (an error)
            return MemoSlots::kNo;
        }
      }
      default:
        return MemoSlots::kNo;
    }
  }

 public:
  // --- output runs ------------------------------------------------------------------
  // Finds the runs of every tree of `set` (see "Output runs" in constant_memo.hpp).
  void find_runs(const detail::TemplateSet& set) {
    set_ = &set;
    mark_unstable_variables(set);
    for (const auto& [name, root] : set.trees)
      tree(name);
  }

 private:
  using Keys = std::vector<std::uint32_t>;  // sorted ids into slots_.keys
  using Cls = std::optional<Keys>;          // nullopt: not constant

  // What dot is, statically: the root data, a constant value (read under `keys`), or other.
  enum class Dot : std::uint8_t { kRoot, kConst, kOther };
  struct Ctx {
    Dot dot = Dot::kRoot;
    Keys dot_keys;
    bool loop_body = false;  // a {{break}} or {{continue}} here ends a constant range's pass
  };
  // A variable in scope (the executor's vars_, statically): the root data, a constant, or
  // other.
  struct Binding {
    int var;
    Dot value;
    Keys keys;
  };

  static void merge(Keys& to, const Keys& from) {
    Keys out;
    std::set_union(to.begin(), to.end(), from.begin(), from.end(), std::back_inserter(out));
    to = std::move(out);
  }
  static Cls join(Cls a, const Cls& b) {
    if (!a || !b) return std::nullopt;
    merge(*a, *b);
    return a;
  }

  // Variables whose value may change after their declaration (assigned with `=`), or that a
  // parenthesised pipeline declares (in the middle of an expression): never constant.
  void mark_unstable_variables(const detail::TemplateSet& set) {
    std::vector<bool> top_level(set.arena.size(), false);
    for (const auto& node : set.arena) {
      const detail::PipeNode* p = nullptr;
      if (node->type == NodeType::kAction)
        p = static_cast<const detail::ActionNode*>(node.get())->pipe;
      else if (node->type == NodeType::kIf || node->type == NodeType::kWith ||
               node->type == NodeType::kRange)
        p = static_cast<const detail::BranchNode*>(node.get())->pipe;
      if (p != nullptr) top_level[p->id] = true;
    }
    for (const auto& node : set.arena) {
      if (node->type != NodeType::kPipe) continue;
      const auto* p = static_cast<const detail::PipeNode*>(node.get());
      if (p->decl.empty() || (!p->is_assign && top_level[p->id])) continue;
      for (const detail::VariableNode* v : p->decl)
        unstable_.push_back(v->var_id);
    }
    std::sort(unstable_.begin(), unstable_.end());
  }

  const Binding* lookup(int var) const {
    for (std::size_t i = scope_.size(); i-- > 0;)
      if (scope_[i].var == var) return &scope_[i];
    return nullptr;
  }
  void declare(const detail::PipeNode* p, const Cls& value) {
    for (const detail::VariableNode* v : p->decl) {
      bool stable = !std::binary_search(unstable_.begin(), unstable_.end(), v->var_id);
      if (value && stable)
        scope_.push_back({v->var_id, Dot::kConst, *value});
      else
        scope_.push_back({v->var_id, Dot::kOther, {}});
    }
  }

  bool constant_field(const std::string& name) const {
    return std::find(fields_.begin(), fields_.end(), name) != fields_.end();
  }

  // Whether expression `n` gives the same value in every execution in which the static
  // context `ctx` holds and the maps lack the returned keys.
  Cls expr(const Node* n, const Ctx& ctx) {
    switch (n->type) {
      case NodeType::kString:
      case NodeType::kNumber:
      case NodeType::kBool:
      case NodeType::kNil:
        return Keys{};
      case NodeType::kDot:
        if (ctx.dot == Dot::kConst) return ctx.dot_keys;
        return std::nullopt;
      case NodeType::kField: {
        if (ctx.dot == Dot::kConst) return ctx.dot_keys;
        const auto& ident = static_cast<const detail::FieldNode*>(n)->ident;
        if (ctx.dot != Dot::kRoot) return std::nullopt;
        if (auto key = expected_read(ident)) return Keys{*key};
        if (!ident.empty() && constant_field(ident[0])) return Keys{};
        return std::nullopt;
      }
      case NodeType::kVariable: {
        const auto* v = static_cast<const detail::VariableNode*>(n);
        const Binding* b = lookup(v->var_id);
        if (b == nullptr) return std::nullopt;
        if (b->value == Dot::kConst) return b->keys;
        if (b->value == Dot::kRoot && v->ident.size() > 1 && constant_field(v->ident[1]))
          return Keys{};
        return std::nullopt;
      }
      case NodeType::kChain: {
        const auto* c = static_cast<const detail::ChainNode*>(n);
        if (c->node->type == NodeType::kNil) return std::nullopt;  // an error
        return expr(c->node, ctx);
      }
      case NodeType::kIdentifier:  // a function called without arguments
        if (pure_call(static_cast<const detail::IdentifierNode*>(n))) return Keys{};
        return std::nullopt;
      case NodeType::kPipe: {
        const auto* p = static_cast<const detail::PipeNode*>(n);
        if (!p->decl.empty()) return std::nullopt;
        return pipe(p, ctx);
      }
      case NodeType::kCommand: {
        const auto& args = static_cast<const detail::CommandNode*>(n)->args;
        if (args.empty()) return std::nullopt;
        const Node* first = args[0];
        if (first->type == NodeType::kIdentifier) {
          std::size_t from = 1;
          Keys keys;
          std::optional<std::uint32_t> key;
          if (ctx.dot == Dot::kRoot) key = keyed_read(args);
          if (key) {
            keys.push_back(*key);
            from = 3;
          } else if (!pure_call(static_cast<const detail::IdentifierNode*>(first))) {
            return std::nullopt;
          }
          Cls c = keys;
          for (std::size_t i = from; i < args.size() && c; ++i)
            c = join(std::move(c), expr(args[i], ctx));
          return c;
        }
        if (args.size() != 1) return std::nullopt;  // a method call, or an error
        return expr(first, ctx);
      }
      default:
        return std::nullopt;
    }
  }

  // A pipeline's commands (its declarations are the caller's).
  Cls pipe(const detail::PipeNode* p, const Ctx& ctx) {
    if (p == nullptr || p->cmds.empty() || p->is_assign) return std::nullopt;
    Cls c = Keys{};
    for (const Node* cmd : p->cmds) {
      c = join(std::move(c), expr(cmd, ctx));
      if (!c) break;
    }
    return c;
  }

  // Whether walking `n` in `ctx` prints the same text, takes the same steps and returns the
  // same flow in every execution whose maps lack the returned keys. Declarations of actions
  // enter the scope.
  Cls stmt(const Node* n, const Ctx& ctx) {
    switch (n->type) {
      case NodeType::kText:
      case NodeType::kComment:
        return Keys{};
      case NodeType::kBreak:
      case NodeType::kContinue:
        if (ctx.loop_body) return Keys{};
        return std::nullopt;
      case NodeType::kList:
        return list(static_cast<const detail::ListNode*>(n), ctx);
      case NodeType::kAction: {
        const detail::PipeNode* p = static_cast<const detail::ActionNode*>(n)->pipe;
        Cls c = pipe(p, ctx);
        declare(p, c);
        return c;
      }
      case NodeType::kIf:
      case NodeType::kWith:
      case NodeType::kRange: {
        const auto* b = static_cast<const detail::BranchNode*>(n);
        std::size_t mark = scope_.size();
        Cls c = pipe(b->pipe, ctx);
        declare(b->pipe, c);
        Ctx body = ctx;
        if (n->type != NodeType::kIf) {
          body.dot = c ? Dot::kConst : Dot::kOther;
          body.dot_keys = c ? *c : Keys{};
        }
        if (n->type == NodeType::kRange) body.loop_body = true;
        std::size_t after_pipe = scope_.size();
        Cls r = join(c, list(b->list, body));
        scope_.resize(after_pipe);
        if (b->else_list != nullptr) {
          Ctx other = ctx;
          // A break in a range's else ends that range; a continue, the enclosing one's pass.
          if (n->type == NodeType::kRange) other.loop_body = false;
          r = join(std::move(r), list(b->else_list, other));
        }
        scope_.resize(mark);
        return r;
      }
      case NodeType::kTemplate: {
        const auto* t = static_cast<const detail::TemplateNode*>(n);
        // Only `{{template "name" .}}` with dot the root: the callee then runs on the root.
        const detail::PipeNode* p = t->pipe;
        if (ctx.dot != Dot::kRoot || p == nullptr || !p->decl.empty() || p->cmds.size() != 1 ||
            p->cmds[0]->args.size() != 1 || p->cmds[0]->args[0]->type != NodeType::kDot)
          return std::nullopt;
        return tree(t->name);
      }
      default:
        return std::nullopt;
    }
  }

  // The list's nodes in order; records the runs of a list in which dot is the root.
  Cls list(const detail::ListNode* l, const Ctx& ctx) {
    if (l == nullptr) return Keys{};
    std::size_t mark = scope_.size();
    const std::vector<Node*>& nodes = l->nodes;
    Cls all = Keys{};
    std::size_t start = 0;  // of the run being built
    Keys run_keys;
    bool run_worth = false;
    auto close_run = [&](std::size_t end) {
      if (ctx.dot == Dot::kRoot && run_worth && end > start) {
        const Node* first = nodes[start];
        slots_.run_end[first->id] = static_cast<std::uint32_t>(end);
        run_key_ids_.emplace_back(first->id, run_keys);
        ++slots_.runs;
      }
      run_keys.clear();
      run_worth = false;
    };
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const Node* n = nodes[i];
      Cls c = stmt(n, ctx);
      // A declaration of constant variables may be in a run (replayed with their values).
      bool declares_other = false;
      if (n->type == NodeType::kAction)
        for (const detail::VariableNode* v : static_cast<const detail::ActionNode*>(n)->pipe->decl)
          declares_other = declares_other || lookup(v->var_id)->value != Dot::kConst;
      bool flow = n->type == NodeType::kBreak || n->type == NodeType::kContinue;
      if (c && !declares_other && !flow) {
        merge(run_keys, *c);
        if (n->type != NodeType::kText && n->type != NodeType::kComment) run_worth = true;
      } else {
        close_run(i);
        start = i + 1;
      }
      all = join(std::move(all), c);
    }
    close_run(nodes.size());
    scope_.resize(mark);
    return all;
  }

  // A named tree run with dot the root (a fresh scope: `$` is the root).
  Cls tree(const std::string& name) {
    auto it = set_->trees.find(name);
    if (it == set_->trees.end()) return std::nullopt;  // an error at run time
    auto [known, inserted] = trees_.try_emplace(name, std::nullopt);
    if (!inserted) return known->second;  // classified, or being classified (recursion)
    std::vector<Binding> saved = std::move(scope_);
    scope_.clear();
    scope_.push_back({0, Dot::kRoot, {}});
    Cls c = list(it->second, Ctx{});
    scope_ = std::move(saved);
    trees_[name] = c;
    return c;
  }

 public:
  // The keys of each run, by the id of its first node (filled by find_runs).
  std::vector<std::pair<std::uint32_t, Keys>> run_key_ids_;

 private:
  const detail::TemplateSet* set_ = nullptr;
  std::vector<int> unstable_;  // sorted var ids
  std::vector<Binding> scope_;
  std::map<std::string, Cls, std::less<>> trees_;

  const std::vector<std::string>& fields_;
  std::vector<std::string_view> pure_;
  const std::vector<KeyedRead>& keyed_;
  const std::vector<ExpectedValue>& expected_;
  MemoSlots& slots_;
  std::vector<std::uint8_t> done_;
  std::vector<std::vector<std::uint32_t>> keys_;  // by Node::id
};

// Functions that change their arguments (sprig's map functions) and `call` (which may call
// anything): a template that uses one may change the constant data while it runs.
bool may_mutate(const detail::TemplateSet& set) {
  static const std::vector<std::string_view> kMutating = {
      "merge", "mergeMaps", "mergeOverwrite", "mustMerge", "mustMergeOverwrite", "set", "unset"};
  for (const auto& node : set.arena) {
    if (node->type != NodeType::kIdentifier) continue;
    const auto* id = static_cast<const detail::IdentifierNode*>(node.get());
    if (id->fn != nullptr) {
      if (contains(kMutating, id->name)) return true;
    } else if (id->builtin == detail::Builtin::kCall) {
      return true;
    }
  }
  return false;
}

// Marks the nodes reachable from the trees' roots (the parser leaves some nodes it replaced,
// such as the field `.a` of `.a.b`, in the arena).
void mark_reachable(const Node* n, std::vector<bool>& seen) {
  if (n == nullptr || seen[n->id]) return;
  seen[n->id] = true;
  switch (n->type) {
    case NodeType::kList:
      for (const Node* c : static_cast<const detail::ListNode*>(n)->nodes)
        mark_reachable(c, seen);
      break;
    case NodeType::kAction:
      mark_reachable(static_cast<const detail::ActionNode*>(n)->pipe, seen);
      break;
    case NodeType::kIf:
    case NodeType::kRange:
    case NodeType::kWith: {
      const auto* b = static_cast<const detail::BranchNode*>(n);
      mark_reachable(b->pipe, seen);
      mark_reachable(b->list, seen);
      mark_reachable(b->else_list, seen);
      break;
    }
    case NodeType::kTemplate:
      mark_reachable(static_cast<const detail::TemplateNode*>(n)->pipe, seen);
      break;
    case NodeType::kPipe:
      for (const Node* c : static_cast<const detail::PipeNode*>(n)->cmds)
        mark_reachable(c, seen);
      break;
    case NodeType::kCommand:
      for (const Node* c : static_cast<const detail::CommandNode*>(n)->args)
        mark_reachable(c, seen);
      break;
    case NodeType::kChain:
      mark_reachable(static_cast<const detail::ChainNode*>(n)->node, seen);
      break;
    default:
      break;
  }
}

}  // namespace

ConstantMemo::ConstantMemo(const Template& t, const std::vector<std::string>& constant_fields,
                           const std::vector<std::string_view>& pure_functions,
                           const std::vector<KeyedRead>& keyed_reads,
                           const std::vector<ExpectedValue>& expected_values)
    : slots_(std::make_unique<MemoSlots>()) {
  const detail::TemplateSet& set = *t.set_;
  slots_->set = t.set_;
  std::size_t n = set.arena.size();
  slots_->code.assign(n, MemoSlots::kNo);
  slots_->key_range.assign(n, {0, 0});
  slots_->values = std::make_unique<std::atomic<const MemoSlots::Known*>[]>(n);
  slots_->texts = std::make_unique<std::atomic<const MemoSlots::KnownText*>[]>(n);
  for (std::size_t i = 0; i < n; ++i) {
    slots_->values[i].store(nullptr, std::memory_order_relaxed);
    slots_->texts[i].store(nullptr, std::memory_order_relaxed);
  }
  slots_->run_end.assign(n, 0);
  if (may_mutate(set)) return;
  slots_->enabled = true;
  Classifier c(set, constant_fields, pure_functions, keyed_reads, expected_values, *slots_);
  std::vector<bool> reachable(n, false);
  for (const auto& [name, root] : set.trees)
    mark_reachable(root, reachable);
  // The keys of each kIfAbsent node and run, by node id: a bit set each once all are known.
  std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> keyed;
  for (const auto& node : set.arena) {
    if (!reachable[node->id]) continue;
    MemoSlots::Code code = c.classify(node.get());
    // Only what the executor looks up: pipelines, field chains and parenthesised chains.
    bool looked_up = node->type == NodeType::kPipe || node->type == NodeType::kField ||
                     node->type == NodeType::kChain;
    if (looked_up &&
        (code == MemoSlots::kAny || code == MemoSlots::kScalar || code == MemoSlots::kIfAbsent)) {
      slots_->code[node->id] = code;
      ++slots_->constants;
      if (code == MemoSlots::kIfAbsent) {
        assert(!c.keys(node.get()).empty());
        keyed.emplace_back(node->id, c.keys(node.get()));
      }
    }
  }
  c.find_runs(set);
  keyed.insert(keyed.end(), c.run_key_ids_.begin(), c.run_key_ids_.end());
  slots_->key_words = static_cast<std::uint32_t>((slots_->keys.size() + 63) / 64);
  slots_->map_keys.resize(slots_->maps.size());
  for (std::uint32_t id = 0; id < slots_->keys.size(); ++id) {
    const MemoSlots::Key& k = slots_->keys[id];
    if (k.equals)
      slots_->value_keys.push_back(id);
    else
      slots_->map_keys[k.map].emplace_back(k.key, id);
  }
  for (auto& keys : slots_->map_keys)
    std::sort(keys.begin(), keys.end());
  for (const auto& [id, keys] : keyed) {
    if (keys.empty()) continue;
    slots_->key_range[id] = {static_cast<std::uint32_t>(slots_->key_bits.size()),
                             static_cast<std::uint32_t>(keys.size())};
    slots_->key_bits.resize(slots_->key_bits.size() + slots_->key_words, 0);
    std::uint64_t* bits = slots_->key_bits.data() + slots_->key_range[id].first;
    for (std::uint32_t k : keys)
      bits[k / 64] |= std::uint64_t{1} << (k % 64);
  }
}

ConstantMemo::~ConstantMemo() = default;

bool ConstantMemo::enabled() const {
  return slots_->enabled;
}

std::size_t ConstantMemo::constant_expressions() const {
  return slots_->constants;
}

std::size_t ConstantMemo::constant_runs() const {
  return slots_->runs;
}

std::size_t ConstantMemo::filled_runs() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < slots_->code.size(); ++i)
    if (slots_->texts[i].load(std::memory_order_acquire) != nullptr) ++n;
  return n;
}

std::size_t ConstantMemo::filled() const {
  std::size_t n = 0;
  for (std::size_t i = 0; i < slots_->code.size(); ++i)
    if (slots_->values[i].load(std::memory_order_acquire) != nullptr) ++n;
  return n;
}

const std::vector<std::string_view>& default_pure_functions() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v = {"abbrev",
                                       "abbrevboth",
                                       "add",
                                       "add1",
                                       "adler32sum",
                                       "all",
                                       "any",
                                       "appendMultusNetwork",
                                       "atoi",
                                       "b32dec",
                                       "b32enc",
                                       "b64dec",
                                       "b64enc",
                                       "cat",
                                       "ceil",
                                       "coalesce",
                                       "compact",
                                       "concat",
                                       "contains",
                                       "default",
                                       "dict",
                                       "directory",
                                       "div",
                                       "empty",
                                       "excludeInboundPort",
                                       "first",
                                       "float64",
                                       "floor",
                                       "fromJSON",
                                       "fromJson",
                                       "fromYaml",
                                       "has",
                                       "hasKey",
                                       "hasPrefix",
                                       "hasSuffix",
                                       "indent",
                                       "initial",
                                       "int",
                                       "int64",
                                       "isset",
                                       "join",
                                       "kindIs",
                                       "kindOf",
                                       "last",
                                       "list",
                                       "lower",
                                       "max",
                                       "min",
                                       "mod",
                                       "mul",
                                       "nindent",
                                       "nospace",
                                       "omit",
                                       "omitNil",
                                       "quote",
                                       "regexMatch",
                                       "repeat",
                                       "replace",
                                       "rest",
                                       "reverse",
                                       "round",
                                       "sha256sum",
                                       "split",
                                       "splitList",
                                       "squote",
                                       "strdict",
                                       "sub",
                                       "substr",
                                       "ternary",
                                       "title",
                                       "toJSON",
                                       "toJson",
                                       "toLower",
                                       "toPrettyJson",
                                       "toRawJson",
                                       "toString",
                                       "toYaml",
                                       "trim",
                                       "trimAll",
                                       "trimPrefix",
                                       "trimSuffix",
                                       "trunc",
                                       "typeIs",
                                       "typeOf",
                                       "upper",
                                       "valueOrDefault"};
    std::sort(v.begin(), v.end());
    return v;
  }();
  return names;
}

}  // namespace meshop::template_engine
