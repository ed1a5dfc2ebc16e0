#include "api/label_selector.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace meshop::api {
namespace {

constexpr std::string_view kQualifiedNameFmt =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kQualifiedNameExamples =
    " (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

bool alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
bool is_name(std::string_view s) {
  if (s.empty() || !alnum(s.front()) || !alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

// RFC 1123 subdomain: [a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*
bool is_dns1123_subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty()) return false;
    auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_alnum(label.front()) || !lower_alnum(label.back())) return false;
    for (char c : label) {
      if (!lower_alnum(c) && c != '-') return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

bool values_contain(const std::vector<std::string>& values, std::string_view v) {
  return std::binary_search(values.begin(), values.end(), v);
}

void normalize(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
}

std::string join_errors(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::string out = "[";
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (i > 0) out += ", ";
    out += errors[i];
  }
  return out + "]";
}

}  // namespace

std::vector<std::string> label_key_errors(std::string_view key) {
  std::vector<std::string> errs;
  std::string_view name = key;
  auto slash = key.find('/');
  if (slash != std::string_view::npos) {
    if (key.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back("a qualified name " + std::string(kQualifiedNameFmt) +
                     std::string(kQualifiedNameExamples) +
                     " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    std::string_view prefix = key.substr(0, slash);
    name = key.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part must be non-empty");
    } else if (prefix.size() > 253) {
      errs.push_back("prefix part must be no more than 253 characters");
    } else if (!is_dns1123_subdomain(prefix)) {
      errs.push_back(
          "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
          "characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
          "'example.com', regex used for validation is "
          "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
    }
  }
  if (name.empty()) {
    errs.push_back("name part must be non-empty");
  } else if (name.size() > 63) {
    errs.push_back("name part must be no more than 63 characters");
  }
  if (!name.empty() && !is_name(name)) {
    errs.push_back("name part " + std::string(kQualifiedNameFmt) +
                   std::string(kQualifiedNameExamples));
  }
  return errs;
}

std::vector<std::string> label_value_errors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > 63) errs.push_back("must be no more than 63 characters");
  if (!value.empty() && !is_name(value)) {
    errs.push_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

LabelSelector LabelSelector::nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

Result<LabelSelector> LabelSelector::from_json(const Value& selector, std::string_view field_path) {
  std::string base(field_path);
  auto at = [&](const std::string& child) { return base.empty() ? child : base + "." + child; };
  if (selector.IsNull()) return nothing();
  if (!selector.IsObject()) {
    return Error{base + ": Invalid value: " + to_json(selector) + ": must be an object"};
  }
  std::vector<std::string> errs;
  LabelSelector out;
  if (const Value* ml = find_member(selector, "matchLabels"); ml != nullptr && !ml->IsNull()) {
    if (!ml->IsObject()) {
      errs.push_back(at("matchLabels") + ": Invalid value: " + to_json(*ml) +
                     ": must be an object");
    } else {
      for (const auto& m : ml->GetObject()) {
        std::string_view key = string_view_of(m.name);
        for (const auto& e : label_key_errors(key)) {
          errs.push_back(at("matchLabels") + ": Invalid value: " + quote(key) + ": " + e);
        }
        if (!m.value.IsString()) {
          errs.push_back(at("matchLabels") + ": Invalid value: " + to_json(m.value) +
                         ": must be a string");
          continue;
        }
        for (const auto& e : label_value_errors(string_view_of(m.value))) {
          errs.push_back(at("matchLabels") + ": Invalid value: " + quote(string_view_of(m.value)) +
                         ": " + e);
        }
        out.requirements_.push_back(
            {std::string(key), Operator::kEquals, {std::string(string_view_of(m.value))}});
      }
    }
  }
  if (const Value* me = find_member(selector, "matchExpressions"); me != nullptr && !me->IsNull()) {
    if (!me->IsArray()) {
      errs.push_back(at("matchExpressions") + ": Invalid value: " + to_json(*me) +
                     ": must be a list");
    } else {
      for (rapidjson::SizeType i = 0; i < me->Size(); ++i) {
        std::string p = at("matchExpressions[" + std::to_string(i) + "]");
        const Value& expr = (*me)[i];
        if (!expr.IsObject()) {
          errs.push_back(p + ": Invalid value: " + to_json(expr) + ": must be an object");
          continue;
        }
        const Value* key = find_member(expr, "key");
        const Value* op = find_member(expr, "operator");
        const Value* values = find_member(expr, "values");
        std::string key_s =
            key != nullptr && key->IsString() ? std::string(string_view_of(*key)) : "";
        std::string op_s = op != nullptr && op->IsString() ? std::string(string_view_of(*op)) : "";
        Requirement r{key_s, Operator::kIn, {}};
        std::size_t nvalues = values != nullptr && values->IsArray() ? values->Size() : 0;
        if (values != nullptr && !values->IsNull() && !values->IsArray()) {
          errs.push_back(p + ".values: Invalid value: " + to_json(*values) + ": must be a list");
        }
        if (op_s == "In" || op_s == "NotIn") {
          r.op = op_s == "In" ? Operator::kIn : Operator::kNotIn;
          if (nvalues == 0) {
            errs.push_back(p +
                           ".values: Required value: must be specified when `operator` is "
                           "'In' or 'NotIn'");
          }
        } else if (op_s == "Exists" || op_s == "DoesNotExist") {
          r.op = op_s == "Exists" ? Operator::kExists : Operator::kDoesNotExist;
          if (nvalues > 0) {
            errs.push_back(p +
                           ".values: Forbidden: may not be specified when `operator` is "
                           "'Exists' or 'DoesNotExist'");
          }
        } else if (op == nullptr || op_s.empty()) {
          errs.push_back(p + ".operator: Invalid value: \"\": not a valid selector operator");
        } else {
          errs.push_back(p + ".operator: Invalid value: " + quote(op_s) +
                         ": not a valid selector operator");
        }
        for (const auto& e : label_key_errors(key_s)) {
          errs.push_back(p + ".key: Invalid value: " + quote(key_s) + ": " + e);
        }
        for (std::size_t v = 0; v < nvalues; ++v) {
          const Value& val = (*values)[static_cast<rapidjson::SizeType>(v)];
          std::string vp = p + ".values[" + std::to_string(v) + "]";
          if (!val.IsString()) {
            errs.push_back(vp + ": Invalid value: " + to_json(val) + ": must be a string");
            continue;
          }
          for (const auto& e : label_value_errors(string_view_of(val))) {
            errs.push_back(vp + ": Invalid value: " + quote(string_view_of(val)) + ": " + e);
          }
          r.values.emplace_back(string_view_of(val));
        }
        normalize(r.values);
        out.requirements_.push_back(std::move(r));
      }
    }
  }
  if (!errs.empty()) return Error{join_errors(errs)};
  return out;
}

namespace {

// Tokenizer for the string syntax (k8s.io/apimachinery/pkg/labels/selector.go lexer).
class SelectorParser {
 public:
  explicit SelectorParser(std::string_view s) : s_(s) {}

  Result<LabelSelector::Requirement> requirement() {
    using Op = LabelSelector::Operator;
    skip_space();
    bool negated = false;
    if (peek() == '!') {
      negated = true;
      ++pos_;
      skip_space();
    }
    std::string key = identifier();
    if (key.empty()) return error("key expected");
    if (auto e = label_key_errors(key); !e.empty())
      return error("invalid label key \"" + key + "\": " + e[0]);
    skip_space();
    if (negated) return LabelSelector::Requirement{key, Op::kDoesNotExist, {}};
    if (at_end() || peek() == ',') return LabelSelector::Requirement{key, Op::kExists, {}};
    Op op;
    if (s_.substr(pos_, 2) == "==") {
      op = Op::kDoubleEquals;
      pos_ += 2;
    } else if (s_.substr(pos_, 2) == "!=") {
      op = Op::kNotEquals;
      pos_ += 2;
    } else if (peek() == '=') {
      op = Op::kEquals;
      ++pos_;
    } else if (peek() == '>' || peek() == '<') {
      op = peek() == '>' ? Op::kGreaterThan : Op::kLessThan;
      ++pos_;
    } else {
      std::string word = identifier();
      if (word == "in") {
        op = Op::kIn;
      } else if (word == "notin") {
        op = Op::kNotIn;
      } else {
        return error("expected one of '=', '==', '!=', 'in', 'notin', '>', '<', found \"" + word +
                     "\"");
      }
      skip_space();
      if (peek() != '(') return error("'(' expected after '" + word + "'");
      ++pos_;
      std::vector<std::string> values;
      while (true) {
        skip_space();
        std::string v = identifier();
        if (auto e = label_value_errors(v); !e.empty())
          return error("invalid label value \"" + v + "\": " + e[0]);
        values.push_back(v);
        skip_space();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() == ')') {
          ++pos_;
          break;
        }
        return error("',' or ')' expected");
      }
      normalize(values);
      return LabelSelector::Requirement{key, op, values};
    }
    skip_space();
    std::string v = identifier();
    if (op == Op::kGreaterThan || op == Op::kLessThan) {
      char* end = nullptr;
      std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0')
        return error("for 'Gt', 'Lt' operators, the value must be an integer");
    } else if (auto e = label_value_errors(v); !e.empty()) {
      return error("invalid label value \"" + v + "\": " + e[0]);
    }
    return LabelSelector::Requirement{key, op, {v}};
  }

  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])) != 0)
      ++pos_;
  }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }
  std::size_t pos() const { return pos_; }
  void advance() { ++pos_; }

  Error error(const std::string& message) const {
    return Error{"unable to parse requirement at position " + std::to_string(pos_) + " of \"" +
                 std::string(s_) + "\": " + message};
  }

 private:
  // Everything up to whitespace or one of the special characters.
  std::string identifier() {
    std::size_t start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isspace(static_cast<unsigned char>(c)) != 0 || c == ',' || c == '(' || c == ')' ||
          c == '=' || c == '!' || c == '<' || c == '>') {
        break;
      }
      ++pos_;
    }
    return std::string(s_.substr(start, pos_ - start));
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Result<LabelSelector> LabelSelector::parse(std::string_view text) {
  LabelSelector out;
  SelectorParser p(text);
  p.skip_space();
  if (p.at_end()) return out;
  while (true) {
    auto r = p.requirement();
    if (!r) return r.error();
    out.requirements_.push_back(std::move(r).value());
    p.skip_space();
    if (p.at_end()) break;
    if (p.peek() != ',') return p.error("',' expected");
    p.advance();
  }
  std::stable_sort(out.requirements_.begin(), out.requirements_.end(),
                   [](const Requirement& a, const Requirement& b) { return a.key < b.key; });
  return out;
}

