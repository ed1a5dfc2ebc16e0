// YAML -> JSON: libyaml's event parser (the C parser that go-yaml v2 is a line-by-line port
// of, so the same texts parse and the same ones fail) builds a small node tree per document
// (tags, marks and anchors kept), which is then converted with go-yaml v2's decoding rules
// into a RapidJSON document. See yaml.hpp for the typing contract.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <yaml.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "api/go_format.hpp"
#include "api/yaml.hpp"
#include "api/yaml_resolve.hpp"

namespace meshop::api {
namespace {

using yaml_detail::Resolved;

constexpr std::string_view kLongTagPrefix = "tag:yaml.org,2002:";

// A position in the text, 0-based as libyaml reports it.
struct Mark {
  std::size_t line = 0;
  std::size_t column = 0;
};

Mark mark_of(const yaml_mark_t& m) {
  return Mark{m.line, m.column};
}

struct Node {
  enum Kind : std::uint8_t { kNull, kScalar, kSequence, kMapping, kAlias };
  Kind kind = kNull;
  bool complete = true;
  std::uint32_t target = 0;  // kAlias: the anchored node
  Mark mark;
  std::string tag;  // "?" plain untagged, "!" quoted/block untagged, else the resolved tag
  std::string value;
  std::vector<std::uint32_t> children;
};

// Builds the node tree of one document from parser events.
class TreeBuilder {
 public:
  std::vector<Node> nodes;
  std::vector<std::uint32_t> open;
  std::unordered_map<std::string, std::uint32_t> anchors;

  // False when the alias names no anchor defined before it.
  bool alias(const Mark& mark, const std::string& anchor) {
    auto it = anchors.find(anchor);
    if (it == anchors.end()) return false;
    std::uint32_t idx = add(Node::kAlias, mark, nullptr);
    nodes[idx].target = it->second;
    return true;
  }
  void scalar(const Mark& mark, std::string tag, const char* anchor, const char* value,
              std::size_t length) {
    std::uint32_t idx = add(Node::kScalar, mark, anchor);
    nodes[idx].tag = std::move(tag);
    nodes[idx].value.assign(value, length);
  }
  void start(Node::Kind kind, const Mark& mark, const char* tag, const char* anchor) {
    std::uint32_t idx = add(kind, mark, anchor);
    nodes[idx].tag = tag != nullptr ? tag : "?";
    nodes[idx].complete = false;
    open.push_back(idx);
  }
  void end() {
    if (open.empty()) return;
    nodes[open.back()].complete = true;
    open.pop_back();
  }

 private:
  std::uint32_t add(Node::Kind kind, const Mark& mark, const char* anchor) {
    auto idx = static_cast<std::uint32_t>(nodes.size());
    nodes.emplace_back();
    nodes.back().kind = kind;
    nodes.back().mark = mark;
    if (!open.empty()) nodes[open.back()].children.push_back(idx);
    if (anchor != nullptr) anchors[anchor] = idx;  // a later anchor of the same name wins
    return idx;
  }
};

struct DecodeFailure {
  Mark mark;
  std::string message;
};

std::string short_tag(std::string_view tag) {
  if (tag.substr(0, kLongTagPrefix.size()) == kLongTagPrefix) {
    return "!!" + std::string(tag.substr(kLongTagPrefix.size()));
  }
  return std::string(tag);
}

// Base64 (standard alphabet, padding required as Go's StdEncoding; newlines ignored as go-yaml's
// !!binary input may be folded).
bool decode_base64(std::string_view in, std::string& out) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string clean;
  for (char c : in) {
    if (c != '\n' && c != '\r') clean.push_back(c);
  }
  if (clean.size() % 4 != 0) return false;
  for (std::size_t i = 0; i < clean.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = clean[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == clean.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = val(c)) < 0) {
        return false;
      }
    }
    std::uint32_t n = (static_cast<std::uint32_t>(v[0]) << 18) |
                      (static_cast<std::uint32_t>(v[1]) << 12) |
                      (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<char>((n >> 16) & 0xFF));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
  }
  return true;
}

// Converts a document tree into JSON following go-yaml v2's decoder into interface{} and
// sigs.k8s.io/yaml's conversion of that into JSON-able values.
class Converter {
 public:
  Converter(const std::vector<Node>& nodes, Allocator& alloc, bool strict)
      : nodes_(nodes), alloc_(alloc), strict_(strict) {}

  void convert(std::uint32_t idx, Value& out) {
    DepthGuard guard(depth_, nodes_[idx]);
    count(idx);
    const Node& n = nodes_[idx];
    switch (n.kind) {
      case Node::kNull:
        out.SetNull();
        return;
      case Node::kAlias:
        return alias(n, out, [&](const Node& target, Value& o) {
          convert(static_cast<std::uint32_t>(&target - nodes_.data()), o);
        });
      case Node::kScalar:
        return scalar(n, out);
      case Node::kSequence:
        out.SetArray();
        out.Reserve(static_cast<rapidjson::SizeType>(n.children.size()), alloc_);
        for (std::uint32_t child : n.children) {
          Value v;
          convert(child, v);
          out.PushBack(v, alloc_);
        }
        return;
      case Node::kMapping: {
        out.SetObject();
        std::unordered_set<std::string> typed_keys;
        mapping_into(n, out, typed_keys);
        return;
      }
    }
  }

 private:
  template <class F>
  void alias(const Node& n, Value& out, F&& then) {
    const Node& target = nodes_[n.target];
    if (!target.complete || alias_active_.count(n.target) != 0) {
      throw DecodeFailure{n.mark, "anchor value contains itself"};
    }
    alias_active_[n.target] = true;
    ++alias_depth_;
    then(target, out);
    --alias_depth_;
    alias_active_.erase(n.target);
  }

  // go-yaml's guard against "billion laughs": once enough nodes were decoded, too large a
  // share of them coming from alias expansion is an error.
  void count(std::uint32_t idx) {
    ++decode_count_;
    if (alias_depth_ > 0) ++alias_count_;
    if (alias_count_ > 100 && decode_count_ > 1000) {
      double ratio = static_cast<double>(alias_count_) / static_cast<double>(decode_count_);
      double allowed;
      if (decode_count_ <= 400000) {
        allowed = 0.99;
      } else if (decode_count_ >= 4000000) {
        allowed = 0.10;
      } else {
        allowed = 0.99 - 0.89 * (static_cast<double>(decode_count_ - 400000) / 3600000.0);
      }
      if (ratio > allowed) {
        throw DecodeFailure{nodes_[idx].mark, "document contains excessive aliasing"};
      }
    }
  }

