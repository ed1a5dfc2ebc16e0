// GoRegexp: Go's regexp package (the subset sprig's regex functions use) on RE2, the library
// Go's regexp follows: the same syntax, leftmost-first matching, linear time in the length of
// the input (no backtracking) and no recursion on the input, so a pattern such as (a*)*b or
// an input of megabytes cannot hang or overflow a render.
//
// What Go does and RE2 alone does not, and this type adds:
//   - Invalid UTF-8 in the input is one U+FFFD rune per bad byte (`.` and [^a] match it),
//     and matches start only at rune boundaries, as Go's rune-stepping matcher does.
//   - Named groups in all of Go's spellings, (?P<name>...) and (?<name>...), duplicates
//     allowed; `\C` is rejected.
//   - Error texts are Go's (*syntax.Error).Error(): "error parsing regexp: CODE: `ARG`",
//     with Go's code texts and the first error from the left.
//   - Regexp.Expand's template rules in replace_all ($1, ${1}, $name, ${name}, $$).
// Known differences: the Unicode tables are RE2's (Debian 12's RE2 is older than Go's
// tables, so scripts added since, e.g. \p{Kawi}, do not compile), and Go's limit on parse
// tree height ("expression nests too deeply") is applied to nested capturing groups only
// (each adds one level; other nodes add levels too in Go's tree).
//
// Immutable after compile(); safe to use from any number of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "operator/template/value.hpp"

namespace re2 {
class RE2;
}

namespace meshop::template_engine {

class GoRegexp {
 public:
  // A match as byte offsets [begin, end) into the input.
  using Span = std::pair<std::size_t, std::size_t>;

  // regexp.Compile(expr). The error is Go's text, e.g.
  // "error parsing regexp: missing closing ): `(a`".
  static Result<GoRegexp> compile(std::string_view expr);

  const std::string& expr() const { return expr_; }

  // MatchString.
  bool match(std::string_view s) const;
  // FindStringIndex: the leftmost match, or nullopt.
  std::optional<Span> find(std::string_view s) const;
  // FindAllStringIndex(s, n): successive non-overlapping matches, at most n (n < 0: all);
  // an empty match right after the previous match is skipped.
  std::vector<Span> find_all(std::string_view s, std::int64_t n) const;
  // ReplaceAllString (repl expanded per match, Regexp.Expand) and ReplaceAllLiteralString.
  std::string replace_all(std::string_view s, std::string_view repl) const;
  std::string replace_all_literal(std::string_view s, std::string_view repl) const;
  // Split(s, n) for n != 0 (Go returns nil for n == 0; the caller decides what that is).
  std::vector<std::string> split(std::string_view s, std::int64_t n) const;

  // regexp.QuoteMeta: every metacharacter of `\.+*?()|[]{}^$` escaped.
  static std::string quote_meta(std::string_view s);

 private:
  GoRegexp() = default;

  class Input;
  struct Match;
  // The leftmost match at or after `from` (an offset into input.text() at a rune boundary),
  // with `groups` submatches (1 = the whole match only, 0 = existence only).
  bool search(const Input& input, std::size_t from, int groups, Match& m) const;
  std::string replace(std::string_view s, std::string_view repl, bool literal) const;
  void expand(std::string& out, std::string_view tmpl, const Input& input, const Match& m) const;

  std::string expr_;
  std::shared_ptr<const re2::RE2> re_;
  // names_[i] is the name of group i (0: the whole match, always ""); "" when unnamed.
  std::vector<std::string> names_;
};

}  // namespace meshop::template_engine
