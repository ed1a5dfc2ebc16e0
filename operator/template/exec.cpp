// The executor: walks a parsed tree over a Value with Go text/template's semantics. The
// functions mirror the evaluation steps of Go's exec.go (evalPipeline, evalCommand,
// evalField, evalCall, evalArg, validateType) because Go's error messages and its notion
// of "the node being evaluated" depend on exactly which step fails.
#include <algorithm>
#include <chrono>
#include <optional>

#include <boost/container/small_vector.hpp>

#include "operator/template/builtins.hpp"
#include "operator/template/constant_memo.hpp"
#include "operator/template/fmt_internal.hpp"
#include "operator/template/template_set.hpp"

namespace meshop::template_engine::detail {
namespace {

struct ExecError {
  std::string message;
};

enum class Flow { kNormal, kBreak, kContinue };

// The type an argument is evaluated for (Go's reflect.Type of the parameter).
struct ArgType {
  enum Mode : std::uint8_t { kNone, kReflect, kParam } mode = kNone;
  ParamType param;
  static ArgType none() { return {}; }
  static ArgType reflect() { return {kReflect, {}}; }
  static ArgType of(ParamType p) { return {kParam, p}; }
  bool is_any() const { return mode == kParam && param.kind == Kind::kInvalid; }
};

using ArgVec = boost::container::small_vector<Value, 6>;

struct Var {
  int id;
  Value value;
};

std::string quote(std::string_view s) {
  return go_quote(s);
}

class State {
 public:
  State(const std::shared_ptr<const TemplateSet>& set, const TreeIndex* index, std::string& out,
        const ExecOptions& options)
      : set_(set.get()),
        index_(index),
        owner_(set),
        out_(out),
        options_(options),
        out_start_(out.size()),
        bounded_(options.max_steps != 0 || options.max_output_bytes != 0 ||
                 options.max_duration.count() > 0) {
    if (options.max_duration.count() > 0)
      deadline_ = std::chrono::steady_clock::now() + options.max_duration;
    if (options.memo != nullptr && options.memo->enabled() &&
        options.memo->slots().set.get() == set_)
      memo_ = &options.memo->slots();
  }

  void run(std::string_view name, const ListNode* root, const Value& data) {
    tmpl_name_ = name;
    if (memo_ != nullptr) {
      root_value_ = &data;
      if (data.kind() == Kind::kObject)
        root_ = data.as_object();
      else if (data.kind() == Kind::kMap && data.as_map() != nullptr)
        root_ = data.as_map();
      else
        memo_ = nullptr;
      root_kind_ = data.kind();
      runs_ = memo_ != nullptr && index_ == nullptr && memo_->runs > 0;
    }
    vars_.reserve(32);
    vars_.push_back(Var{0, data});
    walk(data, root);
  }

  [[noreturn]] void errorf(const std::string& msg) const {
    std::string full = "template: ";
    if (node_ == nullptr) {
      full += std::string(tmpl_name_) + ": " + msg;
    } else {
      int pos = node_->pos;
      std::string_view text = set_->text;
      if (pos > static_cast<int>(text.size())) pos = static_cast<int>(text.size());
      std::string_view before = text.substr(0, static_cast<std::size_t>(pos));
      auto nl = before.rfind('\n');
      int col = nl == std::string_view::npos ? pos : pos - static_cast<int>(nl) - 1;
      int line = 1 + static_cast<int>(std::count(before.begin(), before.end(), '\n'));
      full += set_->name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": executing " +
              quote(tmpl_name_) + " at <" + node_string(node_) + ">: " + msg;
    }
    throw ExecError{std::move(full)};
  }

 private:
  void at(const Node* n) { node_ = n; }

  // --- the constant memo ----------------------------------------------------------
  // The memo's code for `n` when it may be used here: dot is the root data and the node is
  // in the memo's template set.
  MemoSlots::Code memo_code(const Value& dot, const Node* n) {
    if (memo_ == nullptr || set_ != memo_->set.get() || dot.kind() != root_kind_)
      return MemoSlots::kNo;
    const void* p = root_kind_ == Kind::kObject ? static_cast<const void*>(dot.as_object())
                                                : static_cast<const void*>(dot.as_map());
    if (p != root_) return MemoSlots::kNo;
    MemoSlots::Code code = memo_->code_of(n);
    if (code == MemoSlots::kIfAbsent && !keys_absent(n)) return MemoSlots::kNo;
    return code;
  }

  // Whether this execution's maps lack every key of the kIfAbsent node (or run) `n` (and its
  // expected values hold). Every key is looked up once, at the first call, into a bit set of
  // the keys present: the entries of each map (a pod has few) are looked up among the memo's
  // keys of that map.
  bool keys_absent(const Node* n) {
    if (present_.empty()) find_present_keys();
    std::span<const std::uint64_t> bits = memo_->key_bits_of(n);
    for (std::size_t w = 0; w < bits.size(); ++w)
      if ((bits[w] & present_[w]) != 0) return false;
    return true;
  }

  void find_present_keys() {
    present_.assign(memo_->key_words, 0);
    auto set = [this](std::uint32_t id) { present_[id / 64] |= std::uint64_t{1} << (id % 64); };
    for (std::size_t m = 0; m < memo_->maps.size(); ++m) {
      const auto& keys = memo_->map_keys[m];
      if (keys.empty()) continue;
      auto look_up = [&](std::string_view entry) {
        auto it = std::lower_bound(keys.begin(), keys.end(), entry,
                                   [](const auto& k, std::string_view e) { return k.first < e; });
        if (it != keys.end() && it->first == entry) set(it->second);
      };
      const Value& v = map_value(m);
      if (v.kind() == Kind::kStringMap) {
        if (v.as_string_map() != nullptr)
          for (const auto& [k, _] : v.as_string_map()->entries())
            look_up(k);
      } else if (v.kind() == Kind::kMap) {
        if (v.as_map() != nullptr)
          for (const auto& [k, _] : v.as_map()->entries())
            look_up(k);
      } else {
        for (const auto& [_, id] : keys)  // not a map: no key is known absent
          set(id);
      }
    }
    for (std::uint32_t id : memo_->value_keys) {
      const MemoSlots::Key& k = memo_->keys[id];
      if (!same_scalar(map_value(k.map), *k.equals)) set(id);
    }
  }