bool LabelSelector::matches(const Value* labels) const {
  if (nothing_) return false;
  for (const auto& r : requirements_) {
    const Value* v = labels != nullptr ? find_member(*labels, r.key) : nullptr;
    bool has = v != nullptr && v->IsString();
    std::string_view value = has ? string_view_of(*v) : std::string_view();
    switch (r.op) {
      case Operator::kIn:
      case Operator::kEquals:
      case Operator::kDoubleEquals:
        if (!has || !values_contain(r.values, value)) return false;
        break;
      case Operator::kNotIn:
      case Operator::kNotEquals:
        if (has && values_contain(r.values, value)) return false;
        break;
      case Operator::kExists:
        if (!has) return false;
        break;
      case Operator::kDoesNotExist:
        if (has) return false;
        break;
      case Operator::kGreaterThan:
      case Operator::kLessThan: {
        if (!has || r.values.size() != 1) return false;
        std::string label(value);
        char* end = nullptr;
        long long lv = std::strtoll(label.c_str(), &end, 10);
        if (label.empty() || *end != '\0') return false;
        long long rv = std::strtoll(r.values[0].c_str(), nullptr, 10);
        if (r.op == Operator::kGreaterThan ? !(lv > rv) : !(lv < rv)) return false;
        break;
      }
    }
  }
  return true;
}

