#include "operator/manifest/k8s_values.hpp"

#include <cmath>
#include <cstdint>
#include <regex>

#include "operator/inject/mesh/go_duration.hpp"
#include "operator/inject/quantity.hpp"

namespace meshop::manifest::k8s_values {
namespace {

using api::FieldError;
using api::Value;

std::string got(const Value& v) {
  if (v.IsString()) return "got string \"" + std::string(api::string_view_of(v)) + "\"";
  if (v.IsBool()) return std::string("got boolean ") + (v.GetBool() ? "true" : "false");
  if (v.IsNumber()) return "got number " + api::to_json(v);
  if (v.IsArray()) return "got array";
  if (v.IsObject()) return "got object";
  return "got null";
}

bool ascii_equal_fold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

// encoding/json's field lookup: the exact name, else a case-insensitive match.
const Field* find_field(const Type& type, std::string_view key) {
  for (const Field& f : type.fields)
    if (f.json == key) return &f;
  for (const Field& f : type.fields)
    if (ascii_equal_fold(f.json, key)) return &f;
  return nullptr;
}

// An integral number in [lo, hi] whose JSON text has no exponent (Go parses integers with
// strconv.ParseInt on the text protojson wrote, which uses an exponent from 1e21 on).
bool integral_in(const Value& v, double lo, double hi) {
  if (v.IsInt64())
    return static_cast<double>(v.GetInt64()) >= lo && static_cast<double>(v.GetInt64()) <= hi;
  if (v.IsUint64()) return static_cast<double>(v.GetUint64()) <= hi;
  if (!v.IsDouble()) return false;
  double d = v.GetDouble();
  return std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e21 && d >= lo && d <= hi;
}

bool rfc3339(std::string_view s) {
  static const std::regex re(R"(^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$)");
  return std::regex_match(s.begin(), s.end(), re);
}

// encoding/base64's StdEncoding as encoding/json decodes []byte (\r and \n are skipped).
bool std_base64(std::string_view s) {
  std::size_t n = 0, pad = 0;
  for (char c : s) {
    if (c == '\r' || c == '\n') continue;
    bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                 c == '+' || c == '/';
    if (c == '=') {
      ++pad;
    } else if (!alpha || pad > 0) {
      return false;
    }
    ++n;
  }
  return n % 4 == 0 && pad <= 2;
}

struct Checker {
  std::vector<FieldError>& errors;

  void error(const std::string& path, std::string message) {
    errors.push_back({path, std::move(message)});
  }

  void scalar(const Value& v, Kind kind, bool convert, const std::string& path) {
    switch (kind) {
      case Kind::kString:
        if (convert ? (v.IsObject() || v.IsArray()) : !v.IsString())
          error(path, "expected string, " + got(v));
        return;
      case Kind::kBool:
        if (!v.IsBool()) error(path, "expected boolean, " + got(v));
        return;
      case Kind::kInt32:
        if (!v.IsNumber() || !integral_in(v, -2147483648.0, 2147483647.0))
          error(path, "expected integer (int32), " + got(v));
        return;
      case Kind::kInt64:
        if (!v.IsNumber() || !integral_in(v, -9223372036854775808.0, 9223372036854774784.0))
          error(path, "expected integer (int64), " + got(v));
        return;
      case Kind::kUint32:
        if (!v.IsNumber() || !integral_in(v, 0, 4294967295.0))
          error(path, "expected integer (uint32), " + got(v));
        return;
      case Kind::kUint64:
        if (!v.IsNumber() || !integral_in(v, 0, 18446744073709549568.0))
          error(path, "expected integer (uint64), " + got(v));
        return;
      case Kind::kDouble:
        if (!v.IsNumber()) error(path, "expected number, " + got(v));
        return;
      case Kind::kBytes:
        if (!v.IsString() || !std_base64(api::string_view_of(v)))
          error(path, "expected base64 string, " + got(v));
        return;
      case Kind::kQuantity:
        if (v.IsNumber()) return;
        if (!v.IsString() || !inject::canonical_quantity(api::string_view_of(v)))
          error(path,
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', " +
                    got(v));
        return;
      case Kind::kIntOrString:
        if (v.IsString()) return;
        if (!v.IsNumber() || !integral_in(v, -2147483648.0, 2147483647.0))
          error(path, "expected string or integer (int32), " + got(v));
        return;
      case Kind::kTime:
      case Kind::kMicroTime:
        if (!v.IsString() || !rfc3339(api::string_view_of(v)))
          error(path, "expected an RFC 3339 time, " + got(v));
        return;
      case Kind::kDuration:
        if (!v.IsString() || !inject::parse_go_duration(api::string_view_of(v)).ok())
          error(path, "expected a duration (\"30s\", \"1h5m\"), " + got(v));
        return;
      case Kind::kRaw:
      case Kind::kObject:
        return;
    }
  }