  static bool same_scalar(const Value& a, const Value& b) {
    if (a.kind() != b.kind() || a.boxed() != b.boxed()) return false;
    switch (a.kind()) {
      case Kind::kString:
        return a.as_string() == b.as_string();
      case Kind::kBool:
        return a.as_bool() == b.as_bool();
      case Kind::kInt:
      case Kind::kInt32:
      case Kind::kInt64:
        return a.as_int() == b.as_int();
      case Kind::kUint:
      case Kind::kUint8:
      case Kind::kUint32:
      case Kind::kUint64:
        return a.as_uint() == b.as_uint();
      default:
        return false;
    }
  }

  // The value of field chain `i` of the memo (from the root data) in this execution.
  const Value& map_value(std::size_t i) {
    if (maps_.empty()) maps_.resize(memo_->maps.size());
    std::optional<Value>& m = maps_[i];
    if (!m) {
      Value v = *root_value_;
      for (const std::string& name : memo_->maps[i]) {
        if (v.kind() == Kind::kObject && !v.as_object()->is_nil()) {
          std::optional<Value> f = v.as_object()->field(name);
          v = f ? std::move(*f) : Value();
        } else if (v.kind() == Kind::kMap && v.as_map() != nullptr) {
          const Value* e = v.as_map()->find(name);
          v = e != nullptr ? *e : Value();
        } else {
          v = Value();
        }
      }
      m = std::move(v);
    }
    return *m;
  }

  // --- variables -----------------------------------------------------------------
  void push(int id, Value v) { vars_.push_back(Var{id, std::move(v)}); }
  std::size_t mark() const { return vars_.size(); }
  void pop(std::size_t m) { vars_.resize(m); }

  void set_var(int id, Value v) {
    for (std::size_t i = vars_.size(); i-- > base_;) {
      if (vars_[i].id == id) {
        vars_[i].value = std::move(v);
        return;
      }
    }
    errorf("undefined variable: " + set_->var_names[static_cast<std::size_t>(id)]);
  }
  void set_top_var(std::size_t n, Value v) { vars_[vars_.size() - n].value = std::move(v); }
  Value& var_slot(int id) {
    for (std::size_t i = vars_.size(); i-- > base_;)
      if (vars_[i].id == id) return vars_[i].value;
    errorf("undefined variable: " + set_->var_names[static_cast<std::size_t>(id)]);
  }
  const Value& var_value(int id) const {
    for (std::size_t i = vars_.size(); i-- > base_;)
      if (vars_[i].id == id) return vars_[i].value;
    errorf("undefined variable: " + set_->var_names[static_cast<std::size_t>(id)]);
  }

  // --- walking -------------------------------------------------------------------
  // After ++steps_ (counted in every execution: the output runs of the memo remember them).
  void check_limits() {
    if (options_.max_steps != 0 && steps_ > options_.max_steps)
      errorf("execution exceeded the limit of " + std::to_string(options_.max_steps) + " steps");
    if (options_.max_output_bytes != 0 && out_.size() - out_start_ > options_.max_output_bytes)
      errorf("output exceeded the limit of " + std::to_string(options_.max_output_bytes) +
             " bytes");
    // The clock every 16 steps: cheap, and a step is short unless a function is slow (the
    // functions bound their own work, e.g. until's count).
    if (deadline_ && (steps_ & 15) == 0 && std::chrono::steady_clock::now() > *deadline_)
      errorf("execution exceeded the time limit of " +
             std::to_string(options_.max_duration.count()) + "ms");
  }

  // Guards the C++ stack: every if/with/range body and template call nests a few frames.
  struct Nest {
    explicit Nest(State& s) : s_(s) {
      if (++s_.nesting_ > kMaxExecNesting || s_.stack_.exceeded())
        s_.errorf("exceeded maximum nesting depth (" + std::to_string(kMaxExecNesting) + ")");
      s_.nest_high_ = std::max(s_.nest_high_, s_.nesting_);
    }
    ~Nest() { --s_.nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    State& s_;
  };

  Flow walk(const Value& dot, const Node* node) {
    at(node);
    ++steps_;
    if (bounded_) check_limits();
    switch (node->type) {
      case NodeType::kAction: {
        const auto* a = static_cast<const ActionNode*>(node);
        Value val = eval_pipeline(dot, a->pipe);
        if (a->pipe->decl.empty()) print_value(node, val);
        return Flow::kNormal;
      }
      case NodeType::kBreak:
        return Flow::kBreak;
      case NodeType::kContinue:
        return Flow::kContinue;
      case NodeType::kComment:
        return Flow::kNormal;
      case NodeType::kIf:
      case NodeType::kWith:
        return walk_if_or_with(node->type, dot, static_cast<const BranchNode*>(node));
      case NodeType::kList:
        if (runs_ && is_root(dot)) return walk_runs(dot, static_cast<const ListNode*>(node)->nodes);
        for (const Node* n : static_cast<const ListNode*>(node)->nodes) {
          Flow f = walk(dot, n);
          if (f != Flow::kNormal) return f;
        }
        return Flow::kNormal;
      case NodeType::kRange:
        return walk_range(dot, static_cast<const BranchNode*>(node));
      case NodeType::kTemplate:
        walk_template(dot, static_cast<const TemplateNode*>(node));
        return Flow::kNormal;
      case NodeType::kText:
        out_ += static_cast<const TextNode*>(node)->text;
        return Flow::kNormal;
      default:
        errorf("unknown node: " + node_string(node));
    }
  }