  // A scalar's typed meaning (go-yaml resolve with the node's tag).
  Resolved resolve_scalar(const Node& n, std::string& text) {
    text = n.value;
    if (n.tag == "!") return Resolved{};  // quoted or block scalar: always a string
    if (n.tag == "?" || n.tag.empty()) return yaml_detail::resolve_plain(n.value);
    std::string tag = short_tag(n.tag);
    if (tag == "!!str") return Resolved{};
    if (tag == "!!binary") {
      std::string decoded;
      if (!decode_base64(n.value, decoded)) {
        throw DecodeFailure{n.mark, "!!binary value contains invalid base64 data"};
      }
      text = std::move(decoded);
      return Resolved{};
    }
    if (tag != "!!bool" && tag != "!!int" && tag != "!!float" && tag != "!!null" &&
        tag != "!!timestamp") {
      return Resolved{};  // an application tag: go-yaml keeps the string
    }
    Resolved r = yaml_detail::resolve_plain(n.value);
    auto name = [](Resolved::Kind k) -> std::string {
      switch (k) {
        case Resolved::kString:
          return "!!str";
        case Resolved::kNull:
          return "!!null";
        case Resolved::kBool:
          return "!!bool";
        case Resolved::kInt:
        case Resolved::kUint:
          return "!!int";
        case Resolved::kFloat:
          return "!!float";
        case Resolved::kTimestamp:
          return "!!timestamp";
      }
      return "!!str";
    };
    std::string got = name(r.kind);
    if (got == tag) return r;
    if (tag == "!!float" && r.kind == Resolved::kInt) {
      r.kind = Resolved::kFloat;
      r.float_value = static_cast<double>(r.int_value);
      return r;
    }
    throw DecodeFailure{n.mark, "cannot decode " + got + " `" + n.value + "` as a " + tag};
  }

  void scalar(const Node& n, Value& out) {
    std::string text;
    Resolved r = resolve_scalar(n, text);
    switch (r.kind) {
      case Resolved::kString:
      case Resolved::kTimestamp:  // into interface{}, go-yaml v2 keeps timestamps as strings
        out.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), alloc_);
        return;
      case Resolved::kNull:
        out.SetNull();
        return;
      case Resolved::kBool:
        out.SetBool(r.boolean);
        return;
      case Resolved::kInt:
        out.SetInt64(r.int_value);
        return;
      case Resolved::kUint:
        out.SetUint64(r.uint_value);
        return;
      case Resolved::kFloat:
        // NaN and infinities are checked once the document is complete: a later duplicate key
        // may still replace them, as it does in go-yaml's map before json.Marshal sees it.
        out.SetDouble(r.float_value);
        return;
    }
  }

  static bool is_merge_key(const Node& n) {
    return n.kind == Node::kScalar && n.value == "<<" &&
           (n.tag == "?" || short_tag(n.tag) == "!!merge");
  }

  const Node& deref(const Node& n) const { return n.kind == Node::kAlias ? nodes_[n.target] : n; }

  // `typed_keys` (strict mode): the keys already set, with their YAML type, because go-yaml
  // compares typed keys (1 and "1" are different keys to it).
  void mapping_into(const Node& n, Value& out, std::unordered_set<std::string>& typed_keys) {
    for (std::size_t i = 0; i + 1 < n.children.size(); i += 2) {
      const Node& key = nodes_[n.children[i]];
      if (is_merge_key(key)) {
        merge(n.children[i + 1], out, typed_keys);
        continue;
      }
      count(n.children[i]);
      bool is_string = true;
      std::string name = key_string(key, is_string);
      Value v;
      convert(n.children[i + 1], v);
      if (strict_) {
        std::string typed = (is_string ? "s:" : "n:") + name;
        if (!typed_keys.insert(typed).second) {
          throw DecodeFailure{
              nodes_[n.children[i + 1]].mark,
              "key " + (is_string ? "\"" + name + "\"" : name) + " already set in map"};
        }
      }
      set(out, name, v);
    }
  }

  void set(Value& out, const std::string& name, Value& v) {
    if (Value* existing = find_member(out, name)) {
      *existing = v;  // the later value wins; the key keeps its first position
      return;
    }
    out.AddMember(make_string(name, alloc_), v, alloc_);
  }

  void merge(std::uint32_t idx, Value& out, std::unordered_set<std::string>& typed_keys) {
    const Node& n = nodes_[idx];
    auto want_map = [&] {
      throw DecodeFailure{n.mark, "map merge requires map or sequence of maps as the value"};
    };
    auto merge_mapping = [&](std::uint32_t m) {
      const Node& mn = nodes_[m];
      count(m);
      if (mn.kind == Node::kAlias) {
        if (deref(mn).kind != Node::kMapping) want_map();
        alias(mn, out, [&](const Node& target, Value& o) {
          count(static_cast<std::uint32_t>(&target - nodes_.data()));
          mapping_into(target, o, typed_keys);
        });
      } else if (mn.kind == Node::kMapping) {
        mapping_into(mn, out, typed_keys);
      } else {
        want_map();
      }
    };
    if (n.kind == Node::kMapping || n.kind == Node::kAlias) {
      merge_mapping(idx);
    } else if (n.kind == Node::kSequence) {
      // Earlier maps take precedence: apply them last.
      for (auto it = n.children.rbegin(); it != n.children.rend(); ++it)
        merge_mapping(*it);
    } else {
      want_map();
    }
  }

  // A mapping key as sigs.k8s.io/yaml turns it into a JSON member name.
  std::string key_string(const Node& key_node, bool& is_string) {
    const Node& k = deref(key_node);
    if (k.kind == Node::kSequence || k.kind == Node::kMapping) {
      throw DecodeFailure{key_node.mark,
                          "invalid map key: a " +
                              std::string(k.kind == Node::kSequence ? "sequence" : "mapping") +
                              " cannot be a key"};
    }
    if (k.kind == Node::kNull) {
      throw DecodeFailure{key_node.mark, "unsupported map key: null"};
    }
    std::string text;
    Resolved r = resolve_scalar(k, text);
    is_string = r.kind == Resolved::kString || r.kind == Resolved::kTimestamp;
    switch (r.kind) {
      case Resolved::kString:
      case Resolved::kTimestamp:
        return text;
      case Resolved::kNull:
        throw DecodeFailure{key_node.mark, "unsupported map key: null"};
      case Resolved::kBool:
        return r.boolean ? "true" : "false";
      case Resolved::kInt:
        return std::to_string(r.int_value);
      case Resolved::kUint:
        throw DecodeFailure{key_node.mark,
                            "unsupported map key of type uint64: " + std::to_string(r.uint_value)};
      case Resolved::kFloat: {
        std::string s = go_format_float32_g(r.float_value);
        if (s == "+Inf") return ".inf";
        if (s == "-Inf") return "-.inf";
        if (s == "NaN") return ".nan";
        return s;
      }
    }
    return text;
  }

  // Alias expansion can nest documents far deeper than the text does; every later walk over
  // the DOM is recursive, so the depth is bounded here.
  static constexpr int kMaxDepth = 10000;
  struct DepthGuard {
    DepthGuard(int& depth, const Node& n) : depth_(depth) {
      if (++depth_ > kMaxDepth) {
        --depth_;
        throw DecodeFailure{n.mark,
                            "document nested deeper than " + std::to_string(kMaxDepth) + " levels"};
      }
    }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    int& depth_;
  };

  const std::vector<Node>& nodes_;
  Allocator& alloc_;
  bool strict_;
  int depth_ = 0;
  std::uint64_t decode_count_ = 0;
  std::uint64_t alias_count_ = 0;
  int alias_depth_ = 0;
  std::unordered_map<std::uint32_t, bool> alias_active_;
};

