// ConstantMemo: which nodes of a parse tree are constant, given the constant fields of the
// root data and the pure functions (see constant_memo.hpp). The executor (exec.cpp) reads and
// fills the slots.
#include "operator/template/constant_memo.hpp"

#include <algorithm>

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
             const std::vector<std::string_view>& pure)
      : fields_(fields), pure_(pure), done_(set.arena.size(), kUnknown) {
    std::sort(pure_.begin(), pure_.end());
  }

  MemoSlots::Code classify(const Node* n) {
    std::uint8_t& d = done_[n->id];
    if (d == kUnknown) d = compute(n);
    return static_cast<MemoSlots::Code>(d);
  }

 private:
  static constexpr std::uint8_t kUnknown = 0xFF;

  bool pure_call(const detail::IdentifierNode* id) const {
    if (id->fn != nullptr) return contains(pure_, id->name);
    return id->builtin != detail::Builtin::kNone && id->builtin != detail::Builtin::kCall;
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
        return classify(c->node) != MemoSlots::kNo ? MemoSlots::kScalar : MemoSlots::kNo;
      }
      case NodeType::kIdentifier:  // a function called without arguments
        return pure_call(static_cast<const detail::IdentifierNode*>(n)) ? MemoSlots::kScalar
                                                                        : MemoSlots::kNo;
      case NodeType::kPipe: {
        const auto* p = static_cast<const detail::PipeNode*>(n);
        if (p->cmds.empty()) return MemoSlots::kNo;
        MemoSlots::Code last = MemoSlots::kNo;
        for (const Node* c : p->cmds) {
          last = classify(c);
          if (last == MemoSlots::kNo) return MemoSlots::kNo;
        }
        // One command that is a field chain: the pipeline's value is that chain's value.
        return p->cmds.size() == 1 && last == MemoSlots::kAny ? MemoSlots::kAny
                                                              : MemoSlots::kScalar;
      }
      case NodeType::kCommand: {
        const auto& args = static_cast<const detail::CommandNode*>(n)->args;
        if (args.empty()) return MemoSlots::kNo;
        const Node* first = args[0];
        if (first->type == NodeType::kIdentifier) {
          if (!pure_call(static_cast<const detail::IdentifierNode*>(first))) return MemoSlots::kNo;
          for (std::size_t i = 1; i < args.size(); ++i)
            if (classify(args[i]) == MemoSlots::kNo) return MemoSlots::kNo;
          return MemoSlots::kScalar;
        }
        if (args.size() != 1) return MemoSlots::kNo;  // a method call, or an error
        switch (first->type) {
          case NodeType::kField:
          case NodeType::kChain:
          case NodeType::kPipe:
          case NodeType::kString:
          case NodeType::kNumber:
          case NodeType::kBool:
            return classify(first);
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
  std::vector<std::uint8_t> done_;
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
                           const std::vector<std::string_view>& pure_functions)
    : slots_(std::make_unique<MemoSlots>()) {
  const detail::TemplateSet& set = *t.set_;
  slots_->set = t.set_;
  std::size_t n = set.arena.size();
  slots_->code.assign(n, MemoSlots::kNo);
  slots_->values = std::make_unique<std::atomic<const MemoSlots::Known*>[]>(n);
  for (std::size_t i = 0; i < n; ++i)
    slots_->values[i].store(nullptr, std::memory_order_relaxed);
  if (may_mutate(set)) return;
  slots_->enabled = true;
  Classifier c(set, constant_fields, pure_functions);
  std::vector<bool> reachable(n, false);
  for (const auto& [name, root] : set.trees)
    mark_reachable(root, reachable);
  for (const auto& node : set.arena) {
    if (!reachable[node->id]) continue;
    MemoSlots::Code code = c.classify(node.get());
    // Only what the executor looks up: pipelines, field chains and parenthesised chains.
    bool looked_up = node->type == NodeType::kPipe || node->type == NodeType::kField ||
                     node->type == NodeType::kChain;
    if (looked_up && (code == MemoSlots::kAny || code == MemoSlots::kScalar)) {
      slots_->code[node->id] = code;
      ++slots_->constants;
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