  // --- output runs of the memo ------------------------------------------------------
  bool is_root(const Value& dot) const {
    if (dot.kind() != root_kind_) return false;
    const void* p = root_kind_ == Kind::kObject ? static_cast<const void*>(dot.as_object())
                                                : static_cast<const void*>(dot.as_map());
    return p == root_;
  }

  // A list with dot the root: its runs are appended when remembered, else walked and
  // remembered (their keys absent).
  Flow walk_runs(const Value& dot, const std::vector<Node*>& nodes) {
    for (std::size_t i = 0; i < nodes.size();) {
      const Node* n = nodes[i];
      if (std::uint32_t end = memo_->run_end[n->id];
          end != 0 && (!memo_->has_keys(n) || keys_absent(n))) {
        if (const MemoSlots::KnownText* known = memo_->text(n)) {
          if (replay(n, *known)) {
            i = end;
            continue;
          }
        } else {
          Flow f = record_run(dot, nodes, i, end);
          if (f != Flow::kNormal) return f;
          i = end;
          continue;
        }
      }
      Flow f = walk(dot, n);
      if (f != Flow::kNormal) return f;
      ++i;
    }
    return Flow::kNormal;
  }

  Flow record_run(const Value& dot, const std::vector<Node*>& nodes, std::size_t from,
                  std::size_t end) {
    std::size_t out_from = out_.size();
    std::size_t vars_from = vars_.size();
    std::uint64_t steps_from = steps_;
    int saved_nest = std::exchange(nest_high_, nesting_);
    int saved_depth = std::exchange(depth_high_, depth_);
    for (std::size_t i = from; i < end; ++i) {
      // A run ends with the flow it started with (ConstantMemo puts no break/continue in one).
      Flow f = walk(dot, nodes[i]);
      if (f != Flow::kNormal) return f;
    }
    MemoSlots::KnownText known{out_.substr(out_from),
                               steps_ - steps_from,
                               nest_high_ - nesting_,
                               depth_high_ - depth_,
                               node_,
                               {},
                               false};
    // What the run's top-level actions declared (nested scopes have been popped).
    for (std::size_t i = vars_from; i < vars_.size(); ++i) {
      known.vars.emplace_back(vars_[i].id, vars_[i].value);
      if (!MemoSlots::is_scalar(vars_[i].value)) known.walk_only = true;
    }
    if (known.walk_only) {
      known.text.clear();
      known.vars.clear();
    }
    memo_->put_text(nodes[from], std::move(known));
    nest_high_ = std::max(saved_nest, nest_high_);
    depth_high_ = std::max(saved_depth, depth_high_);
    return Flow::kNormal;
  }

  // Appends a remembered run; false (nothing done) when its walk would cross a limit here.
  bool replay(const Node* first, const MemoSlots::KnownText& k) {
    if (k.walk_only) return false;
    if (options_.max_steps != 0 && steps_ + k.steps > options_.max_steps) return false;
    if (options_.max_output_bytes != 0 &&
        out_.size() - out_start_ + k.text.size() > options_.max_output_bytes)
      return false;
    if (nesting_ + k.nesting > kMaxExecNesting || depth_ + k.depth > kMaxExecDepth) return false;
    std::uint64_t steps_from = steps_;
    steps_ += k.steps;
    if (deadline_ && (steps_from >> 4) != (steps_ >> 4) &&
        std::chrono::steady_clock::now() > *deadline_) {
      at(first);
      errorf("execution exceeded the time limit of " +
             std::to_string(options_.max_duration.count()) + "ms");
    }
    out_ += k.text;
    for (const auto& [id, value] : k.vars)
      push(id, value);
    node_ = k.at;
    nest_high_ = std::max(nest_high_, nesting_ + k.nesting);
    depth_high_ = std::max(depth_high_, depth_ + k.depth);
    return true;
  }

  Flow walk_if_or_with(NodeType type, const Value& dot, const BranchNode* b) {
    Nest nest(*this);
    std::size_t m = mark();
    Value val = eval_pipeline(dot, b->pipe);
    Flow f = Flow::kNormal;
    if (truth(val)) {
      f = walk(type == NodeType::kWith ? val : dot, b->list);
    } else if (b->else_list != nullptr) {
      f = walk(dot, b->else_list);
    }
    pop(m);
    return f;
  }

  // Runs one iteration; returns false when the loop must stop (break).
  bool one_iteration(const BranchNode* r, std::size_t m, const Value& index, const Value& elem) {
    ++steps_;
    if (bounded_) check_limits();
    const PipeNode* p = r->pipe;
    if (!p->decl.empty()) {
      if (p->is_assign) {
        if (p->decl.size() > 1)
          set_var(p->decl[0]->var_id, index);
        else
          set_var(p->decl[0]->var_id, elem);
      } else {
        set_top_var(1, elem);
      }
    }
    if (p->decl.size() > 1) {
      if (p->is_assign)
        set_var(p->decl[1]->var_id, elem);
      else
        set_top_var(2, index);
    }
    Flow f = walk(elem, r->list);
    pop(m);
    return f != Flow::kBreak;
  }