// The JSON pointer of the first NaN or infinity left in `v`, if any.
bool find_non_finite(const Value& v, std::string& pointer, double& value) {
  if (v.IsDouble() && !std::isfinite(v.GetDouble())) {
    value = v.GetDouble();
    return true;
  }
  if (v.IsArray()) {
    for (rapidjson::SizeType i = 0; i < v.Size(); ++i) {
      if (find_non_finite(v[i], pointer, value)) {
        pointer.insert(0, "/" + std::to_string(i));
        return true;
      }
    }
  } else if (v.IsObject()) {
    for (const auto& m : v.GetObject()) {
      if (find_non_finite(m.value, pointer, value)) {
        pointer.insert(0, "/" + escape_json_pointer_token(string_view_of(m.name)));
        return true;
      }
    }
  }
  return false;
}

// A scalar value the fast reader read alone on the rest of its line (`key: value`, `- value`):
// `start` is where the value began (the byte after the key's colon or the entry's dash), `ind`
// and `in_mapping` the column and kind of the block collection that owns it, `node` its node.
struct ScalarSlot {
  std::size_t start = 0;
  std::size_t ind = 0;
  bool in_mapping = false;
  std::uint32_t node = 0;
};

// A reader for the block-style subset of YAML that templates render and people write by hand:
// block mappings and sequences (indentless ones too), single-line plain, single- and
// double-quoted scalars, literal block scalars (`|`, `|-`, `|+`), flow mappings and sequences
// of such scalars (over several lines, trailing commas allowed), comments and blank lines, in
// printable ASCII without tabs. It builds the same node tree as the libyaml event loop below,
// about ten times faster (libyaml's scanner was half the cost of an injection). Anything
// outside the subset, and anything it is not sure of, declines (returns false): the text then
// takes the libyaml path, which also produces every syntax error. It never reports an error
// itself, so what parses, what fails and every message stay libyaml's and go-yaml's; the
// agreement of the two trees is checked by yaml_detail::fast_reader_agrees (unit test over
// upstream Istio's YAML files, and the YAML fuzzer).
class FastReader {
 public:
  FastReader(std::string_view text, std::vector<Node>& nodes,
             std::vector<ScalarSlot>* slots = nullptr)
      : t_(text), nodes_(nodes), slots_(slots) {}

  bool run() {
    if (!acceptable_text()) return false;
    if (!skip_to_content()) return false;  // empty or comments only: libyaml decides
    std::size_t ind = column();
    if (ind != 0) return false;
    bool ok = false;
    if (peek() == '{' || peek() == '[') {
      ok = flow_root();
    } else if (at_sequence_entry()) {
      ok = block_sequence(ind, kNone);
    } else if (line_is_key()) {
      ok = block_mapping(ind, kNone);
    }
    if (!ok) return false;
    return !skip_to_content();  // nothing may follow the root collection
  }

  // Reads the value of a block collection that starts at `slot.start` as run() would have read
  // it at that point (the text before it being the same), after the nodes already there (the
  // first is the parent). True when it is a single scalar that ends on its line: the one node
  // added. The caller checks the line is acceptable_text().
  bool one_line_scalar(const ScalarSlot& slot) {
    p_ = slot.start;
    if (rest_of_line_empty()) return false;  // the value is on the next lines, or null
    p_ = slot.start;
    std::size_t before = nodes_.size();
    if (!value(slot.ind, 0, slot.in_mapping)) return false;
    if (nodes_.size() != before + 1 || nodes_.back().kind != Node::kScalar) return false;
    std::size_t eol = t_.find('\n', slot.start);
    return p_ == (eol == std::string_view::npos ? t_.size() : eol);
  }

 private:
  static constexpr std::uint32_t kNone = static_cast<std::uint32_t>(-1);
  static constexpr std::size_t kMaxDepth = 200;

  // Printable ASCII, newlines, no tabs or carriage returns; no directives or document markers.
  bool acceptable_text() const {
    for (char ch : t_) {
      auto c = static_cast<unsigned char>(ch);
      if ((c < 0x20 && c != '\n') || c >= 0x7F) return false;
    }
    std::size_t line = 0;
    while (line < t_.size()) {
      std::string_view rest = t_.substr(line, 4);
      if (!rest.empty() && rest[0] == '%') return false;
      if (rest.substr(0, 3) == "---" || rest.substr(0, 3) == "...") return false;
      std::size_t nl = t_.find('\n', line);
      if (nl == std::string_view::npos) break;
      line = nl + 1;
    }
    return true;
  }

  char peek(std::size_t ahead = 0) const { return p_ + ahead < t_.size() ? t_[p_ + ahead] : '\0'; }
  bool at_eol() const { return p_ >= t_.size() || t_[p_] == '\n'; }
  static bool blank_or_end(char c) { return c == ' ' || c == '\n' || c == '\0'; }
  std::size_t column() const {
    std::size_t nl = p_ == 0 ? std::string_view::npos : t_.rfind('\n', p_ - 1);
    return nl == std::string_view::npos ? p_ : p_ - nl - 1;
  }
  void skip_spaces() {
    while (p_ < t_.size() && t_[p_] == ' ')
      ++p_;
  }
  // After a value: spaces, then a comment or the end of the line. Leaves p_ at the newline.
  bool rest_of_line_empty() {
    skip_spaces();
    if (at_eol()) return true;
    if (t_[p_] == '#' && p_ > 0 && (t_[p_ - 1] == ' ' || t_[p_ - 1] == '\n')) {
      while (!at_eol())
        ++p_;
      return true;
    }
    return false;
  }

  // Moves to the next content: the rest of the current line if it holds any (not spaces, not
  // a comment), else the first content of a later line. False at the end of the text.
  bool skip_to_content() {
    for (;;) {
      skip_spaces();
      if (p_ < t_.size() && t_[p_] == '#' && (p_ == 0 || t_[p_ - 1] == ' ' || t_[p_ - 1] == '\n')) {
        while (!at_eol())
          ++p_;
      }
      if (p_ >= t_.size()) return false;
      if (t_[p_] != '\n') return true;
      ++p_;
    }
  }

  std::uint32_t add(Node::Kind kind, std::uint32_t parent, std::string tag) {
    auto idx = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
    nodes_.back().kind = kind;
    nodes_.back().tag = std::move(tag);
    if (parent != kNone) nodes_[parent].children.push_back(idx);
    return idx;
  }
  void scalar(std::uint32_t parent, bool plain, std::string value) {
    std::uint32_t idx = add(Node::kScalar, parent, plain ? "?" : "!");
    nodes_[idx].value = std::move(value);
  }

  bool at_sequence_entry() const { return peek() == '-' && blank_or_end(peek(1)); }

  // A plain scalar may not start with an indicator (YAML 1.1 as libyaml reads it).
  bool plain_start(bool flow) const {
    char c = peek();
    switch (c) {
      case '-':
        return !blank_or_end(peek(1)) &&
               !(flow && std::string_view(",[]{}").find(peek(1)) != std::string_view::npos);
      case '?':
      case ':':
        return !flow && !blank_or_end(peek(1));
      case ',':
      case '[':
      case ']':
      case '{':
      case '}':
      case '#':
      case '&':
      case '*':
      case '!':
      case '|':
      case '>':
      case '\'':
      case '"':
      case '%':
      case '@':
      case '`':
      case '\0':
      case '\n':
      case ' ':
        return false;
      default:
        return true;
    }
  }

