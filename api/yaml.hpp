// YAML <-> JSON with the typing of sigs.k8s.io/yaml (go-yaml v2 underneath).
//
// Parsing uses libyaml, the C library go-yaml v2 is a port of, so the texts that parse (flow
// collections with trailing commas, all scalar styles, anchors, tags, multi-document streams)
// and the syntax errors are go-yaml's; yaml-cpp was measured at ~6x slower on Istio's injected
// manifests and accepts/rejects some texts differently.
//
// Reading (yaml_to_json): YAML 1.1 scalars resolve as go-yaml v2 resolves them:
//   - plain `y Y yes Yes YES true True TRUE on On ON` -> true, the n/no/false/off spellings
//     -> false; `~ null Null NULL` and empty -> null;
//   - ints: decimal, 0x hex, 0o and leading-0 octal, 0b binary, `_` separators, sign; beyond
//     int64 an unsigned 64-bit value, beyond that a float (e.g. 18446744073709551616 -> 1.8e19);
//   - floats: `1.5 .5 1. 1e3 -1.5E-3`, `.inf -.inf`; a float that overflows (1e400) stays a
//     string; `08` is the float 8 (not octal, not a string) as in Go;
//   - quoted and block scalars are always strings; `!!str !!int !!float !!bool !!null
//     !!binary !!timestamp` tags are honoured (`cannot decode !!str `abc` as a !!int`);
//     other tags (`!foo`) leave the string;
//   - anchors, aliases (with go-yaml's protection against alias bombs) and merge keys `<<`
//     (a mapping or a list of mappings; earlier entries win within a list; a merged key
//     overrides an explicit key that came BEFORE the `<<`, as in go-yaml v2);
//   - map keys become strings: ints in decimal, floats as Go's FormatFloat(k, 'g', -1, 32),
//     booleans "true"/"false"; null keys, list or map keys and keys above int64 are errors;
//   - duplicate keys: the last value wins, keeping the first key's position (YAMLToJSON and
//     yaml.Unmarshal). With YamlReadOptions::strict they are an error, as YAMLToJSONStrict:
//     "key \"a\" already set in map". Keys that only collide after conversion (`1` and "1") are
//     not duplicates for go-yaml; here the later one wins.
//   - NaN and infinities cannot be JSON: an error, as json.Marshal's "unsupported value".
// Objects keep document order (Go's JSON output sorts keys; compare with json_equal).
//
// Writing (json_to_yaml): byte for byte what sigs.k8s.io/yaml.Marshal writes for the same JSON
// (checked against Go on Istio's injection testdata and thousands of generated values): keys
// sorted as go-yaml sorts them (digit runs compared as numbers), 2-space block style, sequences
// in a mapping not indented, long flow scalars folded at the first space after column 80, and
// every string that would read back as something else quoted ("on", "1.0", "0755", "", "null",
// "~", "2001-01-01", "12:30"), so that yaml_to_json(json_to_yaml(x)) is json_equal to x for
// every JSON value x. Deliberate differences, only where Go's own output does not read back
// as the same value: a "<<" key is quoted (plain, it is a merge key); a multi-line string that
// also contains NEL, U+2028 or U+2029 is double-quoted instead of a literal block; and those
// three characters stay as they are inside single quotes, where go-yaml writes a line break.
//
// Errors name the document (1-based) and the line and column (1-based, counted from the start
// of the text, not of the document): "yaml: document 2, line 7, column 5: ...". Syntax errors
// are libyaml's, i.e. the ones go-yaml reports ("did not find expected key").
// Thread-safe: no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.hpp"
#include "api/result.hpp"