  Flow walk_range(const Value& dot, const BranchNode* r) {
    at(r);
    Nest nest(*this);
    std::size_t outer = mark();
    Value val = eval_pipeline(dot, r->pipe);
    std::size_t m = mark();
    bool ran = false;
    switch (val.kind()) {
      case Kind::kInt:
      case Kind::kInt32:
      case Kind::kInt64:
      case Kind::kUint:
      case Kind::kUint8:
      case Kind::kUint32:
      case Kind::kUint64: {
        if (r->pipe->decl.size() > 1)
          errorf("can't use " + sprint_value(val) + " to iterate over more than one variable");
        if (val.is_signed()) {
          for (std::int64_t i = 0; i < val.as_int(); ++i) {
            ran = true;
            if (!one_iteration(r, m, Value(), Value::integer(i, val.kind()))) break;
          }
        } else {
          for (std::uint64_t i = 0; i < val.as_uint(); ++i) {
            ran = true;
            if (!one_iteration(r, m, Value(), Value::unsigned_integer(i, val.kind()))) break;
          }
        }
        break;
      }
      case Kind::kList: {
        const List* l = val.as_list();
        if (l == nullptr || l->items.empty()) break;
        ran = true;
        bool boxed = l->elem_type.empty();
        // Iterate over a snapshot of the size: a template may append to the list (Go
        // iterates the slice header it evaluated).
        std::size_t n = l->items.size();
        for (std::size_t i = 0; i < n && i < l->items.size(); ++i) {
          Value elem = l->items[i];
          if (boxed) elem.set_boxed(true);
          if (!one_iteration(r, m, Value::integer(static_cast<std::int64_t>(i)), elem)) break;
        }
        break;
      }
      case Kind::kMap: {
        const Map* mp = val.as_map();
        if (mp == nullptr || mp->empty()) break;
        ran = true;
        // Go sorts the keys once before iterating; copy them so mutation is harmless.
        std::vector<Map::Entry> entries = mp->entries();
        for (auto& [k, v] : entries) {
          Value elem = v;
          elem.set_boxed(true);
          if (!one_iteration(r, m, Value::string(k), elem)) break;
        }
        break;
      }
      case Kind::kStringMap: {
        const StringMap* mp = val.as_string_map();
        if (mp == nullptr || mp->empty()) break;
        ran = true;
        std::vector<StringMap::Entry> entries = mp->entries();
        for (auto& [k, v] : entries)
          if (!one_iteration(r, m, Value::string(k), Value::string(v))) break;
        break;
      }
      case Kind::kInvalid:
        break;
      default:
        errorf("range can't iterate over " + sprint_value(val));
    }
    Flow f = Flow::kNormal;
    if (!ran && r->else_list != nullptr) {
      f = walk(dot, r->else_list);
      // Go's walkRange recovers a break raised anywhere inside it, the else branch included.
      if (f == Flow::kBreak) f = Flow::kNormal;
    }
    pop(outer);
    return f;
  }

  void walk_template(const Value& dot, const TemplateNode* t) {
    at(t);
    // In a group ({{template}} across files), the name resolves in the group's namespace and
    // the callee's own set then reports positions and owns the literals.
    const TemplateSet* callee_set = set_;
    std::shared_ptr<const void> callee_owner;
    const ListNode* callee = nullptr;
    std::string_view callee_name;
    if (index_ != nullptr) {
      auto it = index_->find(t->name);
      if (it == index_->end()) errorf("template " + quote(t->name) + " not defined");
      callee_set = it->second.set.get();
      callee_owner = it->second.set;
      callee = it->second.root;
      callee_name = it->first;
    } else {
      auto it = set_->trees.find(t->name);
      if (it == set_->trees.end()) errorf("template " + quote(t->name) + " not defined");
      callee = it->second;
      callee_name = it->first;
    }
    if (depth_ == kMaxExecDepth)
      errorf("exceeded maximum template depth (" + std::to_string(kMaxExecDepth) + ")");
    Value new_dot = eval_pipeline(dot, t->pipe);
    Nest nest(*this);
    std::size_t saved_base = base_;
    std::size_t saved_size = vars_.size();
    std::string_view saved_name = tmpl_name_;
    base_ = vars_.size();
    push(0, new_dot);
    ++depth_;
    depth_high_ = std::max(depth_high_, depth_);
    tmpl_name_ = callee_name;
    const TemplateSet* saved_set = set_;
    std::shared_ptr<const void> saved_owner;
    if (callee_owner) saved_owner = std::exchange(owner_, std::move(callee_owner));
    set_ = callee_set;
    walk(new_dot, callee);
    set_ = saved_set;
    if (saved_owner) owner_ = std::move(saved_owner);
    --depth_;
    tmpl_name_ = saved_name;
    vars_.resize(saved_size);
    base_ = saved_base;
  }

  // --- evaluation ----------------------------------------------------------------
  static void unwrap(Value& v) {
    if (v.kind() == Kind::kNil) v = Value();
    v.set_boxed(false);
  }

  // `$v = f ... $v ...`: the one argument node that reads $v, when nothing else in the
  // command reads it. The variable is overwritten by the result right after the call (or the
  // execution fails), so that argument can take the variable's value instead of a copy of it;
  // a function then sees a list or map it alone holds and may reuse it (sprig `append` grows a
  // sole-held list in place: `$apps = append $apps .Name` in a range is linear, not quadratic).
  static const VariableNode* stealable_argument(const PipeNode* pipe) {
    if (!pipe->is_assign || pipe->decl.size() != 1 || pipe->cmds.size() != 1) return nullptr;
    const std::vector<Node*>& args = pipe->cmds[0]->args;
    if (args.size() < 2 || args[0]->type != NodeType::kIdentifier) return nullptr;
    int id = pipe->decl[0]->var_id;
    const VariableNode* found = nullptr;
    for (std::size_t i = 1; i < args.size(); ++i) {
      const Node* a = args[i];
      switch (a->type) {
        case NodeType::kVariable: {
          const auto* v = static_cast<const VariableNode*>(a);
          if (v->var_id != id) break;
          if (found != nullptr || v->ident.size() != 1) return nullptr;
          found = v;
          break;
        }
        case NodeType::kField:
        case NodeType::kDot:
        case NodeType::kString:
        case NodeType::kNumber:
        case NodeType::kBool:
        case NodeType::kNil:
          break;
        default:  // pipes, chains, calls: they could read $v too
          return nullptr;
      }
    }
    return found;
  }