  // A single-line plain scalar from p_. Block context: ends at ": ", ":" at the end of the line,
  // " #" or the end of the line; flow context also at , [ ] { } and ":" before one of them.
  // `stop_at_colon` is false when a value is scanned, where ": " means the text is not in the
  // subset (libyaml: "mapping values are not allowed in this context").
  bool plain(bool flow, std::string& out, bool& ended_at_colon) {
    ended_at_colon = false;
    if (!plain_start(flow)) return false;
    std::size_t start = p_;
    std::size_t end = p_;  // one past the last non-space character
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '\n') break;
      if (c == ':' && blank_or_end(peek(1))) {
        ended_at_colon = true;
        break;
      }
      if (c == ':' && flow) return false;  // libyaml versions differ on "a:b" in flow context
      if (c == '#' && p_ > start && t_[p_ - 1] == ' ') break;
      if (flow && std::string_view(",[]{}").find(c) != std::string_view::npos) break;
      ++p_;
      if (c != ' ') end = p_;
    }
    out.assign(t_.substr(start, end - start));
    return !out.empty();
  }

  // A single-line quoted scalar at p_ (on its quote). Escapes beyond the common ones decline.
  bool quoted(std::string& out) {
    char q = t_[p_];
    ++p_;
    out.clear();
    while (p_ < t_.size()) {
      char c = t_[p_];
      if (c == '\n') return false;  // folded over lines: libyaml's business
      if (q == '\'') {
        if (c == '\'') {
          if (peek(1) == '\'') {
            out.push_back('\'');
            p_ += 2;
            continue;
          }
          ++p_;
          return true;
        }
        out.push_back(c);
        ++p_;
        continue;
      }
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c != '\\') {
        out.push_back(c);
        ++p_;
        continue;
      }
      char e = peek(1);
      p_ += 2;
      switch (e) {
        case '"':
        case '\\':
          out.push_back(e);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'u': {
          if (p_ + 4 > t_.size()) return false;
          unsigned v = 0;
          for (int i = 0; i < 4; ++i) {
            char h = t_[p_ + static_cast<std::size_t>(i)];
            int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
            if (d < 0) return false;
            v = v * 16 + static_cast<unsigned>(d);
          }
          p_ += 4;
          if (v < 0x20 || (v >= 0x7F && v < 0xA0) || (v >= 0xD800 && v <= 0xDFFF) || v == 0xFEFF ||
              v == 0x85 || v == 0x2028 || v == 0x2029)
            return false;  // control characters, surrogates, line breaks: libyaml decides
          if (v < 0x80) {
            out.push_back(static_cast<char>(v));
          } else if (v < 0x800) {
            out.push_back(static_cast<char>(0xC0 | (v >> 6)));
            out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
          } else {
            out.push_back(static_cast<char>(0xE0 | (v >> 12)));
            out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3F)));
            out.push_back(static_cast<char>(0x80 | (v & 0x3F)));
          }
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  // Does the line from p_ start with a mapping key (a scalar followed by ": " or ":" at the
  // end of the line)? p_ is not moved.
  bool line_is_key() {
    std::size_t save = p_;
    bool key = false;
    std::string s;
    if (peek() == '"' || peek() == '\'') {
      key = quoted(s) && peek() == ':' && blank_or_end(peek(1));
    } else {
      bool colon = false;
      key = plain(false, s, colon) && colon;
    }
    p_ = save;
    return key;
  }

  // The key at p_, then ':'; p_ after the colon.
  bool key(std::uint32_t mapping) {
    std::size_t start = p_;
    std::string s;
    bool is_plain = true;
    if (peek() == '"' || peek() == '\'') {
      if (!quoted(s)) return false;
      is_plain = false;
    } else {
      bool colon = false;
      if (!plain(false, s, colon) || !colon) return false;
    }
    if (peek() != ':' || !blank_or_end(peek(1))) return false;
    if (p_ - start > 1000) return false;  // libyaml's simple keys are at most 1024 characters
    ++p_;
    scalar(mapping, is_plain, std::move(s));
    return true;
  }

  bool block_mapping(std::size_t ind, std::uint32_t parent) {
    if (++depth_ > kMaxDepth) return false;
    std::uint32_t m = add(Node::kMapping, parent, "?");
    bool first = true;
    for (;;) {
      if (!first) {
        if (!skip_to_content()) break;
        std::size_t col = column();
        if (col < ind) break;
        if (col > ind) return false;
        if (at_sequence_entry())
          break;  // the owner's indentless sequence or an error: let
                  // the caller look at it
      }
      first = false;
      if (!key(m)) return false;
      if (!value(ind, m, true)) return false;
    }
    --depth_;
    return true;
  }

  bool block_sequence(std::size_t ind, std::uint32_t parent) {
    if (++depth_ > kMaxDepth) return false;
    std::uint32_t s = add(Node::kSequence, parent, "?");
    bool first = true;
    for (;;) {
      if (!first) {
        if (!skip_to_content()) break;
        std::size_t col = column();
        if (col < ind) break;
        if (col > ind) return false;
        if (!at_sequence_entry()) break;
      }
      first = false;
      if (!at_sequence_entry()) return false;
      ++p_;  // the dash
      if (!value(ind, s, false)) return false;
    }
    --depth_;
    return true;
  }

  // The value after a key's colon (in_mapping) or a sequence entry's dash, owned by a block
  // collection at column `ind`.
  bool value(std::size_t ind, std::uint32_t parent, bool in_mapping) {
    std::size_t save = p_;
    if (rest_of_line_empty()) {
      // The value is on the next lines: a more indented block collection, a mapping's
      // indentless sequence, or nothing (null).
      std::size_t after = p_;
      if (!skip_to_content()) {
        scalar(parent, true, "");
        p_ = after;
        return true;
      }
      std::size_t col = column();
      if (col > ind) {
        if (at_sequence_entry()) return block_sequence(col, parent);
        if (line_is_key()) return block_mapping(col, parent);
        return false;  // a scalar on the next line, a flow collection, ...: not in the subset
      }
      if (col == ind && in_mapping && at_sequence_entry()) return block_sequence(col, parent);
      scalar(parent, true, "");
      p_ = after;
      return true;
    }
    p_ = save;
    skip_spaces();
    if (p_ == save && !in_mapping) return false;  // "-x" is not an entry (checked before)
    std::size_t col = column();
    char c = peek();
    if (c == '"' || c == '\'') {
      std::string s;
      if (!quoted(s)) return false;
      if (!in_mapping && peek() == ':') return false;  // `- "k": v`: a compact mapping
      scalar(parent, false, std::move(s));
      return rest_of_line_empty() && note_slot(save, ind, in_mapping);
    }
    if (c == '{' || c == '[') {
      if (!flow_node(parent)) return false;
      return rest_of_line_empty();
    }
    if (c == '|') return literal(ind, parent);
    if (!in_mapping) {
      // A compact collection in a sequence entry: "- key: v" or "- - x".
      if (at_sequence_entry()) return block_sequence(col, parent);
      if (line_is_key()) return block_mapping(col, parent);
    }
    std::string s;
    bool colon = false;
    if (!plain(false, s, colon) || colon) return false;
    scalar(parent, true, std::move(s));
    return rest_of_line_empty() && note_slot(save, ind, in_mapping);
  }

  // The scalar just read, from `start` to the end of its line, is a value ReusableYaml may
  // read again alone.
  bool note_slot(std::size_t start, std::size_t ind, bool in_mapping) {
    if (slots_ != nullptr)
      slots_->push_back(
          ScalarSlot{start, ind, in_mapping, static_cast<std::uint32_t>(nodes_.size() - 1)});
    return true;
  }

  // A literal block scalar: `|`, `|-` or `|+`, content more indented than `ind`.
  bool literal(std::size_t ind, std::uint32_t parent) {
    ++p_;
    char chomp = ' ';
    if (peek() == '-' || peek() == '+') {
      chomp = peek();
      ++p_;
    }
    if (!rest_of_line_empty()) return false;  // indentation indicators and the rest
    if (p_ >= t_.size()) return false;
    ++p_;  // the newline
    // The first line fixes the indentation; leading blank lines decline.
    std::size_t line = p_;
    skip_spaces();
    std::size_t indent = p_ - line;
    if (at_eol() || indent <= ind) return false;
    p_ = line;
    std::string value;
    std::size_t pending_breaks = 0;  // blank lines not yet known to be inside the content
    bool any = false;
    while (p_ < t_.size()) {
      line = p_;
      skip_spaces();
      std::size_t spaces = p_ - line;
      if (at_eol()) {
        if (spaces > indent) return false;  // spaces beyond the indentation are content
        ++pending_breaks;
        if (p_ >= t_.size()) break;
        ++p_;
        continue;
      }
      if (spaces < indent) {
        p_ = line;
        break;
      }
      if (any) value.push_back('\n');
      value.append(pending_breaks, '\n');
      pending_breaks = 0;
      std::size_t nl = t_.find('\n', line);
      std::size_t end = nl == std::string_view::npos ? t_.size() : nl;
      value.append(t_.substr(line + indent, end - line - indent));
      any = true;
      p_ = end;
      if (p_ < t_.size()) ++p_;
      // A line that ended the text without a newline: its break is not there.
      if (nl == std::string_view::npos) return false;  // no final line break: decline
    }
    if (chomp != '-') value.push_back('\n');
    if (chomp == '+') value.append(pending_breaks, '\n');
    scalar(parent, false, std::move(value));
    return true;
  }

  // Flow context: spaces, newlines and comments between tokens.
  bool flow_space() {
    for (;;) {
      std::size_t start = p_;
      skip_spaces();
      if (p_ < t_.size() && t_[p_] == '#') {
        if (p_ == start && p_ > 0 && t_[p_ - 1] != '\n' && t_[p_ - 1] != ' ') return false;
        while (!at_eol())
          ++p_;
      }
      if (p_ < t_.size() && t_[p_] == '\n') {
        ++p_;
        continue;
      }
      return p_ < t_.size();
    }
  }

  bool flow_root() {
    if (!flow_node(kNone)) return false;
    return true;
  }

  bool flow_node(std::uint32_t parent) {
    if (++depth_ > kMaxDepth) return false;
    bool mapping = peek() == '{';
    char close = mapping ? '}' : ']';
    std::uint32_t n = add(mapping ? Node::kMapping : Node::kSequence, parent, "?");
    ++p_;
    for (;;) {
      if (!flow_space()) return false;
      if (peek() == close) {
        ++p_;
        break;
      }
      if (mapping) {
        std::size_t key_start = p_;
        if (!flow_scalar(n, true)) return false;
        if (p_ - key_start > 1000) return false;
        skip_spaces();  // a simple key and its ':' are on one line
        if (peek() != ':' || !blank_or_end(peek(1))) return false;
        ++p_;
        if (!flow_space()) return false;
        if (peek() == ',' || peek() == close) {
          scalar(n, true, "");
        } else if (!flow_value(n)) {
          return false;
        }
      } else {
        if (!flow_value(n)) return false;
        std::size_t save = p_;
        if (!flow_space()) return false;
        if (peek() == ':') return false;  // a single-pair mapping inside a sequence
        p_ = save;
      }
      if (!flow_space()) return false;
      if (peek() == ',') {
        ++p_;
        continue;
      }
      if (peek() == close) {
        ++p_;
        break;
      }
      return false;
    }
    --depth_;
    return true;
  }

  bool flow_value(std::uint32_t parent) {
    if (peek() == '{' || peek() == '[') return flow_node(parent);
    return flow_scalar(parent, false);
  }

  // A key or value scalar in flow context; a plain one must end on its line at an indicator
  // (a plain scalar continued on the next line is folded: libyaml's business).
  bool flow_scalar(std::uint32_t parent, bool is_key) {
    std::string s;
    if (peek() == '"' || peek() == '\'') {
      if (!quoted(s)) return false;
      scalar(parent, false, std::move(s));
      return true;
    }
    bool colon = false;
    if (!plain(true, s, colon)) return false;
    if (colon && !is_key) return false;
    if (at_eol() || peek() == '#' || peek() == ' ') {
      std::size_t save = p_;
      if (!flow_space()) return false;
      char c = peek();
      if (c != ',' && c != ']' && c != '}' && c != ':') return false;
      if (c == ':' && !is_key) return false;
      p_ = save;
    }
    scalar(parent, true, std::move(s));
    return true;
  }

  std::string_view t_;
  std::vector<Node>& nodes_;
  std::vector<ScalarSlot>* slots_;
  std::size_t p_ = 0;
  std::size_t depth_ = 0;
};

