// sprig v3.3.0 functions (github.com/Masterminds/sprig/v3, functions.go) with sprig's
// semantics, re-implemented on template Values. Where sprig panics (e.g. `first` on a
// non-list, `div` by zero) the function fails with the panic's message, which is what
// text/template reports as "error calling NAME: ...".
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <regex>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine {

namespace {

using namespace funcs;

constexpr ParamType kAny = ParamType::any();
constexpr ParamType kStr = ParamType::string();
constexpr ParamType kInt = ParamType::int_();
constexpr ParamType kBool = ParamType::boolean();
constexpr ParamType kMapT = ParamType::map();

Value str(std::string s) {
  return Value::string(std::move(s));
}

Signature fixed(std::initializer_list<ParamType> params) {
  return Signature{std::vector<ParamType>(params), std::nullopt};
}
Signature variadic(std::initializer_list<ParamType> params, ParamType rest) {
  return Signature{std::vector<ParamType>(params), rest};
}

Value new_list(std::vector<Value> items) {
  return Value::list(std::make_shared<List>(std::move(items)));
}

// The items of a Go slice/array argument, or nullopt when `v` is not one.
const std::vector<Value>* list_items(const Value& v) {
  static const std::vector<Value> kEmpty;
  if (v.kind() != Kind::kList) return nullptr;
  return v.as_list() ? &v.as_list()->items : &kEmpty;
}

// reflect.TypeOf(x).Kind() on a nil interface panics with a nil dereference.
constexpr const char* kNilDeref =
    "runtime error: invalid memory address or nil pointer dereference";

std::string kind_for_error(const Value& v) {
  return std::string(go_kind_name(v));
}

// --- base64 / sha256 ---------------------------------------------------------------

const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string b64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    std::uint32_t n = static_cast<unsigned char>(in[i]) << 16 |
                      static_cast<unsigned char>(in[i + 1]) << 8 |
                      static_cast<unsigned char>(in[i + 2]);
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += kB64[(n >> 6) & 63];
    out += kB64[n & 63];
  }
  if (i + 1 == in.size()) {
    std::uint32_t n = static_cast<unsigned char>(in[i]) << 16;
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    std::uint32_t n =
        static_cast<unsigned char>(in[i]) << 16 | static_cast<unsigned char>(in[i + 1]) << 8;
    out += kB64[n >> 18];
    out += kB64[(n >> 12) & 63];
    out += kB64[(n >> 6) & 63];
    out += '=';
  }
  return out;
}