std::string LabelSelector::to_string() const {
  std::vector<const Requirement*> sorted;
  for (const auto& r : requirements_)
    sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Requirement* a, const Requirement* b) { return a->key < b->key; });
  std::string out;
  for (const Requirement* r : sorted) {
    if (!out.empty()) out += ",";
    auto list = [&] {
      std::string l;
      for (std::size_t i = 0; i < r->values.size(); ++i)
        l += (i ? "," : "") + r->values[i];
      return l;
    };
    switch (r->op) {
      case Operator::kIn:
        out += r->key + " in (" + list() + ")";
        break;
      case Operator::kNotIn:
        out += r->key + " notin (" + list() + ")";
        break;
      case Operator::kEquals:
        out += r->key + "=" + list();
        break;
      case Operator::kDoubleEquals:
        out += r->key + "==" + list();
        break;
      case Operator::kNotEquals:
        out += r->key + "!=" + list();
        break;
      case Operator::kExists:
        out += r->key;
        break;
      case Operator::kDoesNotExist:
        out += "!" + r->key;
        break;
      case Operator::kGreaterThan:
        out += r->key + ">" + list();
        break;
      case Operator::kLessThan:
        out += r->key + "<" + list();
        break;
    }
  }
  return out;
}

}  // namespace meshop::api