bool fast_tree(std::string_view text, std::vector<Node>& nodes) {
  nodes.clear();
  if (text.size() > (1u << 24)) return false;
  FastReader reader(text, nodes);
  if (reader.run() && !nodes.empty()) return true;
  nodes.clear();
  return false;
}

std::string position(std::size_t document, const Mark& mark) {
  return "yaml: document " + std::to_string(document) + ", line " + std::to_string(mark.line + 1) +
         ", column " + std::to_string(mark.column + 1);
}

const char* text_of_bytes(const yaml_char_t* s) {
  return reinterpret_cast<const char*>(s);
}

// RAII for libyaml's parser and events.
class Parser {
 public:
  explicit Parser(std::string_view text) {
    yaml_parser_initialize(&parser_);
    yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~Parser() { yaml_parser_delete(&parser_); }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;
  yaml_parser_t* get() { return &parser_; }

 private:
  yaml_parser_t parser_;
};

class Event {
 public:
  Event() = default;
  ~Event() {
    if (valid_) yaml_event_delete(&event_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  bool parse(Parser& parser) {
    valid_ = yaml_parser_parse(parser.get(), &event_) != 0;
    return valid_;
  }
  const yaml_event_t& operator*() const { return event_; }

 private:
  yaml_event_t event_{};
  bool valid_ = false;
};

// The tag of a scalar as the converter wants it: libyaml's resolved tag, or "?" for an untagged
// plain scalar and "!" for an untagged quoted or block one.
std::string scalar_tag(const yaml_event_t& e) {
  if (e.data.scalar.tag != nullptr) return reinterpret_cast<const char*>(e.data.scalar.tag);
  return e.data.scalar.plain_implicit != 0 ? "?" : "!";
}

// Byte offsets of (line, column) marks; libyaml counts columns in characters. Marks come in
// stream order, so the walk along a line resumes from the previous mark on that line: a
// document on one line (JSON as `kubectl` or a generator writes it) costs one pass, not one
// pass per scalar.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) : text_(text) {}

  std::size_t offset(const yaml_mark_t& m) {
    if (starts_.empty()) {
      starts_.push_back(0);
      for (std::size_t i = 0; i < text_.size(); ++i) {
        if (text_[i] == '\n') starts_.push_back(i + 1);
      }
    }
    if (m.line >= starts_.size()) return text_.size();
    if (m.line != line_ || m.column < column_) {
      line_ = m.line;
      column_ = 0;
      offset_ = starts_[m.line];
    }
    for (; column_ < m.column && offset_ < text_.size(); ++column_) {
      ++offset_;
      while (offset_ < text_.size() && (static_cast<unsigned char>(text_[offset_]) & 0xC0) == 0x80)
        ++offset_;
    }
    return offset_;
  }

 private:
  std::string_view text_;
  std::vector<std::size_t> starts_;
  // The last mark resolved: its line and column, and the byte offset they gave.
  std::size_t line_ = 0;
  std::size_t column_ = 0;
  std::size_t offset_ = 0;
};

// libyaml 0.2 accepts the YAML 1.2 escape "\/" in double-quoted scalars; go-yaml v2 (ported
// from libyaml 0.1) rejects it. Returns the position of the first one in the scalar's text.
std::optional<Mark> slash_escape(std::string_view text, LineIndex& lines, const yaml_event_t& e) {
  std::string_view value(text_of_bytes(e.data.scalar.value), e.data.scalar.length);
  if (value.find('/') == std::string_view::npos) return std::nullopt;
  std::size_t begin = lines.offset(e.start_mark);
  std::size_t end = std::min(lines.offset(e.end_mark), text.size());
  Mark mark = mark_of(e.start_mark);
  for (std::size_t i = begin; i < end; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
      continue;
    }
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++mark.column;
    if (text[i] != '\\' || i + 1 >= end) continue;
    if (text[i + 1] == '/') return Mark{mark.line, mark.column - 1};
    ++i;  // an escaped character, possibly a backslash
    ++mark.column;
  }
  return std::nullopt;
}

const char* text_of(const yaml_char_t* s) {
  return reinterpret_cast<const char*>(s);
}

Error parse_error(Parser& parser, std::size_t document) {
  const yaml_parser_t& p = *parser.get();
  std::string problem = p.problem != nullptr ? p.problem : "unknown YAML error";
  if (p.error == YAML_MEMORY_ERROR) problem = "out of memory";
  return Error{position(document, mark_of(p.problem_mark)) + ": " + problem};
}

// Reads the next document's events into `builder`. `index` counts the documents started;
// `stream_end` is set when the stream ends before another document.
std::optional<Error> read_document(Parser& parser, LineIndex& lines, std::string_view yaml,
                                   TreeBuilder& builder, std::size_t& index, std::size_t parsed,
                                   bool& stream_end) {
  for (;;) {
    Event ev;
    if (!ev.parse(parser)) return parse_error(parser, index + (index == parsed ? 1 : 0));
    const yaml_event_t& e = *ev;
    Mark mark = mark_of(e.start_mark);
    switch (e.type) {
      case YAML_STREAM_END_EVENT:
        stream_end = true;
        return std::nullopt;
      case YAML_DOCUMENT_START_EVENT:
        ++index;
        break;
      case YAML_DOCUMENT_END_EVENT:
        return std::nullopt;
      case YAML_ALIAS_EVENT:
        if (!builder.alias(mark, text_of(e.data.alias.anchor))) {
          return Error{position(index, mark) + ": unknown anchor '" + text_of(e.data.alias.anchor) +
                       "' referenced"};
        }
        break;
      case YAML_SCALAR_EVENT:
        if (e.data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
          if (auto bad = slash_escape(yaml, lines, e)) {
            return Error{position(index, *bad) + ": found unknown escape character"};
          }
        }
        builder.scalar(mark, scalar_tag(e), text_of(e.data.scalar.anchor),
                       text_of(e.data.scalar.value), e.data.scalar.length);
        break;
      case YAML_SEQUENCE_START_EVENT:
        builder.start(Node::kSequence, mark, text_of(e.data.sequence_start.tag),
                      text_of(e.data.sequence_start.anchor));
        break;
      case YAML_MAPPING_START_EVENT:
        builder.start(Node::kMapping, mark, text_of(e.data.mapping_start.tag),
                      text_of(e.data.mapping_start.anchor));
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        builder.end();
        break;
      default:
        break;
    }
  }
}

// The document of a node tree, or false when converting it fails (a decoding error, NaN or an
// infinity); `error` then says why, with `index` as the document's number.
bool convert_document(const std::vector<Node>& nodes, const YamlReadOptions& options,
                      std::size_t index, Document& doc, Error* error) {
  if (nodes.empty()) return true;
  try {
    Converter(nodes, doc.GetAllocator(), options.strict).convert(0, doc);
  } catch (const DecodeFailure& f) {
    if (error != nullptr) *error = Error{position(index, f.mark) + ": " + f.message};
    return false;
  }
  std::string pointer;
  double bad = 0;
  if (find_non_finite(doc, pointer, bad)) {
    if (error != nullptr) {
      *error = Error{"yaml: document " + std::to_string(index) + ", at " +
                     (pointer.empty() ? std::string("the root") : pointer) +
                     ": unsupported value: " + go_format_float_g(bad) +
                     " (JSON has no NaN or infinity)"};
    }
    return false;
  }
  return true;
}

// Parses documents one at a time; `max_documents` bounds how many are read (1 for
// yaml_to_json, which must not look at later documents, as yaml.Unmarshal does not).
Result<std::vector<Document>> read_stream(std::string_view yaml, const YamlReadOptions& options,
                                          std::size_t max_documents) {
  std::vector<Document> docs;
  if (max_documents == 0) return docs;
  {
    // The fast reader's tree, when the text is in its subset and converts without an error;
    // otherwise libyaml's (which also words every error).
    std::vector<Node> nodes;
    if (fast_tree(yaml, nodes)) {
      Document doc;
      if (convert_document(nodes, options, 1, doc, nullptr)) {
        docs.push_back(std::move(doc));
        return docs;
      }
    }
  }
  Parser parser(yaml);
  LineIndex lines(yaml);
  std::size_t index = 0;
  while (docs.size() < max_documents) {
    TreeBuilder builder;
    bool stream_end = false;
    if (auto err = read_document(parser, lines, yaml, builder, index, docs.size(), stream_end))
      return *err;
    if (stream_end) return docs;
    Document doc;
    Error error{""};
    if (!convert_document(builder.nodes, options, index, doc, &error)) return error;
    docs.push_back(std::move(doc));
  }
  return docs;
}

bool same_tree(const std::vector<Node>& a, const std::vector<Node>& b, std::string& why) {
  if (a.size() != b.size()) {
    why = "node count " + std::to_string(a.size()) + " (fast) vs " + std::to_string(b.size()) +
          " (libyaml)";
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Node& x = a[i];
    const Node& y = b[i];
    if (x.kind != y.kind || x.tag != y.tag || x.value != y.value || x.children != y.children) {
      why = "node " + std::to_string(i) + " differs: fast kind " + std::to_string(x.kind) +
            " tag " + x.tag + " value \"" + x.value + "\", libyaml kind " + std::to_string(y.kind) +
            " tag " + y.tag + " value \"" + y.value + "\" (line " +
            std::to_string(y.mark.line + 1) + ")";
      return false;
    }
  }
  return true;
}

}  // namespace