// base64.StdEncoding.DecodeString (padding required, \r and \n skipped); on error sprig
// returns the error text instead of the data.
Result<std::string> b64_decode(std::string_view src) {
  auto val = [](unsigned char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  auto corrupt = [](std::size_t at) -> Result<std::string> {
    return fail("illegal base64 data at input byte " + std::to_string(at));
  };
  auto skip_newlines = [&](std::size_t& si) {
    while (si < src.size() && (src[si] == '\n' || src[si] == '\r'))
      ++si;
  };
  std::string out;
  std::size_t si = 0;
  while (true) {
    std::array<int, 4> q{};
    int dlen = 4;
    bool end = false;
    for (int j = 0; j < 4; ++j) {
      if (si == src.size()) {
        if (j == 0) return out;
        return corrupt(si - static_cast<std::size_t>(j));
      }
      auto in = static_cast<unsigned char>(src[si++]);
      int v = val(in);
      if (v >= 0) {
        q[j] = v;
        continue;
      }
      if (in == '\n' || in == '\r') {
        --j;
        continue;
      }
      if (in != '=') return corrupt(si - 1);
      if (j < 2) return corrupt(si - 1);
      if (j == 2) {
        skip_newlines(si);
        if (si == src.size()) return corrupt(src.size());
        if (src[si] != '=') return corrupt(si - 1);
        ++si;
      }
      skip_newlines(si);
      if (si < src.size()) return corrupt(si);
      dlen = j;
      end = true;
      break;
    }
    std::uint32_t n = static_cast<std::uint32_t>(q[0] << 18 | q[1] << 12 | q[2] << 6 | q[3]);
    out += static_cast<char>(n >> 16);
    if (dlen >= 3) out += static_cast<char>((n >> 8) & 0xFF);
    if (dlen >= 4) out += static_cast<char>(n & 0xFF);
    if (end) return out;
  }
}

struct Sha256 {
  std::array<std::uint32_t, 8> h{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  static constexpr std::array<std::uint32_t, 64> k{
      0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
      0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
      0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
      0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
      0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
      0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
      0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
      0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
      0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
      0xc67178f2};
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void block(const unsigned char* p) {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 |
             std::uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    auto [a, b, c, d, e, f, g, hh] = h;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
      std::uint32_t ch = (e & f) ^ (~e & g);
      std::uint32_t t1 = hh + s1 + ch + k[i] + w[i];
      std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
      std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
      std::uint32_t t2 = s0 + maj;
      hh = g;
      g = f;
      f = e;
      e = d + t1;
      d = c;
      c = b;
      b = a;
      a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += hh;
  }
  static std::string hex_digest(std::string_view in) {
    Sha256 s;
    std::string data(in);
    std::uint64_t bits = static_cast<std::uint64_t>(in.size()) * 8;
    data += static_cast<char>(0x80);
    while (data.size() % 64 != 56)
      data += '\0';
    for (int i = 7; i >= 0; --i)
      data += static_cast<char>((bits >> (8 * i)) & 0xFF);
    for (std::size_t off = 0; off < data.size(); off += 64)
      s.block(reinterpret_cast<const unsigned char*>(data.data() + off));
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (std::uint32_t x : s.h)
      for (int i = 28; i >= 0; i -= 4)
        out += hex[(x >> i) & 0xF];
    return out;
  }
};

// --- semver (Masterminds/semver v3.3.0) --------------------------------------------------

struct Version {
  std::uint64_t major = 0, minor = 0, patch = 0;
  std::string pre, metadata, original;
};

const std::regex& version_regex() {
  static const std::regex re(
      R"(^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$)");
  return re;
}

// semver's validatePrerelease: dot-separated identifiers of [0-9A-Za-z-]; a numeric one
// has no leading zero. Empty identifiers pass, as in semver.
api::Error invalid_version(std::string message) {
  return api::make_error(api::ErrorKind::kInvalid, std::move(message));
}

api::Status prerelease_error(std::string_view pre) {
  std::size_t start = 0;
  while (start <= pre.size()) {
    std::size_t end = pre.find('.', start);
    if (end == std::string_view::npos) end = pre.size();
    std::string_view id = pre.substr(start, end - start);
    if (id.find_first_not_of("0123456789") == std::string_view::npos) {
      if (id.size() > 1 && id[0] == '0') return invalid_version("Version segment starts with 0");
    } else if (id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-"
                                    "0123456789") != std::string_view::npos) {
      return invalid_version("Invalid Prerelease string");
    }
    start = end + 1;
  }
  return api::ok_status();
}

api::Status metadata_error(std::string_view md) {
  for (char c : md)
    if (c != '.' && c != '-' && !std::isalnum(static_cast<unsigned char>(c)))
      return invalid_version("Invalid Metadata string");
  return api::ok_status();
}

// semver.NewVersion: the loose form (optional "v", minor and patch), Go's error texts.
Result<Version> parse_version(std::string_view s) {
  std::cmatch m;
  if (!std::regex_match(s.data(), s.data() + s.size(), m, version_regex()))
    return fail("Invalid Semantic Version");
  auto num = [&](int g, std::uint64_t& out) -> api::Status {
    if (!m[g].matched) return api::ok_status();
    std::string t = m[g].str();
    if (!t.empty() && t[0] == '.') t.erase(0, 1);
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
    if (ec == std::errc() && p == t.data() + t.size()) return api::ok_status();
    return invalid_version("Error parsing version segment: strconv.ParseUint: parsing " +
                           go_quote(t) + ": value out of range");
  };
  Version v;
  v.original = std::string(s);
  for (auto [g, out] : {std::pair{1, &v.major}, std::pair{2, &v.minor}, std::pair{3, &v.patch}})
    if (auto e = num(g, *out); !e) return fail(std::move(e).error());
  if (m[5].matched) {
    v.pre = m[5].str();
    if (auto e = prerelease_error(v.pre); !e) return fail(std::move(e).error());
  }
  if (m[8].matched) v.metadata = m[8].str();
  return v;
}

int compare_pre_part(std::string_view a, std::string_view b) {
  auto numeric = [](std::string_view x) {
    return !x.empty() && x.find_first_not_of("0123456789") == std::string_view::npos;
  };
  bool an = numeric(a), bn = numeric(b);
  if (an && bn) {
    std::uint64_t x = 0, y = 0;
    std::from_chars(a.data(), a.data() + a.size(), x);
    std::from_chars(b.data(), b.data() + b.size(), y);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (an) return -1;
  if (bn) return 1;
  return a < b ? -1 : (a > b ? 1 : 0);
}

int compare_pre(std::string_view a, std::string_view b) {
  if (a == b) return 0;
  if (a.empty()) return 1;
  if (b.empty()) return -1;
  std::size_t i = 0, j = 0;
  while (true) {
    bool ea = i > a.size(), eb = j > b.size();
    if (ea && eb) return 0;
    if (ea) return -1;
    if (eb) return 1;
    std::size_t ei = a.find('.', i);
    if (ei == std::string_view::npos) ei = a.size();
    std::size_t ej = b.find('.', j);
    if (ej == std::string_view::npos) ej = b.size();
    int c = compare_pre_part(a.substr(i, ei - i), b.substr(j, ej - j));
    if (c != 0) return c;
    i = ei + 1;
    j = ej + 1;
  }
}

int compare(const Version& a, const Version& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  return compare_pre(a.pre, b.pre);
}

struct Constraint {
  std::string op;
  Version con;
  bool dirty = false, minor_dirty = false, patch_dirty = false;
};

bool is_x(std::string_view s) {
  return s == "x" || s == "X" || s == "*";
}

Result<Constraint> parse_constraint(std::string_view op, std::string_view ver) {
  Constraint c;
  c.op = std::string(op);
  std::string_view v = ver;
  if (!v.empty() && v[0] == 'v') v.remove_prefix(1);
  // Split off prerelease/build.
  std::size_t tail = v.find_first_of("-+");
  std::string_view core = v.substr(0, tail);
  std::string_view rest = tail == std::string_view::npos ? std::string_view{} : v.substr(tail);
  std::vector<std::string_view> parts;
  std::size_t s = 0;
  while (true) {
    std::size_t d = core.find('.', s);
    parts.push_back(core.substr(s, d == std::string_view::npos ? std::string_view::npos : d - s));
    if (d == std::string_view::npos) break;
    s = d + 1;
  }
  std::string pre;
  if (!rest.empty() && rest[0] == '-') {
    std::size_t plus = rest.find('+');
    pre = std::string(rest.substr(0, plus));
  }
  std::string text;
  if (parts.empty() || is_x(parts[0]) || parts[0].empty()) {
    text = "0.0.0" + pre;
    c.dirty = true;
  } else if (parts.size() < 2 || is_x(parts[1])) {
    c.minor_dirty = c.dirty = true;
    text = std::string(parts[0]) + ".0.0" + pre;
  } else if (parts.size() < 3 || is_x(parts[2])) {
    c.dirty = c.patch_dirty = true;
    text = std::string(parts[0]) + "." + std::string(parts[1]) + ".0" + pre;
  } else {
    text = std::string(ver);
  }
  auto parsed = parse_version(text);
  if (!parsed) return fail("constraint Parser Error");
  c.con = *parsed;
  return c;
}

bool check(const Constraint& c, const Version& v) {
  const Version& k = c.con;
  bool pre_blocked = !v.pre.empty() && k.pre.empty();
  auto tilde = [&]() {
    if (pre_blocked) return false;
    if (compare(v, k) < 0) return false;
    if (k.major == 0 && k.minor == 0 && k.patch == 0 && !c.minor_dirty && !c.patch_dirty)
      return true;
    if (v.major != k.major) return false;
    if (v.minor != k.minor && !c.minor_dirty) return false;
    return true;
  };
  const std::string& op = c.op;
  if (op.empty() || op == "=") {
    if (pre_blocked) return false;
    if (c.dirty) return tilde();
    return compare(v, k) == 0;
  }
  if (op == "!=") {
    if (c.dirty) {
      if (pre_blocked) return false;
      if (k.major != v.major) return true;
      if (k.minor != v.minor && !c.minor_dirty) return true;
      if (c.minor_dirty) return false;
      if (k.patch != v.patch && !c.patch_dirty) return true;
      if (c.patch_dirty) {
        if (!v.pre.empty() || !k.pre.empty()) return compare_pre(v.pre, k.pre) != 0;
        return false;
      }
    }
    return compare(v, k) != 0;
  }
  if (pre_blocked) return false;
  if (op == ">") {
    if (!c.dirty) return compare(v, k) == 1;
    if (v.major > k.major) return true;
    if (v.major < k.major) return false;
    if (c.minor_dirty) return false;
    if (c.patch_dirty) return v.minor > k.minor;
    return compare(v, k) == 1;
  }
  if (op == "<") return compare(v, k) < 0;
  if (op == ">=" || op == "=>") return compare(v, k) >= 0;
  if (op == "<=" || op == "=<") {
    if (!c.dirty) return compare(v, k) <= 0;
    if (v.major > k.major) return false;
    if (v.major == k.major && v.minor > k.minor && !c.minor_dirty) return false;
    return true;
  }
  if (op == "~" || op == "~>") return tilde();
  if (op == "^") {
    if (compare(v, k) < 0) return false;
    if (k.major > 0 || c.minor_dirty) return v.major == k.major;
    if (k.major == 0 && v.major > 0) return false;
    if (k.minor > 0 || c.patch_dirty) return v.minor == k.minor;
    if (k.minor == 0 && v.minor > 0) return false;
    return k.patch == v.patch;
  }
  return false;
}

Result<Value> semver_compare(std::string_view constraint, std::string_view version) {
  static const std::string cv =
      R"(v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?)";
  static const std::string ops = R"(=||!=|>|<|>=|=>|<=|=<|~|~>|\^)";
  static const std::regex range_re(R"(\s*()" + cv + R"()\s+-\s+()" + cv + R"()\s*)");
  static const std::regex valid_re(R"(^(\s*()" + ops + R"()\s*()" + cv + R"()\s*)((?:\s+|,\s*)()" +
                                   ops + R"()\s*()" + cv + R"()\s*)*$)");
  static const std::regex find_re("(" + ops + R"()\s*()" + cv + ")");
  static const std::regex one_re(R"(^\s*()" + ops + R"()\s*()" + cv + R"()\s*$)");
  // rewriteRange: "a - b" -> ">= a, <= b ".
  std::string c(constraint);
  {
    std::string out;
    std::smatch m;
    std::string rest = c;
    std::string rewritten = c;
    auto it = std::sregex_iterator(c.begin(), c.end(), range_re);
    for (; it != std::sregex_iterator(); ++it) {
      std::string t = ">= " + (*it)[1].str() + ", <= " + (*it)[11].str() + " ";
      std::size_t at = rewritten.find((*it)[0].str());
      if (at != std::string::npos) rewritten.replace(at, (*it)[0].length(), t);
    }
    c = rewritten;
  }
  std::vector<std::vector<Constraint>> ors;
  std::size_t start = 0;
  while (true) {
    std::size_t bar = c.find("||", start);
    std::string part = c.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
    if (!std::regex_match(part, valid_re)) return fail("improper constraint: " + part);
    std::vector<Constraint> ands;
    std::vector<std::string> found;
    for (auto it = std::sregex_iterator(part.begin(), part.end(), find_re);
         it != std::sregex_iterator(); ++it)
      found.push_back((*it)[0].str());
    if (found.empty()) found.push_back(part);
    for (const std::string& f : found) {
      std::smatch m;
      if (!std::regex_match(f, m, one_re)) return fail("improper constraint: " + f);
      auto pc = parse_constraint(m[1].str(), m[2].str());
      if (!pc) return fail(pc.error());
      ands.push_back(*pc);
    }
    ors.push_back(std::move(ands));
    if (bar == std::string::npos) break;
    start = bar + 2;
  }
  auto v = parse_version(version);
  if (!v) return fail(v.error());
  for (const auto& ands : ors) {
    bool all = true;
    for (const auto& k : ands)
      if (!check(k, *v)) {
        all = false;
        break;
      }
    if (all) return Value::boolean(true);
  }
  return Value::boolean(false);
}

// The *semver.Version that sprig's `semver` returns, and the semver.Version values its
// IncPatch/IncMinor/IncMajor/SetPrerelease/SetMetadata methods return. As in Go, only the
// pointer has the pointer-receiver methods (Original and the comparisons); the methods
// text/template cannot call with template arguments (Scan, the Unmarshal* family) and
// driver.Value's Value are not offered.
class SemverObject final : public Object {
 public:
  SemverObject(Version v, bool pointer) : v_(std::move(v)), pointer_(pointer) {}
  std::string_view go_type() const override {
    return pointer_ ? "*semver.Version" : "semver.Version";
  }
  std::string_view go_kind() const override { return pointer_ ? "ptr" : "struct"; }
  bool is_stringer() const override { return true; }
  void format(std::string& out, bool, bool sharp) const override {
    if (!sharp) {
      out += text(v_);
      return;
    }
    auto hexnum = [](std::uint64_t n) {
      std::array<char, 20> b{};
      auto r = std::to_chars(b.data(), b.data() + b.size(), n, 16);
      return "0x" + std::string(b.data(), r.ptr);
    };
    // fmt's %#v of a pointer to a struct: "&" and the struct's Go syntax.
    if (pointer_) out += '&';
    out += "semver.Version{major:" + hexnum(v_.major) + ", minor:" + hexnum(v_.minor) +
           ", patch:" + hexnum(v_.patch) + ", pre:" + go_quote(v_.pre) +
           ", metadata:" + go_quote(v_.metadata) + ", original:" + go_quote(v_.original) + "}";
  }
  std::optional<Function> method(std::string_view name) const override {
    const Version v = v_;
    auto nullary = [](auto f) { return Function({}, [f](Args) -> Result<Value> { return f(); }); };
    auto u64 = [](std::uint64_t n) { return Value::unsigned_integer(n, Kind::kUint64); };
    if (name == "String") return nullary([v] { return str(text(v)); });
    if (name == "Major") return nullary([v, u64] { return u64(v.major); });
    if (name == "Minor") return nullary([v, u64] { return u64(v.minor); });
    if (name == "Patch") return nullary([v, u64] { return u64(v.patch); });
    if (name == "Prerelease") return nullary([v] { return str(v.pre); });
    if (name == "Metadata") return nullary([v] { return str(v.metadata); });
    if (name == "MarshalJSON") return nullary([v] { return str(go_quote(text(v))); });
    if (name == "IncPatch" || name == "IncMinor" || name == "IncMajor") {
      Version n = v;
      n.pre.clear();
      n.metadata.clear();
      if (name == "IncMajor") {
        ++n.major;
        n.minor = n.patch = 0;
      } else if (name == "IncMinor") {
        ++n.minor;
        n.patch = 0;
      } else if (v.pre.empty()) {
        ++n.patch;
      }
      n.original = v_prefix(v) + text(n);
      return nullary([n] { return value(n); });
    }
    if (name == "SetPrerelease" || name == "SetMetadata") {
      bool pre = name == "SetPrerelease";
      return Function(fixed({kStr}), [v, pre](Args a) -> Result<Value> {
        std::string_view x = a[0].as_string();
        if (!x.empty()) {
          auto e = pre ? prerelease_error(x) : metadata_error(x);
          if (!e) return fail(std::move(e).error());
        }
        Version n = v;
        (pre ? n.pre : n.metadata) = std::string(x);
        n.original = v_prefix(v) + text(n);
        return value(n);
      });
    }
    if (!pointer_) return std::nullopt;
    if (name == "Original") return nullary([v] { return str(v.original); });
    // A nil *semver.Version argument: Equal answers false, the others dereference it.
    auto cmp = [v](bool nil_ok, auto pred) {
      return Function(fixed({ParamType::object("*semver.Version")}),
                      [v, nil_ok, pred](Args a) -> Result<Value> {
                        const auto* o = a[0].kind() == Kind::kObject
                                            ? dynamic_cast<const SemverObject*>(a[0].as_object())
                                            : nullptr;
                        if (o == nullptr) {
                          if (nil_ok) return Value::boolean(false);
                          return fail(kNilDeref);
                        }
                        return pred(compare(v, o->v_));
                      });
    };
    if (name == "Compare") return cmp(false, [](int c) { return Value::integer(c); });
    if (name == "LessThan") return cmp(false, [](int c) { return Value::boolean(c < 0); });
    if (name == "LessThanEqual") return cmp(false, [](int c) { return Value::boolean(c <= 0); });
    if (name == "GreaterThan") return cmp(false, [](int c) { return Value::boolean(c > 0); });
    if (name == "GreaterThanEqual") return cmp(false, [](int c) { return Value::boolean(c >= 0); });
    if (name == "Equal") return cmp(true, [](int c) { return Value::boolean(c == 0); });
    return std::nullopt;
  }

  static Value pointer(Version v) {
    return Value::object(std::make_shared<SemverObject>(std::move(v), true));
  }

 private:
  static Value value(Version v) {
    return Value::object(std::make_shared<SemverObject>(std::move(v), false));
  }
  static std::string text(const Version& v) {
    std::string s =
        std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
    if (!v.pre.empty()) s += "-" + v.pre;
    if (!v.metadata.empty()) s += "+" + v.metadata;
    return s;
  }
  static std::string v_prefix(const Version& v) {
    return !v.original.empty() && v.original[0] == 'v' ? "v" : "";
  }

  Version v_;
  bool pointer_;
};

// --- mergo (dario.cat/mergo v1.0.1) for map[string]interface {} ----------------------------

// mergo's map rules as sprig uses them: a nil source value is copied only when
// overwriting; two maps merge recursively (in place); anything else replaces the
// destination value when overwriting or when the destination is missing or empty.
// Values are reference-counted, not garbage-collected: a map that (transitively) contains
// itself would never be freed. Go's templates can build one (`set $m "k" $m`), but nothing
// can print or range over it either, so meshop refuses the store that would close the cycle.
bool reaches(const Value& v, const void* target, std::vector<const void*>& seen) {
  const void* node = v.kind() == Kind::kMap    ? static_cast<const void*>(v.as_map())
                     : v.kind() == Kind::kList ? static_cast<const void*>(v.as_list())
                                               : nullptr;
  if (node == nullptr) return false;
  if (node == target) return true;
  if (std::find(seen.begin(), seen.end(), node) != seen.end()) return false;
  seen.push_back(node);
  if (v.kind() == Kind::kMap) {
    for (const auto& e : v.as_map()->entries())
      if (reaches(e.second, target, seen)) return true;
  } else {
    for (const Value& item : v.as_list()->items)
      if (reaches(item, target, seen)) return true;
  }
  return false;
}

bool closes_cycle(const Value& v, const Map& into) {
  std::vector<const void*> seen;
  return reaches(v, &into, seen);
}

constexpr std::string_view kCycleError =
    "the value contains the dictionary it would be stored in (cyclic data is not supported)";

// mergo's map rules as sprig uses them: a nil source value is copied only when
// overwriting; two maps merge recursively (in place); anything else replaces the
// destination value when overwriting or when the destination is missing or empty.
// False (and the merge stopped) when a store would make a map contain itself.
bool merge_into(Map& dst, const Map& src, bool overwrite) {
  // A copy of the entries: `src` may be reachable from `dst` (`merge $m $m.a`), and the
  // recursive merge must not grow the vector being iterated.
  const std::vector<Map::Entry> entries = src.entries();
  for (const auto& [k, sv] : entries) {
    Value* dv = dst.find(k);
    if (sv.is_nil_or_invalid()) {
      if (overwrite) dst.set(k, Value::nil());
      continue;
    }
    if (dv != nullptr && dv->kind() == Kind::kMap && sv.kind() == Kind::kMap && dv->as_map() &&
        sv.as_map()) {
      if (dv->as_map() == sv.as_map()) continue;  // merging a map into itself changes nothing
      Map* sub = dv->as_map();
      if (!merge_into(*sub, *sv.as_map(), overwrite)) return false;
      continue;
    }
    if (overwrite || dv == nullptr || sprig_empty(*dv)) {
      if (closes_cycle(sv, dst)) return false;
      dst.set(k, sv);
    }
  }
  return true;
}

}  // namespace

void add_sprig_functions(FunctionMap& fm) {
  // --- defaults / flow ---
  fm.add("default", variadic({kAny}, kAny), [](Args a) -> Result<Value> {
    if (a.size() < 2 || sprig_empty(a[1])) return a[0];
    return a[1];
  });
  fm.add("empty", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::boolean(sprig_empty(a[0])); });
  fm.add("coalesce", variadic({}, kAny), [](Args a) -> Result<Value> {
    for (const Value& v : a)
      if (!sprig_empty(v)) return v;
    return Value::nil();
  });
  fm.add("all", variadic({}, kAny), [](Args a) -> Result<Value> {
    for (const Value& v : a)
      if (sprig_empty(v)) return Value::boolean(false);
    return Value::boolean(true);
  });
  fm.add("any", variadic({}, kAny), [](Args a) -> Result<Value> {
    for (const Value& v : a)
      if (!sprig_empty(v)) return Value::boolean(true);
    return Value::boolean(false);
  });
  fm.add("ternary", fixed({kAny, kAny, kBool}),
         [](Args a) -> Result<Value> { return a[2].as_bool() ? a[0] : a[1]; });
  fm.add("fail", fixed({kStr}),
         [](Args a) -> Result<Value> { return fail(std::string(a[0].as_string())); });

  // --- strings ---
  fm.add("quote", variadic({}, kAny), [](Args a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.is_nil_or_invalid()) continue;
      if (!first) out += ' ';
      first = false;
      out += go_quote(strval(v));
    }
    return str(std::move(out));
  });
  fm.add("squote", variadic({}, kAny), [](Args a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.is_nil_or_invalid()) continue;
      if (!first) out += ' ';
      first = false;
      out += '\'';
      out += sprint_value(v);
      out += '\'';
    }
    return str(std::move(out));
  });
  fm.add("cat", variadic({}, kAny), [](Args a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.is_nil_or_invalid()) continue;
      if (!first) out += ' ';
      first = false;
      out += sprint_value(v);
    }
    return str(std::move(out));
  });
  fm.add("trunc", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    std::int64_t c = a[0].as_int();
    std::string_view s = a[1].as_string();
    auto n = static_cast<std::int64_t>(s.size());
    if (c < 0 && n + c > 0) return str(std::string(s.substr(static_cast<std::size_t>(n + c))));
    if (c >= 0 && n > c) return str(std::string(s.substr(0, static_cast<std::size_t>(c))));
    return a[1];
  });
  fm.add("trim", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(std::string(go_trim_space(a[0].as_string()))); });
  auto trim_all = [](Args a) -> Result<Value> {
    return str(std::string(go_trim(a[1].as_string(), a[0].as_string())));
  };
  fm.add("trimAll", fixed({kStr, kStr}), trim_all);
  fm.add("trimall", fixed({kStr, kStr}), trim_all);
  fm.add("trimPrefix", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    std::string_view s = a[1].as_string();
    if (s.starts_with(a[0].as_string())) s.remove_prefix(a[0].as_string().size());
    return str(std::string(s));
  });
  fm.add("trimSuffix", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    std::string_view s = a[1].as_string();
    if (s.ends_with(a[0].as_string())) s.remove_suffix(a[0].as_string().size());
    return str(std::string(s));
  });
  fm.add("upper", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(go_to_upper(a[0].as_string())); });
  fm.add("lower", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(go_to_lower(a[0].as_string())); });
  fm.add("title", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(go_title(a[0].as_string())); });
  fm.add("replace", fixed({kStr, kStr, kStr}), [](Args a) -> Result<Value> {
    return str(go_replace_all(a[2].as_string(), a[0].as_string(), a[1].as_string()));
  });
  fm.add("repeat", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_int() < 0) return fail("strings: negative Repeat count");
    std::string out;
    for (std::int64_t i = 0; i < a[0].as_int(); ++i)
      out += a[1].as_string();
    return str(std::move(out));
  });
  fm.add("nospace", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string out;
    std::string_view s = a[0].as_string();
    for (std::size_t i = 0; i < s.size();) {
      Rune r = decode_rune(s, i);
      if (!is_space_rune(r.r)) out.append(s.substr(i, r.width));
      i += r.width;
    }
    return str(std::move(out));
  });
  fm.add("contains", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    return Value::boolean(a[1].as_string().find(a[0].as_string()) != std::string_view::npos);
  });
  fm.add("hasPrefix", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    return Value::boolean(a[1].as_string().starts_with(a[0].as_string()));
  });
  fm.add("hasSuffix", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    return Value::boolean(a[1].as_string().ends_with(a[0].as_string()));
  });
  auto go_split = [](std::string_view s, std::string_view sep) {
    std::vector<std::string> parts;
    if (sep.empty()) {
      for (std::size_t i = 0; i < s.size();) {
        Rune r = decode_rune(s, i);
        parts.emplace_back(s.substr(i, r.width));
        i += r.width;
      }
      return parts;
    }
    std::size_t start = 0;
    while (true) {
      std::size_t hit = s.find(sep, start);
      if (hit == std::string_view::npos) break;
      parts.emplace_back(s.substr(start, hit - start));
      start = hit + sep.size();
    }
    parts.emplace_back(s.substr(start));
    return parts;
  };
  fm.add("splitList", fixed({kStr, kStr}), [go_split](Args a) -> Result<Value> {
    return make_string_list(go_split(a[1].as_string(), a[0].as_string()));
  });
  fm.add("split", fixed({kStr, kStr}), [go_split](Args a) -> Result<Value> {
    auto parts = go_split(a[1].as_string(), a[0].as_string());
    auto m = std::make_shared<StringMap>();
    for (std::size_t i = 0; i < parts.size(); ++i)
      m->set("_" + std::to_string(i), parts[i]);
    return Value::string_map(std::move(m));
  });
  // sprig's strslice.
  auto strslice = [](const Value& v) -> std::vector<std::string> {
    std::vector<std::string> out;
    if (const auto* items = list_items(v)) {
      bool typed_strings = v.as_list() && v.as_list()->elem_type == "string";
      for (const Value& e : *items) {
        if (!typed_strings && e.is_nil_or_invalid()) continue;
        out.push_back(strval(e));
      }
      return out;
    }
    if (v.is_nil_or_invalid()) return out;
    out.push_back(strval(v));
    return out;
  };
  fm.add("join", fixed({kStr, kAny}), [strslice](Args a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const auto& s : strslice(a[1])) {
      if (!first) out += a[0].as_string();
      first = false;
      out += s;
    }
    return str(std::move(out));
  });
  fm.add("toStrings", fixed({kAny}),
         [strslice](Args a) -> Result<Value> { return make_string_list(strslice(a[0])); });
  fm.add("sortAlpha", fixed({kAny}), [strslice](Args a) -> Result<Value> {
    if (list_items(a[0]) == nullptr) return make_string_list({strval(a[0])});
    auto v = strslice(a[0]);
    std::sort(v.begin(), v.end());
    return make_string_list(std::move(v));
  });
  fm.add("toString", fixed({kAny}), [](Args a) -> Result<Value> { return str(strval(a[0])); });
  fm.add("indent", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_int() < 0) return fail("strings: negative Repeat count");
    std::string pad(static_cast<std::size_t>(a[0].as_int()), ' ');
    return str(pad + go_replace_all(a[1].as_string(), "\n", "\n" + pad));
  });
  fm.add("nindent", fixed({kInt, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_int() < 0) return fail("strings: negative Repeat count");
    std::string pad(static_cast<std::size_t>(a[0].as_int()), ' ');
    return str("\n" + pad + go_replace_all(a[1].as_string(), "\n", "\n" + pad));
  });
  fm.add("b64enc", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(b64_encode(a[0].as_string())); });
  fm.add("b64dec", fixed({kStr}), [](Args a) -> Result<Value> {
    auto r = b64_decode(a[0].as_string());
    return str(r ? *r : r.message());
  });
  fm.add("sha256sum", fixed({kStr}),
         [](Args a) -> Result<Value> { return str(Sha256::hex_digest(a[0].as_string())); });

  // --- numbers (spf13/cast conversions) ---
  fm.add("atoi", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view s = a[0].as_string();
    if (auto v = go_parse_int(s, false)) return Value::integer(*v);
    // strconv.Atoi returns the clamped value (with ErrRange, which sprig ignores) when a
    // well-formed number overflows.
    std::string_view digits = s;
    bool neg = false;
    if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
      neg = digits[0] == '-';
      digits.remove_prefix(1);
    }
    if (!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos)
      return Value::integer(neg ? INT64_MIN : INT64_MAX);
    return Value::integer(0);
  });
  fm.add("int", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::integer(cast_to_int64(a[0])); });
  fm.add("int64", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::integer(cast_to_int64(a[0]), Kind::kInt64); });
  fm.add("float64", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::float64(cast_to_float64(a[0])); });
  auto i64 = [](std::int64_t v) { return Value::integer(v, Kind::kInt64); };
  fm.add("add1", fixed({kAny}), [i64](Args a) -> Result<Value> {
    return i64(static_cast<std::int64_t>(static_cast<std::uint64_t>(cast_to_int64(a[0])) + 1));
  });
  fm.add("add", variadic({}, kAny), [i64](Args a) -> Result<Value> {
    std::uint64_t s = 0;
    for (const Value& v : a)
      s += static_cast<std::uint64_t>(cast_to_int64(v));
    return i64(static_cast<std::int64_t>(s));
  });
  fm.add("sub", fixed({kAny, kAny}), [i64](Args a) -> Result<Value> {
    return i64(static_cast<std::int64_t>(static_cast<std::uint64_t>(cast_to_int64(a[0])) -
                                         static_cast<std::uint64_t>(cast_to_int64(a[1]))));
  });
  fm.add("mul", variadic({kAny}, kAny), [i64](Args a) -> Result<Value> {
    std::uint64_t p = static_cast<std::uint64_t>(cast_to_int64(a[0]));
    for (std::size_t i = 1; i < a.size(); ++i)
      p *= static_cast<std::uint64_t>(cast_to_int64(a[i]));
    return i64(static_cast<std::int64_t>(p));
  });
  fm.add("div", fixed({kAny, kAny}), [i64](Args a) -> Result<Value> {
    std::int64_t x = cast_to_int64(a[0]), y = cast_to_int64(a[1]);
    if (y == 0) return fail("runtime error: integer divide by zero");
    if (x == INT64_MIN && y == -1) return i64(x);
    return i64(x / y);
  });
  fm.add("mod", fixed({kAny, kAny}), [i64](Args a) -> Result<Value> {
    std::int64_t x = cast_to_int64(a[0]), y = cast_to_int64(a[1]);
    if (y == 0) return fail("runtime error: integer divide by zero");
    if (y == -1) return i64(0);
    return i64(x % y);
  });
  auto maxf = [i64](Args a) -> Result<Value> {
    std::int64_t m = cast_to_int64(a[0]);
    for (std::size_t i = 1; i < a.size(); ++i)
      m = std::max(m, cast_to_int64(a[i]));
    return i64(m);
  };
  fm.add("max", variadic({kAny}, kAny), maxf);
  fm.add("biggest", variadic({kAny}, kAny), maxf);
  fm.add("min", variadic({kAny}, kAny), [i64](Args a) -> Result<Value> {
    std::int64_t m = cast_to_int64(a[0]);
    for (std::size_t i = 1; i < a.size(); ++i)
      m = std::min(m, cast_to_int64(a[i]));
    return i64(m);
  });
  fm.add("until", fixed({kInt}), [](Args a) -> Result<Value> {
    std::int64_t n = a[0].as_int();
    if (std::llabs(n) > 10'000'000) return fail("until: count too large");
    std::vector<Value> out;
    for (std::int64_t i = 0; n >= 0 ? i < n : i > n; i += n >= 0 ? 1 : -1)
      out.push_back(Value::integer(i));
    auto l = std::make_shared<List>(std::move(out), "int");
    return Value::list(std::move(l));
  });

  // --- lists ---
  fm.add("list", variadic({}, kAny),
         [](Args a) -> Result<Value> { return new_list(std::vector<Value>(a.begin(), a.end())); });
  // sprig copies the list and appends. When the argument is the list's only holder (the
  // executor moves `$l` into `$l = append $l x`), nothing can see the difference, so the list
  // grows in place: building a list in a range is linear, not quadratic.
  auto push = [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot push on type " + kind_for_error(a[0]));
    if (List* l = a[0].as_list();
        l != nullptr && a[0].owner().get() == l && a[0].owner().use_count() == 1) {
      l->items.push_back(a[1]);
      l->elem_type.clear();  // sprig's result is []interface {} whatever the argument was
      return a[0];
    }
    list_elements_copied() += items->size();
    std::vector<Value> out(*items);
    out.push_back(a[1]);
    return new_list(std::move(out));
  };
  fm.add("append", fixed({kAny, kAny}), push);
  fm.add("push", fixed({kAny, kAny}), push);
  fm.add("prepend", fixed({kAny, kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot prepend on type " + kind_for_error(a[0]));
    list_elements_copied() += items->size();
    std::vector<Value> out{a[1]};
    out.insert(out.end(), items->begin(), items->end());
    return new_list(std::move(out));
  });
  fm.add("first", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find first on type " + kind_for_error(a[0]));
    return items->empty() ? Value::nil() : items->front();
  });
  fm.add("last", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find last on type " + kind_for_error(a[0]));
    return items->empty() ? Value::nil() : items->back();
  });
  fm.add("rest", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find rest on type " + kind_for_error(a[0]));
    if (items->empty()) return Value::typed_nil(Kind::kList);
    return new_list(std::vector<Value>(items->begin() + 1, items->end()));
  });
  fm.add("initial", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find initial on type " + kind_for_error(a[0]));
    if (items->empty()) return Value::typed_nil(Kind::kList);
    return new_list(std::vector<Value>(items->begin(), items->end() - 1));
  });
  fm.add("reverse", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find reverse on type " + kind_for_error(a[0]));
    return new_list(std::vector<Value>(items->rbegin(), items->rend()));
  });
  fm.add("compact", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot compact on type " + kind_for_error(a[0]));
    std::vector<Value> out;
    for (const Value& v : *items)
      if (!sprig_empty(v)) out.push_back(v);
    return new_list(std::move(out));
  });
  fm.add("uniq", fixed({kAny}), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find uniq on type " + kind_for_error(a[0]));
    std::vector<Value> out;
    for (const Value& v : *items) {
      bool seen = false;
      for (const Value& o : out)
        if (deep_equal(v, o)) {
          seen = true;
          break;
        }
      if (!seen) out.push_back(v);
    }
    return new_list(std::move(out));
  });
  fm.add("without", variadic({kAny}, kAny), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr) return fail("Cannot find without on type " + kind_for_error(a[0]));
    std::vector<Value> out;
    for (const Value& v : *items) {
      bool drop = false;
      for (std::size_t i = 1; i < a.size(); ++i)
        if (deep_equal(v, a[i])) {
          drop = true;
          break;
        }
      if (!drop) out.push_back(v);
    }
    return new_list(std::move(out));
  });
  fm.add("has", fixed({kAny, kAny}), [](Args a) -> Result<Value> {
    if (a[1].is_nil_or_invalid()) return Value::boolean(false);
    const auto* items = list_items(a[1]);
    if (items == nullptr) return fail("Cannot find has on type " + kind_for_error(a[1]));
    for (const Value& v : *items)
      if (deep_equal(a[0], v)) return Value::boolean(true);
    return Value::boolean(false);
  });
  // sprig's slice replaces the text/template builtin of the same name.
  fm.add("slice", variadic({kAny}, kAny), [](Args a) -> Result<Value> {
    if (a[0].is_nil_or_invalid()) return fail(kNilDeref);
    const auto* items = list_items(a[0]);
    if (items == nullptr)
      return fail("list should be type of slice or array but " + kind_for_error(a[0]));
    if (items->empty()) return Value::nil();
    auto n = static_cast<std::int64_t>(items->size());
    std::int64_t start = a.size() > 1 ? cast_to_int64(a[1]) : 0;
    std::int64_t end = a.size() > 2 ? cast_to_int64(a[2]) : n;
    if (start < 0 || end < start || end > n)
      return fail("reflect.Value.Slice: slice index out of bounds");
    auto l =
        std::make_shared<List>(std::vector<Value>(items->begin() + start, items->begin() + end),
                               a[0].as_list()->elem_type);
    return Value::list(std::move(l));
  });
  fm.add("concat", variadic({}, kAny), [](Args a) -> Result<Value> {
    std::vector<Value> out;
    for (const Value& v : a) {
      if (v.is_nil_or_invalid()) return fail(kNilDeref);
      const auto* items = list_items(v);
      if (items == nullptr) return fail("Cannot concat type " + kind_for_error(v) + " as list");
      out.insert(out.end(), items->begin(), items->end());
    }
    return new_list(std::move(out));
  });

  // --- dicts ---
  fm.add("dict", variadic({}, kAny), [](Args a) -> Result<Value> {
    auto m = std::make_shared<Map>();
    for (std::size_t i = 0; i < a.size(); i += 2) {
      if (i + 1 >= a.size())
        m->set(strval(a[i]), Value::string(""));
      else
        m->set(strval(a[i]), a[i + 1]);
    }
    return Value::map(std::move(m));
  });
  fm.add("get", fixed({kMapT, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_map())
      if (const Value* v = a[0].as_map()->find(a[1].as_string())) return *v;
    return Value::string("");
  });
  fm.add("set", fixed({kMapT, kStr, kAny}), [](Args a) -> Result<Value> {
    if (a[0].as_map() == nullptr) return fail("assignment to entry in nil map");
    if (closes_cycle(a[2], *a[0].as_map())) return fail(std::string(kCycleError));
    a[0].as_map()->set(a[1].as_string(), a[2]);
    return a[0];
  });
  fm.add("unset", fixed({kMapT, kStr}), [](Args a) -> Result<Value> {
    if (a[0].as_map()) a[0].as_map()->erase(a[1].as_string());
    return a[0];
  });
  fm.add("hasKey", fixed({kMapT, kStr}), [](Args a) -> Result<Value> {
    return Value::boolean(a[0].as_map() && a[0].as_map()->find(a[1].as_string()) != nullptr);
  });
  fm.add("keys", variadic({}, kMapT), [](Args a) -> Result<Value> {
    std::vector<std::string> out;
    for (const Value& m : a)
      if (m.as_map())
        for (const auto& e : m.as_map()->entries())
          out.push_back(e.first);
    return make_string_list(std::move(out));
  });
  fm.add("values", fixed({kMapT}), [](Args a) -> Result<Value> {
    std::vector<Value> out;
    if (a[0].as_map())
      for (const auto& e : a[0].as_map()->entries())
        out.push_back(e.second);
    return new_list(std::move(out));
  });
  fm.add("pick", variadic({kMapT}, kStr), [](Args a) -> Result<Value> {
    auto m = std::make_shared<Map>();
    for (std::size_t i = 1; i < a.size(); ++i)
      if (a[0].as_map())
        if (const Value* v = a[0].as_map()->find(a[i].as_string())) m->set(a[i].as_string(), *v);
    return Value::map(std::move(m));
  });
  fm.add("omit", variadic({kMapT}, kStr), [](Args a) -> Result<Value> {
    auto m = std::make_shared<Map>();
    if (a[0].as_map())
      for (const auto& [k, v] : a[0].as_map()->entries()) {
        bool drop = false;
        for (std::size_t i = 1; i < a.size(); ++i)
          drop = drop || a[i].as_string() == k;
        if (!drop) m->append_sorted(k, v);
      }
    return Value::map(std::move(m));
  });
  fm.add("pluck", variadic({kStr}, kMapT), [](Args a) -> Result<Value> {
    std::vector<Value> out;
    for (std::size_t i = 1; i < a.size(); ++i)
      if (a[i].as_map())
        if (const Value* v = a[i].as_map()->find(a[0].as_string())) out.push_back(*v);
    return new_list(std::move(out));
  });
  auto merge_fn = [](bool overwrite) {
    return [overwrite](Args a) -> Result<Value> {
      if (a[0].as_map() == nullptr) {
        // mergo on a nil destination map: it makes one only for non-empty sources; sprig then
        // returns the (local) dst, which the caller never sees. Go gives back a nil map.
        return Value::typed_nil(Kind::kMap);
      }
      for (std::size_t i = 1; i < a.size(); ++i)
        if (a[i].as_map() && !merge_into(*a[0].as_map(), *a[i].as_map(), overwrite))
          return fail(std::string(kCycleError));
      return a[0];
    };
  };
  fm.add("merge", variadic({kMapT}, kMapT), merge_fn(false));
  fm.add("mergeOverwrite", variadic({kMapT}, kMapT), merge_fn(true));
  fm.add("deepCopy", fixed({kAny}), [](Args a) -> Result<Value> {
    // copystructure.Copy(nil) fails inside reflect.
    if (a[0].is_nil_or_invalid()) return fail("reflect: call of reflect.Value.Type on zero Value");
    return deep_copy(a[0]);
  });
  fm.add("dig", variadic({}, kAny), [](Args a) -> Result<Value> {
    if (a.size() < 3) return fail("dig needs at least three arguments");
    const Value& dict = a[a.size() - 1];
    if (dict.kind() != Kind::kMap)
      return fail("interface conversion: interface {} is " + go_type_name(dict) +
                  ", not map[string]interface {}");
    Value cur = dict;
    for (std::size_t i = 0; i + 2 < a.size(); ++i) {
      if (!a[i].is_string())
        return fail("interface conversion: interface {} is " + go_type_name(a[i]) + ", not string");
      if (cur.kind() != Kind::kMap)
        return fail("interface conversion: interface {} is " + go_type_name(cur) +
                    ", not map[string]interface {}");
      const Value* next = cur.as_map() ? cur.as_map()->find(a[i].as_string()) : nullptr;
      if (next == nullptr) return a[a.size() - 2];
      cur = *next;
    }
    return cur;
  });

  // --- encoding ---
  fm.add("toJson", fixed({kAny}), [](Args a) -> Result<Value> {
    std::string out;
    if (!append_json(out, a[0], {})) return str("");
    return str(std::move(out));
  });
  fm.add("toPrettyJson", fixed({kAny}), [](Args a) -> Result<Value> {
    std::string out;
    if (!append_json(out, a[0], {.escape_html = true, .indent = 2})) return str("");
    return str(std::move(out));
  });
  fm.add("toRawJson", fixed({kAny}), [](Args a) -> Result<Value> {
    std::string out;
    if (!append_json(out, a[0], {.escape_html = false, .indent = 0}))
      return fail(json_marshal_error(a[0]));
    return str(std::move(out));
  });
  fm.add("fromJson", fixed({kStr}), [](Args a) -> Result<Value> {
    auto v = parse_json_value(a[0].as_string());
    if (!v) return Value::nil();
    return *v;
  });

  // --- reflection ---
  fm.add("typeOf", fixed({kAny}), [](Args a) -> Result<Value> { return str(go_type_name(a[0])); });
  fm.add("typeIs", fixed({kStr, kAny}), [](Args a) -> Result<Value> {
    return Value::boolean(go_type_name(a[1]) == a[0].as_string());
  });
  fm.add("typeIsLike", fixed({kStr, kAny}), [](Args a) -> Result<Value> {
    std::string t = go_type_name(a[1]);
    return Value::boolean(t == a[0].as_string() || t == "*" + std::string(a[0].as_string()));
  });
  fm.add("kindOf", fixed({kAny}),
         [](Args a) -> Result<Value> { return str(std::string(go_kind_name(a[0]))); });
  fm.add("kindIs", fixed({kStr, kAny}), [](Args a) -> Result<Value> {
    return Value::boolean(go_kind_name(a[1]) == a[0].as_string());
  });
  fm.add("deepEqual", fixed({kAny, kAny}),
         [](Args a) -> Result<Value> { return Value::boolean(deep_equal(a[0], a[1])); });

  // --- semver ---
  fm.add("semverCompare", fixed({kStr, kStr}), [](Args a) -> Result<Value> {
    return semver_compare(a[0].as_string(), a[1].as_string());
  });
  fm.add("semver", fixed({kStr}), [](Args a) -> Result<Value> {
    auto v = parse_version(a[0].as_string());
    if (!v) return fail(v.error());
    return SemverObject::pointer(*v);
  });

  // --- paths ---
  fm.add("base", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view p = a[0].as_string();
    if (p.empty()) return str(".");
    while (p.size() > 1 && p.back() == '/')
      p.remove_suffix(1);
    if (p == "/") return str("/");
    std::size_t slash = p.rfind('/');
    return str(std::string(slash == std::string_view::npos ? p : p.substr(slash + 1)));
  });
  fm.add("ext", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view p = a[0].as_string();
    for (std::size_t i = p.size(); i > 0 && p[i - 1] != '/'; --i)
      if (p[i - 1] == '.') return str(std::string(p.substr(i - 1)));
    return str("");
  });
  // --- less common sprig functions ---
  fm.add("substr", fixed({kInt, kInt, kStr}), [](Args a) -> Result<Value> {
    std::int64_t start = a[0].as_int(), end = a[1].as_int();
    std::string_view s = a[2].as_string();
    auto len = static_cast<std::int64_t>(s.size());
    auto oob = [](const std::string& what) {
      return fail("runtime error: slice bounds out of range " + what);
    };
    if (start < 0) {
      if (end < 0) return oob("[:" + std::to_string(end) + "]");
      if (end > len)
        return oob("[:" + std::to_string(end) + "] with length " + std::to_string(len));
      return str(std::string(s.substr(0, static_cast<std::size_t>(end))));
    }
    if (end < 0 || end > len) {
      if (start > len) return oob("[" + std::to_string(start) + ":" + std::to_string(len) + "]");
      return str(std::string(s.substr(static_cast<std::size_t>(start))));
    }
    if (start > end) return oob("[" + std::to_string(start) + ":" + std::to_string(end) + "]");
    return str(std::string(
        s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start))));
  });
  fm.add("splitn", fixed({kStr, kInt, kStr}), [](Args a) -> Result<Value> {
    std::string_view sep = a[0].as_string(), s = a[2].as_string();
    std::int64_t n = a[1].as_int();
    auto m = std::make_shared<StringMap>();
    if (n == 0) return Value::string_map(std::move(m));
    std::vector<std::string> parts;
    if (sep.empty()) {
      for (std::size_t i = 0; i < s.size();) {
        if (n > 0 && static_cast<std::int64_t>(parts.size()) == n - 1) {
          parts.emplace_back(s.substr(i));
          break;
        }
        Rune r = decode_rune(s, i);
        parts.emplace_back(s.substr(i, static_cast<std::size_t>(r.width)));
        i += static_cast<std::size_t>(r.width);
      }
    } else {
      std::size_t start = 0;
      while (n < 0 || static_cast<std::int64_t>(parts.size()) < n - 1) {
        std::size_t hit = s.find(sep, start);
        if (hit == std::string_view::npos) break;
        parts.emplace_back(s.substr(start, hit - start));
        start = hit + sep.size();
      }
      parts.emplace_back(s.substr(start));
    }
    for (std::size_t i = 0; i < parts.size(); ++i)
      m->set("_" + std::to_string(i), parts[i]);
    return Value::string_map(std::move(m));
  });
  // goutils.Uncapitalize: lower-case the first letter of every whitespace-separated word.
  fm.add("untitle", fixed({kStr}), [](Args a) -> Result<Value> {
    std::string_view s = a[0].as_string();
    std::string out;
    bool word_start = true;
    for (std::size_t i = 0; i < s.size();) {
      Rune r = decode_rune(s, i);
      if (is_space_rune(r.r)) {
        word_start = true;
        out.append(s.substr(i, static_cast<std::size_t>(r.width)));
      } else if (word_start) {
        word_start = false;
        append_rune(out, to_lower_rune(r.r));
      } else {
        out.append(s.substr(i, static_cast<std::size_t>(r.width)));
      }
      i += static_cast<std::size_t>(r.width);
    }
    return str(std::move(out));
  });
  fm.add("ceil", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::float64(std::ceil(cast_to_float64(a[0]))); });
  fm.add("floor", fixed({kAny}),
         [](Args a) -> Result<Value> { return Value::float64(std::floor(cast_to_float64(a[0]))); });
  fm.add("round", variadic({kAny, kInt}, ParamType::float64()), [](Args a) -> Result<Value> {
    double round_on = a.size() > 2 ? a[2].as_float() : 0.5;
    double val = cast_to_float64(a[0]);
    double pow = std::pow(10.0, static_cast<double>(a[1].as_int()));
    double digit = pow * val;
    double ipart = 0;
    double frac = std::modf(digit, &ipart);
    double r = frac >= round_on ? std::ceil(digit) : std::floor(digit);
    return Value::float64(r / pow);
  });
  fm.add("tuple", variadic({}, kAny),
         [](Args a) -> Result<Value> { return new_list(std::vector<Value>(a.begin(), a.end())); });
  fm.add("isAbs", fixed({kStr}),
         [](Args a) -> Result<Value> { return Value::boolean(a[0].as_string().starts_with("/")); });
  // The must* variants: the same behaviour, with the error returned instead of panicking
  // (text/template reports both the same way).
  for (const char* name :
       {"Append", "Push", "Prepend", "First", "Last", "Rest", "Initial", "Reverse", "Compact",
        "Uniq", "Without", "Has", "Slice", "Merge", "MergeOverwrite", "DeepCopy", "ToRawJson"}) {
    std::string base(name);
    base[0] = static_cast<char>(base[0] - 'A' + 'a');
    if (const Function* f = fm.find(base)) fm.add("must" + std::string(name), *f);
  }
  fm.add("mustFromJson", fixed({kStr}), [](Args a) -> Result<Value> {
    auto v = parse_json_value(a[0].as_string());
    if (!v) return fail(v.error());
    return *v;
  });
  fm.add("mustToJson", fixed({kAny}), [](Args a) -> Result<Value> {
    std::string out;
    if (!append_json(out, a[0], {})) return fail(json_marshal_error(a[0]));
    return str(std::move(out));
  });
  fm.add("mustToPrettyJson", fixed({kAny}), [](Args a) -> Result<Value> {
    std::string out;
    if (!append_json(out, a[0], {.escape_html = true, .indent = 2}))
      return fail(json_marshal_error(a[0]));
    return str(std::move(out));
  });
}

namespace sprig {

std::string base64_std_encode(std::string_view in) {
  return b64_encode(in);
}
Result<std::string> base64_std_decode(std::string_view in) {
  return b64_decode(in);
}

}  // namespace sprig

}  // namespace meshop::template_engine