  Value eval_pipeline(const Value& dot, const PipeNode* pipe) {
    if (pipe == nullptr) return Value();
    at(pipe);
    Value value;
    MemoSlots::Code code = memo_code(dot, pipe);
    if (const MemoSlots::Known* known = code != MemoSlots::kNo ? memo_->get(pipe) : nullptr) {
      value = known->value;
      at(known->at);
    } else {
      steal_ = stealable_argument(pipe);
      bool have = false;
      for (const CommandNode* cmd : pipe->cmds) {
        value = eval_command(dot, cmd, have ? &value : nullptr);
        have = true;
        unwrap(value);
      }
      steal_ = nullptr;
      if (code != MemoSlots::kNo) memo_->put(pipe, value, node_);
    }
    for (const VariableNode* v : pipe->decl) {
      if (pipe->is_assign)
        set_var(v->var_id, value);
      else
        push(v->var_id, value);
    }
    return value;
  }

  void not_a_function(const std::vector<Node*>& args, const Value* final) {
    if (args.size() > 1 || final != nullptr)
      errorf("can't give argument to non-function " + node_string(args[0]));
  }

  Value eval_command(const Value& dot, const CommandNode* cmd, const Value* final) {
    const Node* first = cmd->args[0];
    switch (first->type) {
      case NodeType::kField:
        return eval_field_node(dot, static_cast<const FieldNode*>(first), &cmd->args, final);
      case NodeType::kChain:
        return eval_chain_node(dot, static_cast<const ChainNode*>(first), &cmd->args, final);
      case NodeType::kIdentifier:
        return eval_function(dot, static_cast<const IdentifierNode*>(first), cmd, &cmd->args,
                             final);
      case NodeType::kPipe:
        not_a_function(cmd->args, final);
        return eval_pipeline(dot, static_cast<const PipeNode*>(first));
      case NodeType::kVariable:
        return eval_variable_node(dot, static_cast<const VariableNode*>(first), &cmd->args, final);
      default:
        break;
    }
    at(first);
    not_a_function(cmd->args, final);
    switch (first->type) {
      case NodeType::kBool:
        return Value::boolean(static_cast<const BoolNode*>(first)->value);
      case NodeType::kDot:
        return dot;
      case NodeType::kNil:
        errorf("nil is not a command");
      case NodeType::kNumber:
        return ideal_constant(static_cast<const NumberNode*>(first));
      case NodeType::kString:
        return Value::string_ref(static_cast<const StringNode*>(first)->text, owner_);
      default:
        errorf("can't evaluate command " + quote(node_string(first)));
    }
  }

  Value ideal_constant(const NumberNode* c) {
    at(c);
    const std::string& t = c->text;
    bool hex_int = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') &&
                   t.find_first_of("pP") == std::string::npos;
    bool rune_int = !t.empty() && t[0] == '\'';
    if (c->is_complex) return Value::complex128(c->complex_real, c->complex_imag);
    if (c->is_float && !hex_int && !rune_int && t.find_first_of(".eEpP") != std::string::npos)
      return Value::float64(c->float64);
    if (c->is_int) return Value::integer(c->int64);
    if (c->is_uint) errorf(t + " overflows int");
    return Value();
  }

  Value eval_field_node(const Value& dot, const FieldNode* field, const std::vector<Node*>* args,
                        const Value* final) {
    at(field);
    if (final == nullptr && (args == nullptr || args->size() == 1)) {
      if (MemoSlots::Code code = memo_code(dot, field); code != MemoSlots::kNo) {
        if (const MemoSlots::Known* known = memo_->get(field)) {
          at(known->at);
          return known->value;
        }
        Value v = eval_field_chain(dot, dot, field, field->ident, 0, args, final);
        memo_->put(field, v, node_);
        return v;
      }
    }
    return eval_field_chain(dot, dot, field, field->ident, 0, args, final);
  }

  Value eval_chain_node(const Value& dot, const ChainNode* chain, const std::vector<Node*>* args,
                        const Value* final) {
    at(chain);
    if (chain->field.empty()) errorf("internal error: no fields in evalChainNode");
    if (chain->node->type == NodeType::kNil)
      errorf("indirection through explicit nil in " + node_string(chain));
    if (final == nullptr && (args == nullptr || args->size() == 1)) {
      if (MemoSlots::Code code = memo_code(dot, chain); code != MemoSlots::kNo) {
        if (const MemoSlots::Known* known = memo_->get(chain)) {
          at(known->at);
          return known->value;
        }
        Value pipe = eval_arg(dot, ArgType::none(), chain->node);
        Value v = eval_field_chain(dot, pipe, chain, chain->field, 0, args, final);
        memo_->put(chain, v, node_);
        return v;
      }
    }
    Value pipe = eval_arg(dot, ArgType::none(), chain->node);
    return eval_field_chain(dot, pipe, chain, chain->field, 0, args, final);
  }