namespace yaml_detail {

bool fast_reader_agrees(std::string_view yaml, bool* used, std::string* why) {
  std::vector<Node> fast;
  bool accepted = fast_tree(yaml, fast);
  if (used != nullptr) *used = accepted;
  if (!accepted) return true;
  Parser parser(yaml);
  LineIndex lines(yaml);
  std::size_t index = 0;
  TreeBuilder builder;
  bool stream_end = false;
  std::string reason;
  if (auto err = read_document(parser, lines, yaml, builder, index, 0, stream_end)) {
    reason = "the fast reader accepted a text libyaml refuses: " + err->message;
  } else if (stream_end || builder.nodes.empty()) {
    reason = "the fast reader found a document where libyaml found none";
  } else {
    TreeBuilder next;
    bool end2 = false;
    if (auto err2 = read_document(parser, lines, yaml, next, index, 1, end2)) {
      reason = "libyaml refuses the rest of the stream: " + err2->message;
    } else if (!end2) {
      reason = "libyaml found a second document";
    } else if (same_tree(fast, builder.nodes, reason)) {
      return true;
    }
  }
  if (why != nullptr) *why = reason;
  return false;
}

}  // namespace yaml_detail

Result<Document> yaml_to_json(std::string_view yaml, const YamlReadOptions& options) {
  auto docs = read_stream(yaml, options, 1);
  if (!docs) return docs.error();
  if (docs->empty()) return Document{};
  return std::move(docs->front());
}

