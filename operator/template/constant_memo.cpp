// ConstantMemo: which nodes of a parse tree are constant, given the constant fields of the
// root data and the pure functions (see constant_memo.hpp). The executor (exec.cpp) reads and
// fills the slots.
#include "operator/template/constant_memo.hpp"

#include <algorithm>
#include <cassert>
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
             MemoSlots& slots)
      : fields_(fields),
        pure_(pure),
        keyed_(keyed),
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
      auto m = std::find(slots_.maps.begin(), slots_.maps.end(), k.map);
      if (m == slots_.maps.end()) m = slots_.maps.insert(m, k.map);
      auto map = static_cast<std::uint32_t>(m - slots_.maps.begin());
      const std::string& key = static_cast<const detail::StringNode*>(args[2])->text;
      for (std::uint32_t i = 0; i < slots_.keys.size(); ++i)
        if (slots_.keys[i].map == map && slots_.keys[i].key == key) return i;
      slots_.keys.push_back({map, key});
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

  const std::vector<std::string>& fields_;
  std::vector<std::string_view> pure_;
  const std::vector<KeyedRead>& keyed_;
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
                           const std::vector<KeyedRead>& keyed_reads)
    : slots_(std::make_unique<MemoSlots>()) {
  const detail::TemplateSet& set = *t.set_;
  slots_->set = t.set_;
  std::size_t n = set.arena.size();
  slots_->code.assign(n, MemoSlots::kNo);
  slots_->key_range.assign(n, {0, 0});
  slots_->values = std::make_unique<std::atomic<const MemoSlots::Known*>[]>(n);
  for (std::size_t i = 0; i < n; ++i)
    slots_->values[i].store(nullptr, std::memory_order_relaxed);
  if (may_mutate(set)) return;
  slots_->enabled = true;
  Classifier c(set, constant_fields, pure_functions, keyed_reads, *slots_);
  std::vector<bool> reachable(n, false);
  for (const auto& [name, root] : set.trees)
    mark_reachable(root, reachable);
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
        const std::vector<std::uint32_t>& keys = c.keys(node.get());
        assert(!keys.empty());
        slots_->key_range[node->id] = {static_cast<std::uint32_t>(slots_->key_ids.size()),
                                       static_cast<std::uint32_t>(keys.size())};
        slots_->key_ids.insert(slots_->key_ids.end(), keys.begin(), keys.end());
      }
    }
  }
}

ConstantMemo::~ConstantMemo() = default;

bool ConstantMemo::enabled() const {
  return slots_->enabled;
}

std::size_t ConstantMemo::constant_expressions() const {
  return slots_->constants;
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