  Value eval_variable_node(const Value& dot, const VariableNode* v, const std::vector<Node*>* args,
                           const Value* final) {
    at(v);
    const Value& value = var_value(v->var_id);
    if (v->ident.size() == 1) {
      if (args != nullptr) not_a_function(*args, final);
      if (v == steal_) {
        steal_ = nullptr;
        return std::move(var_slot(v->var_id));
      }
      return value;
    }
    return eval_field_chain(dot, value, v, v->ident, 1, args, final);
  }

  Value eval_field_chain(const Value& dot, const Value& receiver, const Node* node,
                         const std::vector<std::string>& ident, std::size_t from,
                         const std::vector<Node*>* args, const Value* final) {
    std::size_t n = ident.size();
    if (from + 1 == n) return eval_field(dot, ident[from], node, args, final, receiver);
    Value r = eval_field(dot, ident[from], node, nullptr, nullptr, receiver);
    for (std::size_t i = from + 1; i + 1 < n; ++i)
      r = eval_field(dot, ident[i], node, nullptr, nullptr, r);
    return eval_field(dot, ident[n - 1], node, args, final, r);
  }

  Value eval_field(const Value& dot, const std::string& name, const Node* node,
                   const std::vector<Node*>* args, const Value* final, const Value& receiver) {
    if (receiver.is_invalid()) return Value();
    // Go names the receiver's static type: interface {} for a value read from an
    // interface slot. Only needed for errors, so computed lazily.
    auto typ = [&receiver] {
      return receiver.boxed() || receiver.is_nil() ? std::string("interface {}")
                                                   : go_type_name(receiver);
    };
    if (receiver.is_nil()) errorf("nil pointer evaluating " + typ() + "." + name);
    bool has_args = (args != nullptr && args->size() > 1) || final != nullptr;
    switch (receiver.kind()) {
      case Kind::kMap: {
        if (has_args) errorf(name + " is not a method but has arguments");
        const Map* m = receiver.as_map();
        const Value* v = m != nullptr ? m->find(name) : nullptr;
        if (v == nullptr) return Value();
        Value r = *v;
        r.set_boxed(true);
        return r;
      }
      case Kind::kStringMap: {
        if (has_args) errorf(name + " is not a method but has arguments");
        const StringMap* m = receiver.as_string_map();
        const std::string* v = m != nullptr ? m->find(name) : nullptr;
        if (v == nullptr) return Value();
        return Value::string_ref(*v, receiver.owner());
      }
      case Kind::kObject: {
        const Object* o = receiver.as_object();
        if (std::optional<Function> method = o->method(name))
          return eval_call(dot, *method, node, name, args, final);
        std::optional<Value> field = o->field(name);
        if (field) {
          if (o->is_nil()) errorf("nil pointer evaluating " + typ() + "." + name);
          if (has_args) errorf(name + " has arguments but cannot be invoked as function");
          return std::move(*field);
        }
        break;
      }
      default:
        break;
    }
    errorf("can't evaluate field " + name + " in type " + typ());
  }

  Value eval_function(const Value& dot, const IdentifierNode* id, const Node* cmd,
                      const std::vector<Node*>* args, const Value* final) {
    at(id);
    if (id->fn != nullptr) return eval_call(dot, *id->fn, cmd, id->name, args, final);
    return eval_builtin(dot, id->builtin, cmd, id->name, args, final);
  }

  // Checks the argument count and evaluates the arguments for a function whose parameter
  // i has type type_at(i) (i < nparams) and, when `variadic` is set, any number of further
  // arguments of that type, as Go's evalCall does.
  template <class TypeAt>
  ArgVec eval_args(const Value& dot, std::size_t nparams, TypeAt type_at, const ArgType* variadic,
                   const std::string& name, const std::vector<Node*>* args, const Value* final) {
    std::size_t nargs = args != nullptr && !args->empty() ? args->size() - 1 : 0;
    std::size_t num_in = nargs + (final != nullptr ? 1 : 0);
    std::size_t num_fixed = nargs;
    if (variadic != nullptr) {
      num_fixed = nparams;
      if (num_in < num_fixed)
        errorf("wrong number of args for " + name + ": want at least " + std::to_string(nparams) +
               " got " + std::to_string(nargs));
    } else if (num_in != nparams) {
      errorf("wrong number of args for " + name + ": want " + std::to_string(nparams) + " got " +
             std::to_string(num_in));
    }
    ArgVec argv;
    argv.reserve(num_in);
    std::size_t i = 0;
    for (; i < num_fixed && i < nargs; ++i)
      argv.push_back(eval_arg(dot, type_at(i), (*args)[i + 1]));
    if (variadic != nullptr)
      for (; i < nargs; ++i)
        argv.push_back(eval_arg(dot, *variadic, (*args)[i + 1]));
    if (final != nullptr) {
      ArgType t = variadic != nullptr ? *variadic : type_at(nparams - 1);
      if (variadic != nullptr && num_in - 1 < num_fixed) t = type_at(num_in - 1);
      argv.push_back(validate_type(*final, t));
    }
    return argv;
  }

  Value eval_call(const Value& dot, const Function& fn, const Node* node, const std::string& name,
                  const std::vector<Node*>* args, const Value* final) {
    const Signature& sig = fn.signature();
    ArgType variadic;
    if (sig.variadic) variadic = ArgType::of(*sig.variadic);
    ArgVec argv = eval_args(
        dot, sig.params.size(), [&sig](std::size_t i) { return ArgType::of(sig.params[i]); },
        sig.variadic ? &variadic : nullptr, name, args, final);
    Result<Value> r = fn.call(Args(argv.data(), argv.size()));
    if (!r.ok()) {
      at(node);
      errorf("error calling " + name + ": " + r.message());
    }
    return std::move(r).value();
  }