Result<std::vector<Document>> yaml_stream_to_json(std::string_view yaml,
                                                  const YamlReadOptions& options) {
  return read_stream(yaml, options, static_cast<std::size_t>(-1));
}

}  // namespace meshop::api

namespace meshop::api {
namespace {

// Pool chunks for a kept document: small, so that a kept text costs about its size.
constexpr std::size_t kReusePoolChunk = 4096;

// The place of every scalar slot's value in the document converted from `nodes`, as member or
// element indices from the root; false when the document does not follow the tree one node
// for one value (a merge key, or duplicate keys that collapsed into one member).
class SlotPaths {
 public:
  SlotPaths(const std::vector<Node>& nodes, const std::vector<std::int32_t>& slot_of_node)
      : nodes_(nodes), slot_of_node_(slot_of_node) {}

  bool walk(std::uint32_t idx, const Value& v) {
    const Node& n = nodes_[idx];
    if (n.kind == Node::kScalar) {
      std::int32_t slot = slot_of_node_[idx];
      if (slot >= 0) found.emplace_back(slot, path_);
      return true;
    }
    if (n.kind == Node::kSequence) {
      if (!v.IsArray() || v.Size() != n.children.size()) return false;
      for (std::uint32_t i = 0; i < n.children.size(); ++i)
        if (!step(i, n.children[i], v[i])) return false;
      return true;
    }
    if (n.kind == Node::kMapping) {
      if (!v.IsObject() || 2 * static_cast<std::size_t>(v.MemberCount()) != n.children.size())
        return false;
      auto member = v.MemberBegin();
      for (std::uint32_t i = 0; i < v.MemberCount(); ++i, ++member) {
        const Node& key = nodes_[n.children[2 * i]];
        if (key.kind == Node::kScalar && key.value == "<<") return false;
        if (!step(i, n.children[2 * i + 1], member->value)) return false;
      }
      return true;
    }
    return false;
  }

  std::vector<std::pair<std::int32_t, std::vector<std::uint32_t>>> found;

 private:
  bool step(std::uint32_t index, std::uint32_t child, const Value& v) {
    path_.push_back(index);
    bool ok = walk(child, v);
    path_.pop_back();
    return ok;
  }
  const std::vector<Node>& nodes_;
  const std::vector<std::int32_t>& slot_of_node_;
  std::vector<std::uint32_t> path_;
};

// Printable ASCII without tabs, and not what acceptable_text() refuses at a line's start.
bool acceptable_line(std::string_view line) {
  for (char ch : line) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c >= 0x7F) return false;
  }
  std::string_view head = line.substr(0, 3);
  return !(line.substr(0, 1) == "%" || head == "---" || head == "...");
}

}  // namespace

ReusableYaml::ReusableYaml() : pool_(kReusePoolChunk), doc_(&pool_) {}

Result<std::shared_ptr<const ReusableYaml>> ReusableYaml::read(std::string_view text) {
  std::shared_ptr<ReusableYaml> r(new ReusableYaml());
  r->text_.assign(text);
  std::vector<Node> nodes;
  std::vector<ScalarSlot> slots;
  // Converted in a scratch document, then copied into the kept pool: the copy is sized
  // exactly, where the conversion's growing arrays would leave most of the pool as slack.
  Document scratch;
  bool fast = false;
  if (text.size() <= (1u << 24)) {
    FastReader reader(text, nodes, &slots);
    fast = reader.run() && !nodes.empty() && convert_document(nodes, {}, 1, scratch, nullptr);
  }
  if (!fast) {
    auto doc = yaml_to_json(text);
    if (!doc) return doc.error();
    scratch = std::move(*doc);
    slots.clear();
  }
  r->doc_.CopyFrom(scratch, r->pool_);
  r->line_starts_.push_back(0);
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') r->line_starts_.push_back(static_cast<std::uint32_t>(i + 1));
  r->slot_of_line_.assign(r->line_starts_.size(), -1);
  if (slots.empty()) return std::shared_ptr<const ReusableYaml>(std::move(r));

  std::vector<std::int32_t> slot_of_node(nodes.size(), -1);
  for (std::size_t i = 0; i < slots.size(); ++i)
    slot_of_node[slots[i].node] = static_cast<std::int32_t>(i);
  SlotPaths paths(nodes, slot_of_node);
  if (!paths.walk(0, r->doc_)) return std::shared_ptr<const ReusableYaml>(std::move(r));
  for (auto& [index, path] : paths.found) {
    const ScalarSlot& s = slots[static_cast<std::size_t>(index)];
    auto line = static_cast<std::size_t>(
        std::upper_bound(r->line_starts_.begin(), r->line_starts_.end(), s.start) -
        r->line_starts_.begin() - 1);
    if (r->slot_of_line_[line] != -1) {
      r->slot_of_line_[line] = -2;  // two values on one line: never reused
      continue;
    }
    Slot slot;
    slot.offset = static_cast<std::uint32_t>(s.start - r->line_starts_[line]);
    slot.ind = static_cast<std::uint32_t>(s.ind);
    slot.in_mapping = s.in_mapping;
    slot.path_begin = static_cast<std::uint32_t>(r->paths_.size());
    slot.path_size = static_cast<std::uint32_t>(path.size());
    r->paths_.insert(r->paths_.end(), path.begin(), path.end());
    r->slot_of_line_[line] = static_cast<std::int32_t>(r->slots_.size());
    r->slots_.push_back(slot);
  }
  for (auto& s : r->slot_of_line_)
    if (s == -2) s = -1;
  return std::shared_ptr<const ReusableYaml>(std::move(r));
}