  // `convert`: sigs.k8s.io/yaml still knows the target here (turns scalars into strings).
  void value(const Value& v, const Field& f, bool convert, const std::string& path) {
    if (v.IsNull()) return;
    if (f.kind == Kind::kObject) {
      if (!v.IsObject()) {
        error(path, "expected object (" + std::string(f.type->name) + "), " + got(v));
        return;
      }
      object(v, *f.type, convert, path);
      return;
    }
    if (f.kind == Kind::kRaw) return;
    scalar(v, f.kind, convert, path);
  }

  void field(const Value& v, const Field& f, bool convert, const std::string& path) {
    if (v.IsNull()) return;
    convert = convert && !f.embedded;
    switch (f.shape) {
      case Shape::kOne:
        value(v, f, convert, path);
        return;
      case Shape::kList:
        if (!v.IsArray()) {
          error(path, "expected array, " + got(v));
          return;
        }
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
          value(v[i], f, convert, path + "[" + std::to_string(i) + "]");
        return;
      case Shape::kMap:
        if (!v.IsObject()) {
          error(path, "expected object, " + got(v));
          return;
        }
        for (const auto& m : v.GetObject())
          value(m.value, f, convert, path + "." + std::string(api::string_view_of(m.name)));
        return;
    }
  }

  void object(const Value& v, const Type& type, bool convert, const std::string& path) {
    for (const auto& m : v.GetObject()) {
      std::string_view key = api::string_view_of(m.name);
      std::string p = path + "." + std::string(key);
      const Field* f = find_field(type, key);
      if (f == nullptr) {
        error(p, "unknown field \"" + std::string(key) + "\" in " + std::string(type.name));
        continue;
      }
      field(m.value, *f, convert, p);
    }
  }
};

// The member of `v` named by component `i` of either dotted path.
const Value* member(const Value& v, std::string_view proto, std::string_view json,
                    std::string& name) {
  if (const Value* m = api::find_member(v, proto)) {
    name = std::string(proto);
    return m;
  }
  if (const Value* m = api::find_member(v, json)) {
    name = std::string(json);
    return m;
  }
  return nullptr;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t dot = s.find('.'); dot != std::string_view::npos; dot = s.find('.', start)) {
    out.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  out.push_back(s.substr(start));
  return out;
}

}  // namespace

const VersionPaths* paths_for(std::string_view version) {
  for (const VersionPaths& v : versions())
    if (v.version == version) return &v;
  return nullptr;
}

std::vector<FieldError> check_values(const Value& values, std::string_view version,
                                     const std::string& path) {
  std::vector<FieldError> errors;
  const VersionPaths* table = paths_for(version);
  if (table == nullptr || !values.IsObject()) return errors;
  Checker checker{errors};
  for (const StrictPath& sp : table->paths) {
    std::vector<std::string_view> proto = split(sp.proto_path), json = split(sp.json_path);
    const Value* at = &values;
    std::string p = path;
    for (std::size_t i = 0; at != nullptr && i < proto.size(); ++i) {
      if (!at->IsObject()) {
        at = nullptr;
        break;
      }
      std::string name;
      at = member(*at, proto[i], json[i], name);
      p += "." + name;
    }
    if (at == nullptr) continue;
    // Not an object (a list of objects): values_schema::check_values reports it.
    if (sp.list) {
      if (!at->IsArray()) continue;
      for (rapidjson::SizeType i = 0; i < at->Size(); ++i)
        if ((*at)[i].IsObject())
          checker.object((*at)[i], *sp.type, true, p + "[" + std::to_string(i) + "]");
    } else if (at->IsObject()) {
      checker.object(*at, *sp.type, true, p);
    }
  }
  return errors;
}

}  // namespace meshop::manifest::k8s_values
