// Kubernetes label selectors: metav1.LabelSelector (matchLabels + matchExpressions) read from
// JSON with the apiserver's validation messages, the string syntax of kubectl/labels.Parse
// ("a=b,c!=d,e in (x,y),f notin (z),g,!h,i>3"), and matching against a label map.
//
// Semantics: every requirement must hold (AND). In / = / == : the label exists with one of the
// values. NotIn / != : the label is absent or has none of the values. Exists / DoesNotExist.
// Gt / Lt (string syntax only): the label is an integer greater / less than the value.
// A selector built from an empty object matches everything; `LabelSelector::nothing()` (what a
// null metav1.LabelSelector means to LabelSelectorAsSelector) matches nothing.
//
// Immutable after construction; safe to share across threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::api {

// Label key / value syntax (k8s.io/apimachinery/pkg/util/validation). Return the list of
// problems, empty when valid, worded as the apiserver words them.
std::vector<std::string> label_key_errors(std::string_view key);
std::vector<std::string> label_value_errors(std::string_view value);

class LabelSelector {
 public:
  // kEquals ("="), kDoubleEquals ("==") and kNotEquals ("!=") match as single-value kIn /
  // kNotIn; they are kept apart so that to_string() prints what was written, as Go does.
  enum class Operator {
    kIn,
    kNotIn,
    kEquals,
    kDoubleEquals,
    kNotEquals,
    kExists,
    kDoesNotExist,
    kGreaterThan,
    kLessThan
  };
  struct Requirement {
    std::string key;
    Operator op;
    std::vector<std::string> values;  // sorted, unique
  };

  LabelSelector() = default;  // matches everything
  static LabelSelector nothing();

  // A metav1.LabelSelector object. `field_path` prefixes error messages, e.g.
  // "spec.selector.matchExpressions[0].values: Required value: must be specified when
  // `operator` is 'In' or 'NotIn'". Several problems are reported as "[a, b]".
  static Result<LabelSelector> from_json(const Value& selector, std::string_view field_path);

  // The string syntax accepted by kubectl -l and the apiserver's labelSelector parameter.
  static Result<LabelSelector> parse(std::string_view text);

  // `labels` is a JSON object of string values (metadata.labels); null or absent = no labels.
  bool matches(const Value* labels) const;

  bool matches_everything() const { return !nothing_ && requirements_.empty(); }
  bool matches_nothing() const { return nothing_; }
  const std::vector<Requirement>& requirements() const { return requirements_; }

  // Canonical string form (requirements sorted by key), as labels.Selector.String().
  std::string to_string() const;

 private:
  std::vector<Requirement> requirements_;
  bool nothing_ = false;
};

}  // namespace meshop::api