namespace {

// The index of the first byte at which a[0, n) and b[0, n) differ; n when they do not.
std::size_t first_difference(const char* a, const char* b, std::size_t n) {
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    unsigned same = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)));
    if (same != 0xFFFF) return i + static_cast<std::size_t>(__builtin_ctz(~same));
  }
#endif
  while (i < n && a[i] == b[i])
    ++i;
  return i;
}

}  // namespace

ReusableYaml::Reread ReusableYaml::reread(std::string_view text, Document& out) const {
  if (text == text_) return Reread::kSame;
  if (slots_.empty() || text.size() > (1u << 24)) return Reread::kNotReusable;
  struct Change {
    std::uint32_t slot;
    std::size_t start;  // of the value in `text`
  };
  std::vector<Change> changes;
  const std::size_t lines = line_starts_.size();
  // Compares line i of `text`, which starts at `at`, with the kept line i; a changed line is
  // kept in `changes` when only its value changed. Returns the start of line i + 1, or npos
  // when the texts cannot share a parse.
  auto compare_line = [&](std::size_t i, std::size_t at) -> std::size_t {
    std::size_t old_begin = line_starts_[i];
    std::size_t old_end = i + 1 < lines ? line_starts_[i + 1] - 1 : text_.size();
    std::size_t end = text.find('\n', at);
    if (i + 1 < lines) {
      if (end == std::string_view::npos) return std::string_view::npos;  // fewer lines
    } else {
      if (end != std::string_view::npos) return std::string_view::npos;  // more lines
      end = text.size();
    }
    std::string_view old_line(text_.data() + old_begin, old_end - old_begin);
    std::string_view line = text.substr(at, end - at);
    if (line != old_line) {
      std::int32_t slot = slot_of_line_[i];
      if (slot < 0) return std::string_view::npos;
      const Slot& s = slots_[static_cast<std::size_t>(slot)];
      // The same bytes before the value, and the blank after its colon or dash: whether the
      // line is a `key: ` or a `- ` entry looks at that one too.
      std::size_t same = s.offset + 1;
      if (line.size() < same || line.substr(0, same) != old_line.substr(0, same) ||
          !acceptable_line(line))
        return std::string_view::npos;
      changes.push_back(Change{static_cast<std::uint32_t>(slot), at + s.offset});
    }
    return end + 1;
  };
  // Runs of equal bytes are skipped whole (the renderings of one template differ in a few
  // lines): the first differing byte names the line to compare next; before it, the lines of
  // both texts are the same lines.
  std::size_t at = 0;  // start of line i in `text`
  for (std::size_t i = 0; i < lines;) {
    std::size_t old_at = line_starts_[i];
    std::size_t n = std::min(text.size() - at, text_.size() - old_at);
    std::size_t k = first_difference(text.data() + at, text_.data() + old_at, n);
    if (k == n && text.size() - at == text_.size() - old_at) break;  // the rest is the same
    // The kept line holding the difference (or the end of the shorter text), and where that
    // line starts in `text`: the bytes before it are the same in both.
    std::size_t j = static_cast<std::size_t>(
        std::upper_bound(line_starts_.begin() + static_cast<std::ptrdiff_t>(i), line_starts_.end(),
                         static_cast<std::uint32_t>(old_at + k)) -
        line_starts_.begin() - 1);
    at += line_starts_[j] - old_at;
    at = compare_line(j, at);
    if (at == std::string_view::npos) return Reread::kNotReusable;
    i = j + 1;
  }
  if (changes.empty()) return Reread::kNotReusable;  // cannot be: the texts differ

  // Each changed value alone, as the fast reader reads it at that point; the first node stands
  // for its owner.
  std::vector<Node> nodes(1);
  for (const Change& c : changes) {
    const Slot& s = slots_[c.slot];
    FastReader reader(text, nodes);
    if (!reader.one_line_scalar(ScalarSlot{c.start, s.ind, s.in_mapping, 0}))
      return Reread::kNotReusable;
  }
  // `out` shares every part of the kept document that no changed value is under: the root and
  // the collections on the way to a changed value are new (their arrays hold the kept
  // children), and the changed values are read again. A pool allocator never frees a value,
  // so the shared parts are only read, never released, through `out`.
  Allocator& alloc = out.GetAllocator();
  auto shallow = [](const Value& v) {
    Value c;
    std::memcpy(static_cast<void*>(&c), static_cast<const void*>(&v), sizeof(Value));
    return c;
  };
  auto new_level = [&](const Value& src, Value& dst) {
    if (src.IsObject()) {
      dst.SetObject();
      for (const auto& m : src.GetObject()) {
        Value name = shallow(m.name), value = shallow(m.value);
        dst.AddMember(name, value, alloc);
      }
    } else {
      dst.SetArray();
      dst.Reserve(src.Size(), alloc);
      for (const auto& e : src.GetArray()) {
        Value value = shallow(e);
        dst.PushBack(value, alloc);
      }
    }
  };
  out.SetNull();
  new_level(doc_, out);
  std::vector<const Value*> renewed{&out};
  try {
    Converter converter(nodes, alloc, false);
    for (std::size_t k = 0; k < changes.size(); ++k) {
      const Slot& s = slots_[changes[k].slot];
      Value* v = &out;
      for (std::uint32_t j = 0; j < s.path_size; ++j) {
        std::uint32_t index = paths_[s.path_begin + j];
        v = v->IsObject() ? &(v->MemberBegin() + index)->value : &(*v)[index];
        if (j + 1 < s.path_size && std::find(renewed.begin(), renewed.end(), v) == renewed.end()) {
          Value level;
          new_level(*v, level);
          *v = level;
          renewed.push_back(v);
        }
      }
      Value fresh;
      converter.convert(static_cast<std::uint32_t>(k + 1), fresh);
      if (fresh.IsDouble() && !std::isfinite(fresh.GetDouble())) return Reread::kNotReusable;
      *v = fresh;
    }
  } catch (const DecodeFailure&) {
    return Reread::kNotReusable;
  }
  return Reread::kChanged;
}

std::size_t ReusableYaml::bytes() const {
  return sizeof(*this) + text_.capacity() + pool_.Capacity() +
         line_starts_.capacity() * sizeof(std::uint32_t) +
         slot_of_line_.capacity() * sizeof(std::int32_t) + slots_.capacity() * sizeof(Slot) +
         paths_.capacity() * sizeof(std::uint32_t);
}

}  // namespace meshop::api
