// The parse tree of a template (internal to the engine). Mirrors the node kinds of Go's
// text/template/parse so that execution and error contexts line up with Go. Nodes are
// owned by the Template's arena and immutable after parsing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "operator/template/functions.hpp"

namespace meshop::template_engine::detail {

enum class NodeType : std::uint8_t {
  kText,
  kAction,
  kIf,
  kRange,
  kWith,
  kTemplate,
  kBreak,
  kContinue,
  kList,
  kPipe,
  kCommand,
  kField,
  kChain,
  kIdentifier,
  kDot,
  kNil,
  kVariable,
  kBool,
  kNumber,
  kString,
  kEnd,   // parser-only
  kElse,  // parser-only
  kComment,
};

// Builtin functions of text/template, resolved at parse time.
enum class Builtin : std::uint8_t {
  kNone,
  kAnd,
  kOr,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLen,
  kIndex,
  kSlice,
  kPrint,
  kPrintf,
  kPrintln,
  kHtml,
  kJs,
  kUrlquery,
  kCall,
};

struct Tree;

struct Node {
  Node(NodeType t, int p) : type(t), pos(p) {}
  virtual ~Node() = default;
  NodeType type;
  int pos;               // byte offset in the template text
  std::uint32_t id = 0;  // index in the TemplateSet's arena (ConstantMemo slots)
};

struct ListNode : Node {
  explicit ListNode(int p) : Node(NodeType::kList, p) {}
  std::vector<Node*> nodes;
};

struct TextNode : Node {
  TextNode(int p, std::string t) : Node(NodeType::kText, p), text(std::move(t)) {}
  std::string text;
};

struct CommandNode;
struct VariableNode;

struct PipeNode : Node {
  explicit PipeNode(int p) : Node(NodeType::kPipe, p) {}
  bool is_assign = false;
  std::vector<VariableNode*> decl;
  std::vector<CommandNode*> cmds;
};

struct ActionNode : Node {
  ActionNode(int p, PipeNode* pp) : Node(NodeType::kAction, p), pipe(pp) {}
  PipeNode* pipe;
};

struct CommandNode : Node {
  explicit CommandNode(int p) : Node(NodeType::kCommand, p) {}
  std::vector<Node*> args;
};

struct IdentifierNode : Node {
  IdentifierNode(int p, std::string n) : Node(NodeType::kIdentifier, p), name(std::move(n)) {}
  std::string name;
  const Function* fn = nullptr;  // user function (wins over a builtin of the same name)
  Builtin builtin = Builtin::kNone;
};

struct FieldNode : Node {
  FieldNode(int p, std::vector<std::string> id) : Node(NodeType::kField, p), ident(std::move(id)) {}
  std::vector<std::string> ident;  // without the dots
};

struct VariableNode : Node {
  VariableNode(int p, std::vector<std::string> id)
      : Node(NodeType::kVariable, p), ident(std::move(id)) {}
  std::vector<std::string> ident;  // ident[0] is "$name"; the rest are fields
  int var_id = 0;                  // interned ident[0]
};

struct ChainNode : Node {
  ChainNode(int p, Node* n) : Node(NodeType::kChain, p), node(n) {}
  Node* node;
  std::vector<std::string> field;
};

struct DotNode : Node {
  explicit DotNode(int p) : Node(NodeType::kDot, p) {}
};

struct NilNode : Node {
  explicit NilNode(int p) : Node(NodeType::kNil, p) {}
};

struct BoolNode : Node {
  BoolNode(int p, bool v) : Node(NodeType::kBool, p), value(v) {}
  bool value;
};

struct NumberNode : Node {
  NumberNode(int p, std::string t) : Node(NodeType::kNumber, p), text(std::move(t)) {}
  bool is_int = false, is_uint = false, is_float = false, is_complex = false;
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;
  double float64 = 0;
  double complex_real = 0, complex_imag = 0;
  std::string text;
};

struct StringNode : Node {
  StringNode(int p, std::string q, std::string t)
      : Node(NodeType::kString, p), quoted(std::move(q)), text(std::move(t)) {}
  std::string quoted;
  std::string text;
};

struct BranchNode : Node {  // if, range, with
  BranchNode(NodeType t, int p) : Node(t, p) {}
  PipeNode* pipe = nullptr;
  ListNode* list = nullptr;
  ListNode* else_list = nullptr;
};

struct TemplateNode : Node {
  TemplateNode(int p, std::string n, PipeNode* pp)
      : Node(NodeType::kTemplate, p), name(std::move(n)), pipe(pp) {}
  std::string name;
  PipeNode* pipe;
};

struct SimpleNode : Node {  // break, continue, end, else, comment
  SimpleNode(NodeType t, int p) : Node(t, p) {}
};

// Go's Node.String(): the source-like rendering used in error contexts.
std::string node_string(const Node* n);

}  // namespace meshop::template_engine::detail