namespace meshop::api {

struct YamlReadOptions {
  bool strict = false;  // duplicate mapping keys are an error (YAMLToJSONStrict)
};

// The first document of the stream, as yaml.Unmarshal reads it; later documents are not
// parsed. An empty stream or an empty document is null.
Result<Document> yaml_to_json(std::string_view yaml, const YamlReadOptions& options = {});

// Every document of a multi-document stream ("---" separated), in order. Empty documents
// (e.g. between two "---") are null entries; an empty stream is an empty list.
Result<std::vector<Document>> yaml_stream_to_json(std::string_view yaml,
                                                  const YamlReadOptions& options = {});

// YAML text for a JSON value, as sigs.k8s.io/yaml.Marshal writes it (ends with a newline).
std::string json_to_yaml(const Value& value);

// A text read once by yaml_to_json, kept with what is needed to read a similar text again
// cheaply: an injection template renders nearly the same text for every pod (the pod's name
// in two env values, its labels in a few more), and reading only the lines that changed is
// several times cheaper than reading the whole text (issue 16).
//
// reread(other) answers exactly yaml_to_json(other), or declines. It reuses this parse when the
// two texts have the same number of lines and every line that differs holds, in both texts, a
// block collection's one-line scalar value (`key: value`, `- value`, plain or quoted, as the
// fast reader reads them) after the same bytes: the text before such a value is the same, so
// everything before it parses the same; the value ends on its line, so everything after it
// parses the same too; only that value changes, and it is read and typed as yaml_to_json types
// it. Anything else declines: another line differs, the new value would not end on its line
// (a block scalar, a flow collection, a compact mapping, nothing), the text is not in the fast
// reader's subset, the document has merge keys or duplicate keys (its members do not follow
// its lines one for one), or the new value is NaN or infinite (yaml_to_json's error).
//
// Immutable after read(); reread() may run from any number of threads at once.
class ReusableYaml {
 public:
  // `text` as yaml_to_json reads it (the same document, or its error). A text outside the fast
  // reader's subset is kept too, and only equal texts reuse it.
  static Result<std::shared_ptr<const ReusableYaml>> read(std::string_view text);

  enum class Reread {
    kSame,         // `text` is this text: document() is its parse
    kChanged,      // `out` is yaml_to_json(text)
    kNotReusable,  // `out` is unspecified: call yaml_to_json
  };
  // A kChanged `out` shares the parts of document() that did not change (only the values read
  // again and the collections above them are its own): it must only be read, and not after
  // this ReusableYaml is gone. `out`'s allocator must be a pool (it never frees a value).
  Reread reread(std::string_view text, Document& out) const;

  std::string_view text() const { return text_; }
  const Value& document() const { return doc_; }
  std::size_t line_count() const { return line_starts_.size(); }
  // Lines whose value reread() can take from another text.
  std::size_t reusable_lines() const { return slots_.size(); }
  // Memory held (text, document, line tables), for callers that bound a cache of these.
  std::size_t bytes() const;

  ReusableYaml(const ReusableYaml&) = delete;
  ReusableYaml& operator=(const ReusableYaml&) = delete;

 private:
  ReusableYaml();
  // A reusable line: where its value starts in the line, its owner's column and kind, and the
  // value's place in the document (paths_[path_begin, path_begin + path_size): member or
  // element indices from the root).
  struct Slot {
    std::uint32_t offset = 0, ind = 0;
    bool in_mapping = false;
    std::uint32_t path_begin = 0, path_size = 0;
  };
  std::string text_;
  std::vector<std::uint32_t> line_starts_;
  std::vector<std::int32_t> slot_of_line_;  // index into slots_, or -1
  std::vector<Slot> slots_;
  std::vector<std::uint32_t> paths_;
  Allocator pool_;
  Document doc_;
};

namespace yaml_detail {

// For tests and the fuzzer: yaml_to_json reads the block-style subset that templates render
// (block collections, one-line scalars, literal blocks, flow collections of scalars, printable
// ASCII) with its own fast reader, and everything else with libyaml. True when the fast reader
// declines `yaml` or builds exactly libyaml's node tree for it; `used` says whether it accepted,
// `why` names the first difference.
bool fast_reader_agrees(std::string_view yaml, bool* used = nullptr, std::string* why = nullptr);

}  // namespace yaml_detail

}  // namespace meshop::api