  Value eval_builtin(const Value& dot, Builtin b, const Node* node, const std::string& name,
                     const std::vector<Node*>* args, const Value* final) {
    static const std::vector<ArgType> one_reflect = {ArgType::reflect()};
    static const std::vector<ArgType> two_reflect = {ArgType::reflect(), ArgType::reflect()};
    static const std::vector<ArgType> none;
    static const std::vector<ArgType> format = {ArgType::of(ParamType::string())};
    static const ArgType reflect = ArgType::reflect();
    static const ArgType any = ArgType::of(ParamType::any());

    if (b == Builtin::kAnd || b == Builtin::kOr) {
      std::size_t nargs = args != nullptr && !args->empty() ? args->size() - 1 : 0;
      std::size_t num_in = nargs + (final != nullptr ? 1 : 0);
      if (num_in < 1)
        errorf("wrong number of args for " + name + ": want at least 1 got " +
               std::to_string(nargs));
      Value v;
      for (std::size_t i = 0; i < nargs; ++i) {
        v = eval_arg(dot, reflect, (*args)[i + 1]);
        if (truth(v) == (b == Builtin::kOr)) return v;
      }
      if (final != nullptr) v = validate_type(*final, reflect);
      return v;
    }

    auto fixed = [](const std::vector<ArgType>& v) { return [&v](std::size_t i) { return v[i]; }; };
    ArgVec argv;
    switch (b) {
      case Builtin::kNot:
      case Builtin::kLen:
        argv = eval_args(dot, 1, fixed(one_reflect), nullptr, name, args, final);
        break;
      case Builtin::kNe:
      case Builtin::kLt:
      case Builtin::kLe:
      case Builtin::kGt:
      case Builtin::kGe:
        argv = eval_args(dot, 2, fixed(two_reflect), nullptr, name, args, final);
        break;
      case Builtin::kEq:
      case Builtin::kIndex:
      case Builtin::kSlice:
      case Builtin::kCall:
        argv = eval_args(dot, 1, fixed(one_reflect), &reflect, name, args, final);
        break;
      case Builtin::kPrintf:
        argv = eval_args(dot, 1, fixed(format), &any, name, args, final);
        break;
      default:  // print, println, html, js, urlquery
        argv = eval_args(dot, 0, fixed(none), &any, name, args, final);
        break;
    }
    Result<Value> r = [&]() -> Result<Value> {
      if (b == Builtin::kCall) {
        std::string callee;
        if (args != nullptr && args->size() > 1)
          callee = node_string((*args)[1]);
        else if (final != nullptr)
          callee = sprint_value(*final);
        return builtin_call(callee, Args(argv.data(), argv.size()));
      }
      return call_builtin(b, Args(argv.data(), argv.size()));
    }();
    if (!r.ok()) {
      at(node);
      errorf("error calling " + name + ": " + r.message());
    }
    return std::move(r).value();
  }

  static std::string arg_type_name(const ArgType& t) {
    if (t.mode == ArgType::kReflect) return "reflect.Value";
    return t.param.go_name();
  }

  static bool can_be_nil(const ArgType& t) {
    if (t.mode == ArgType::kReflect) return true;
    switch (t.param.kind) {
      case Kind::kInvalid:
      case Kind::kList:
      case Kind::kMap:
      case Kind::kStringMap:
      case Kind::kObject:
        return true;
      default:
        return false;
    }
  }

  static Value zero_of(const ArgType& t) {
    if (t.mode == ArgType::kReflect) return Value();
    switch (t.param.kind) {
      case Kind::kInvalid:
      case Kind::kObject:
        return Value::nil();
      default:
        return Value::typed_nil(t.param.kind);
    }
  }

  static bool assignable(const Value& v, const ParamType& p) {
    if (v.kind() != p.kind) {
      return false;
    }
    if (p.kind == Kind::kList) {
      const List* l = v.as_list();
      std::string_view elem = l != nullptr ? std::string_view(l->elem_type) : std::string_view();
      return elem == p.type_name;
    }
    if (p.kind == Kind::kObject)
      return p.type_name.empty() || v.as_object()->go_type() == p.type_name;
    return true;
  }

  // By value: an argument just evaluated moves through without a copy.
  Value validate_type(Value value, const ArgType& typ) {
    if (value.is_invalid()) {
      if (typ.mode == ArgType::kNone) return Value();
      if (can_be_nil(typ)) return zero_of(typ);
      errorf("invalid value; expected " + arg_type_name(typ));
    }
    if (typ.mode != ArgType::kParam) return value;
    Value v = std::move(value);
    v.set_boxed(false);
    if (typ.is_any()) return v;
    if (v.is_nil())
      errorf("wrong type for value; expected " + arg_type_name(typ) + "; got interface {}");
    if (assignable(v, typ.param)) return v;
    if (v.kind() == Kind::kObject && typ.param.kind == Kind::kObject) {
      std::string_view vt = v.as_object()->go_type();
      if (vt.size() == typ.param.type_name.size() + 1 && vt[0] == '*' &&
          vt.substr(1) == typ.param.type_name) {
        if (v.as_object()->is_nil())
          errorf("dereference of nil pointer of type " + arg_type_name(typ));
        return v;
      }
    }
    errorf("wrong type for value; expected " + arg_type_name(typ) + "; got " + go_type_name(v));
  }

  Value eval_arg(const Value& dot, const ArgType& typ, const Node* n) {
    at(n);
    switch (n->type) {
      case NodeType::kDot:
        return validate_type(dot, typ);
      case NodeType::kNil:
        if (can_be_nil(typ)) return zero_of(typ);
        errorf("cannot assign nil to " + arg_type_name(typ));
      case NodeType::kField: {
        // No argument list: the field as a command of its own (no arguments, no final value).
        return validate_type(
            eval_field_node(dot, static_cast<const FieldNode*>(n), nullptr, nullptr), typ);
      }
      case NodeType::kVariable:
        return validate_type(
            eval_variable_node(dot, static_cast<const VariableNode*>(n), nullptr, nullptr), typ);
      case NodeType::kPipe:
        return validate_type(eval_pipeline(dot, static_cast<const PipeNode*>(n)), typ);
      case NodeType::kIdentifier:
        return validate_type(
            eval_function(dot, static_cast<const IdentifierNode*>(n), n, nullptr, nullptr), typ);
      case NodeType::kChain:
        return validate_type(
            eval_chain_node(dot, static_cast<const ChainNode*>(n), nullptr, nullptr), typ);
      default:
        break;
    }
    if (typ.mode == ArgType::kReflect || typ.is_any()) return eval_empty_interface(n);
    if (typ.mode == ArgType::kNone)
      errorf("can't handle " + node_string(n) + " for arg of type <nil>");
    const auto* num = n->type == NodeType::kNumber ? static_cast<const NumberNode*>(n) : nullptr;
    switch (typ.param.kind) {
      case Kind::kBool:
        if (n->type == NodeType::kBool)
          return Value::boolean(static_cast<const BoolNode*>(n)->value);
        errorf("expected bool; found " + node_string(n));
      case Kind::kFloat64:
        if (num != nullptr && num->is_float) return Value::float64(num->float64);
        errorf("expected float; found " + node_string(n));
      case Kind::kInt:
      case Kind::kInt64:
        if (num != nullptr && num->is_int) return Value::integer(num->int64, typ.param.kind);
        errorf("expected integer; found " + node_string(n));
      case Kind::kInt32:
        if (num != nullptr && num->is_int)
          return Value::integer(static_cast<std::int32_t>(num->int64), Kind::kInt32);
        errorf("expected integer; found " + node_string(n));
      case Kind::kUint:
      case Kind::kUint64:
        if (num != nullptr && num->is_uint)
          return Value::unsigned_integer(num->uint64, typ.param.kind);
        errorf("expected unsigned integer; found " + node_string(n));
      case Kind::kUint8:
        if (num != nullptr && num->is_uint)
          return Value::unsigned_integer(num->uint64 & 0xFF, Kind::kUint8);
        errorf("expected unsigned integer; found " + node_string(n));
      case Kind::kUint32:
        if (num != nullptr && num->is_uint)
          return Value::unsigned_integer(num->uint64 & 0xFFFFFFFFu, Kind::kUint32);
        errorf("expected unsigned integer; found " + node_string(n));
      case Kind::kString:
        if (n->type == NodeType::kString)
          return Value::string_ref(static_cast<const StringNode*>(n)->text, owner_);
        errorf("expected string; found " + node_string(n));
      default:
        errorf("can't handle " + node_string(n) + " for arg of type " + arg_type_name(typ));
    }
  }

  Value eval_empty_interface(const Node* n) {
    at(n);
    switch (n->type) {
      case NodeType::kBool:
        return Value::boolean(static_cast<const BoolNode*>(n)->value);
      case NodeType::kNumber:
        return ideal_constant(static_cast<const NumberNode*>(n));
      case NodeType::kString:
        return Value::string_ref(static_cast<const StringNode*>(n)->text, owner_);
      default:
        errorf("can't handle assignment of " + node_string(n) + " to empty interface argument");
    }
  }

  void print_value(const Node* n, const Value& v) {
    at(n);
    if (v.is_invalid()) {
      out_ += "<no value>";
      return;
    }
    append_action_value(out_, v);
  }

  const TemplateSet* set_;
  const TreeIndex* index_;
  // Keeps the template's literal strings alive in values that escape into the data.
  std::shared_ptr<const void> owner_;
  std::string& out_;
  const ExecOptions& options_;
  std::size_t out_start_;
  std::uint64_t steps_ = 0;
  bool bounded_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  int nesting_ = 0;
  // The deepest nesting_ and depth_ reached (by the run being remembered).
  int nest_high_ = 0;
  int depth_high_ = 0;
  StackBudget stack_;
  const Node* node_ = nullptr;
  std::string_view tmpl_name_;
  std::vector<Var> vars_;
  std::size_t base_ = 0;
  int depth_ = 0;
  // The argument node whose variable's value moves into the call (stealable_argument).
  const VariableNode* steal_ = nullptr;
  // The constant memo (ExecOptions::memo) and the root data it applies to.
  const MemoSlots* memo_ = nullptr;
  bool runs_ = false;  // the memo's output runs apply (walk_runs)
  const void* root_ = nullptr;
  const Value* root_value_ = nullptr;
  Kind root_kind_ = Kind::kInvalid;
  // The keyed reads' keys and maps of the memo in this execution (keys_absent), by id.
  boost::container::small_vector<std::uint64_t, 2> present_;  // by key id: present
  std::vector<std::optional<Value>> maps_;
};

}  // namespace

api::Status execute_set(const std::shared_ptr<const TemplateSet>& set, std::string_view tmpl,
                        const Value& data, std::string& out, const ExecOptions& options,
                        const TreeIndex* index) {
  auto it = set->trees.find(tmpl);
  if (it == set->trees.end()) {
    if (tmpl == set->name)
      return api::Error{"template: " + std::string(tmpl) + ": " + go_quote(tmpl) +
                        " is an incomplete or empty template"};
    return api::Error{"template: no template " + go_quote(tmpl) + " associated with template " +
                      go_quote(set->name)};
  }
  State s(set, index, out, options);
  try {
    s.run(it->first, it->second, data);
  } catch (const ExecError& e) {
    return api::Error{e.message};
  }
  return api::ok_status();
}

}  // namespace meshop::template_engine::detail
