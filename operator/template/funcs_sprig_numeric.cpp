// sprig v3.3.0's numeric and list functions that funcs_sprig.cpp does not define: seq,
// untilStep, chunk, mustChunk, toDecimal, and the float family addf, add1f, subf, mulf,
// divf, maxf, minf.
//
// The float family computes as sprig does with shopspring/decimal: each operand becomes the
// shortest decimal that round-trips its float64 (decimal.NewFromFloat), sums and products
// are exact, a quotient is rounded half away from zero to 16 decimal places
// (decimal.DivisionPrecision), and the result is the float64 nearest to the exact decimal
// (big.Rat.Float64). So `addf 0.1 0.2` is 0.3, not 0.30000000000000004.
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine::sprig {

namespace {

using funcs::cast_to_float64;

// --- a minimal arbitrary-precision decimal: sign, decimal digits, power of ten -------------

// Magnitudes are decimal digit strings without leading zeros ("0" is zero).
int cmp_mag(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

std::string trim_mag(std::string s) {
  std::size_t nz = s.find_first_not_of('0');
  return nz == std::string::npos ? "0" : s.substr(nz);
}

std::string add_mag(const std::string& a, const std::string& b) {
  std::string out;
  int carry = 0;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()) || carry; ++i) {
    int d = carry;
    if (i < a.size()) d += a[a.size() - 1 - i] - '0';
    if (i < b.size()) d += b[b.size() - 1 - i] - '0';
    out += static_cast<char>('0' + d % 10);
    carry = d / 10;
  }
  std::reverse(out.begin(), out.end());
  return trim_mag(out);
}

// a - b for a >= b.
std::string sub_mag(const std::string& a, const std::string& b) {
  std::string out;
  int borrow = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    int d = a[a.size() - 1 - i] - '0' - borrow;
    if (i < b.size()) d -= b[b.size() - 1 - i] - '0';
    borrow = d < 0;
    out += static_cast<char>('0' + (d + 10) % 10);
  }
  std::reverse(out.begin(), out.end());
  return trim_mag(out);
}

std::string mul_mag(const std::string& a, const std::string& b) {
  std::vector<int> acc(a.size() + b.size(), 0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j)
      acc[i + j + 1] += (a[i] - '0') * (b[j] - '0');
  for (std::size_t k = acc.size(); k-- > 1;) {
    acc[k - 1] += acc[k] / 10;
    acc[k] %= 10;
  }
  std::string out;
  for (int d : acc)
    out += static_cast<char>('0' + d);
  return trim_mag(out);
}

std::string shift_mag(const std::string& a, std::int64_t zeros) {
  return a == "0" ? a : a + std::string(static_cast<std::size_t>(zeros), '0');
}

// Truncated quotient and remainder of a / b (b != 0), by long division.
std::pair<std::string, std::string> divmod_mag(const std::string& a, const std::string& b) {
  std::string q, r = "0";
  for (char c : a) {
    r = trim_mag(r + c);
    int d = 0;
    while (cmp_mag(r, b) >= 0) {
      r = sub_mag(r, b);
      ++d;
    }
    q += static_cast<char>('0' + d);
  }
  return {trim_mag(q), r};
}

struct Decimal {
  bool neg = false;
  std::string mag = "0";
  std::int64_t exp = 0;
};

// decimal.NewFromFloat: the shortest decimal that reads back as f. NaN and infinities fail
// with decimal's panic text.
Result<Decimal> from_float(double f) {
  if (std::isnan(f) || std::isinf(f))
    return fail("Cannot create a Decimal from " + format_float(f, 'g', -1));
  Decimal d;
  if (f == 0) return d;
  std::string e = format_float(std::fabs(f), 'e', -1);  // d.ddddde±XX
  std::size_t epos = e.find('e');
  std::string digits = e.substr(0, 1) + (epos > 2 ? e.substr(2, epos - 2) : "");
  d.neg = std::signbit(f);
  d.mag = trim_mag(digits);
  d.exp = std::strtoll(e.c_str() + epos + 1, nullptr, 10) -
          static_cast<std::int64_t>(digits.size() - 1);
  return d;
}

Decimal add(const Decimal& a, const Decimal& b, bool negate_b) {
  const bool bneg = b.neg != negate_b;
  std::int64_t e = std::min(a.exp, b.exp);
  std::string am = shift_mag(a.mag, a.exp - e), bm = shift_mag(b.mag, b.exp - e);
  Decimal out;
  out.exp = e;
  if (a.neg == bneg) {
    out.mag = add_mag(am, bm);
    out.neg = a.neg;
  } else if (cmp_mag(am, bm) >= 0) {
    out.mag = sub_mag(am, bm);
    out.neg = a.neg;
  } else {
    out.mag = sub_mag(bm, am);
    out.neg = bneg;
  }
  if (out.mag == "0") out.neg = false;
  return out;
}

Decimal mul(const Decimal& a, const Decimal& b) {
  Decimal out{a.neg != b.neg, mul_mag(a.mag, b.mag), a.exp + b.exp};
  if (out.mag == "0") out.neg = false;
  return out;
}

constexpr std::int64_t kDivisionPrecision = 16;

// decimal.Div: DivRound(b, 16), half away from zero.
Result<Decimal> div(const Decimal& a, const Decimal& b) {
  if (b.mag == "0") return fail("decimal division by 0");
  std::int64_t e = a.exp - b.exp + kDivisionPrecision;
  std::string num = a.mag, den = b.mag;
  if (e < 0)
    den = shift_mag(den, -e);
  else
    num = shift_mag(num, e);
  auto [q, r] = divmod_mag(num, den);
  if (cmp_mag(add_mag(r, r), den) >= 0) q = add_mag(q, "1");
  Decimal out{a.neg != b.neg, q, -kDivisionPrecision};
  if (out.mag == "0") out.neg = false;
  return out;
}

// big.Rat.Float64: the nearest float64 (strtod rounds correctly).
double to_float(const Decimal& d) {
  std::string s = (d.neg ? "-" : "") + d.mag + "e" + std::to_string(d.exp);
  return std::strtod(s.c_str(), nullptr);
}

enum class Op { kAdd, kSub, kMul, kDiv };

// sprig's execDecimalOp: fold `rest` into `first` with the operation.
Result<Value> decimal_op(const Value& first, Args rest, Op op) {
  auto acc = from_float(cast_to_float64(first));
  if (!acc) return fail(acc.error());
  Decimal d = *acc;
  for (const Value& v : rest) {
    auto x = from_float(cast_to_float64(v));
    if (!x) return fail(x.error());
    switch (op) {
      case Op::kAdd:
        d = add(d, *x, false);
        break;
      case Op::kSub:
        d = add(d, *x, true);
        break;
      case Op::kMul:
        d = mul(d, *x);
        break;
      case Op::kDiv: {
        auto q = div(d, *x);
        if (!q) return fail(q.error());
        d = *q;
        break;
      }
    }
  }
  return Value::float64(to_float(d));
}

// math.Max / math.Min, with their NaN, infinity and signed-zero rules.
double go_max(double x, double y) {
  if (std::isinf(x) && x > 0) return x;
  if (std::isinf(y) && y > 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? y : x;
  return x > y ? x : y;
}
double go_min(double x, double y) {
  if (std::isinf(x) && x < 0) return x;
  if (std::isinf(y) && y < 0) return y;
  if (std::isnan(x) || std::isnan(y)) return std::nan("");
  if (x == 0 && x == y) return std::signbit(x) ? x : y;
  return x < y ? x : y;
}

// A bound on generated list lengths, as `until` has: a template must not exhaust memory.
constexpr std::int64_t kMaxItems = 10'000'000;

Result<std::vector<std::int64_t>> until_step(std::int64_t start, std::int64_t stop,
                                             std::int64_t step) {
  std::vector<std::int64_t> v;
  auto too_many = [&] { return v.size() > static_cast<std::size_t>(kMaxItems); };
  if (stop < start) {
    if (step >= 0) return v;
    for (std::int64_t i = start; i > stop;) {
      v.push_back(i);
      if (too_many()) return fail("untilStep: too many items");
      if (__builtin_add_overflow(i, step, &i)) break;  // Go would wrap around and run out of memory
    }
    return v;
  }
  if (step <= 0) return v;
  for (std::int64_t i = start; i < stop;) {
    v.push_back(i);
    if (too_many()) return fail("untilStep: too many items");
    if (__builtin_add_overflow(i, step, &i)) break;
  }
  return v;
}

Value int_list(const std::vector<std::int64_t>& v) {
  std::vector<Value> items;
  items.reserve(v.size());
  for (std::int64_t i : v)
    items.push_back(Value::integer(i));
  return new_list(std::move(items), "int");
}

Result<Value> seq(Args a) {
  auto joined = [](Result<std::vector<std::int64_t>> r) -> Result<Value> {
    if (!r) return fail(r.error());
    std::string out;
    for (std::size_t i = 0; i < r->size(); ++i) {
      if (i > 0) out += ' ';
      out += std::to_string((*r)[i]);
    }
    return str(std::move(out));
  };
  switch (a.size()) {
    case 0:
      return str("");
    case 1: {
      std::int64_t end = a[0].as_int(), inc = end < 1 ? -1 : 1;
      return joined(until_step(1, end + inc, inc));
    }
    case 2: {
      std::int64_t start = a[0].as_int(), end = a[1].as_int(), step = end < start ? -1 : 1;
      return joined(until_step(start, end + step, step));
    }
    case 3: {
      std::int64_t start = a[0].as_int(), step = a[1].as_int(), end = a[2].as_int(), inc = 1;
      if (end < start) {
        inc = -1;
        if (step > 0) return str("");
      }
      return joined(until_step(start, end + inc, step));
    }
    default:
      return str("");
  }
}

Result<Value> chunk(Args a) {
  const std::int64_t size = a[0].as_int();
  const Value& list = a[1];
  if (list.is_nil_or_invalid() && list.kind() != Kind::kList)
    return fail("runtime error: invalid memory address or nil pointer dereference");
  if (list.kind() != Kind::kList)
    return fail("Cannot chunk type " + std::string(go_kind_name(list)));
  static const std::vector<Value> kEmpty;
  const std::vector<Value>& items = list.as_list() ? list.as_list()->items : kEmpty;
  const auto l = static_cast<std::int64_t>(items.size());
  constexpr const char* kBadLen = "runtime error: makeslice: len out of range";
  // Go computes the chunk count and the last chunk's length in float64.
  std::int64_t cs = funcs::go_float_to_int64(
      std::floor(static_cast<double>(l - 1) / static_cast<double>(size)) + 1);
  if (cs < 0) return fail(kBadLen);
  std::vector<Value> out;
  for (std::int64_t i = 0; i < cs; ++i) {
    std::int64_t clen = size;
    if (i == cs - 1) {
      clen = funcs::go_float_to_int64(
          std::floor(std::fmod(static_cast<double>(l), static_cast<double>(size))));
      if (clen == 0) clen = size;
    }
    if (clen < 0) return fail(kBadLen);
    std::vector<Value> part;
    for (std::int64_t j = 0; j < clen; ++j) {
      std::int64_t ix = i * size + j;
      if (ix < 0 || ix >= l) return fail("reflect: slice index out of range");
      part.push_back(items[static_cast<std::size_t>(ix)]);
    }
    out.push_back(new_list(std::move(part)));
  }
  return new_list(std::move(out), "[]interface {}");
}

}  // namespace

void add_sprig_numeric_functions(FunctionMap& fm) {
  fm.add("seq", variadic({}, kInt), seq);
  fm.add("untilStep", fixed({kInt, kInt, kInt}), [](Args a) -> Result<Value> {
    auto v = until_step(a[0].as_int(), a[1].as_int(), a[2].as_int());
    if (!v) return fail(v.error());
    return int_list(*v);
  });
  fm.add("chunk", fixed({kInt, kAny}), chunk);
  fm.add("mustChunk", fixed({kInt, kAny}), chunk);
  fm.add("toDecimal", fixed({kAny}), [](Args a) -> Result<Value> {
    // strconv.ParseInt(fmt.Sprint(v), 8, 64); any error gives 0.
    std::string s = sprint_value(a[0]);
    std::string_view d = s;
    bool neg = false;
    if (!d.empty() && (d[0] == '+' || d[0] == '-')) {
      neg = d[0] == '-';
      d.remove_prefix(1);
    }
    if (d.empty()) return Value::integer(0, Kind::kInt64);
    constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;  // |INT64_MIN|
    std::uint64_t n = 0;
    for (char c : d) {
      if (c < '0' || c > '7') return Value::integer(0, Kind::kInt64);
      if (n > (kLimit - static_cast<std::uint64_t>(c - '0')) / 8)
        return Value::integer(0, Kind::kInt64);
      n = n * 8 + static_cast<std::uint64_t>(c - '0');
    }
    if (!neg && n == kLimit) return Value::integer(0, Kind::kInt64);
    std::int64_t r = neg ? static_cast<std::int64_t>(0 - n) : static_cast<std::int64_t>(n);
    return Value::integer(r, Kind::kInt64);
  });
  fm.add("add1f", fixed({kAny}), [](Args a) -> Result<Value> {
    Value one = Value::integer(1);
    return decimal_op(a[0], Args(&one, 1), Op::kAdd);
  });
  fm.add("addf", variadic({}, kAny),
         [](Args a) -> Result<Value> { return decimal_op(Value::float64(0), a, Op::kAdd); });
  fm.add("subf", variadic({kAny}, kAny),
         [](Args a) -> Result<Value> { return decimal_op(a[0], a.subspan(1), Op::kSub); });
  fm.add("mulf", variadic({kAny}, kAny),
         [](Args a) -> Result<Value> { return decimal_op(a[0], a.subspan(1), Op::kMul); });
  fm.add("divf", variadic({kAny}, kAny),
         [](Args a) -> Result<Value> { return decimal_op(a[0], a.subspan(1), Op::kDiv); });
  fm.add("maxf", variadic({kAny}, kAny), [](Args a) -> Result<Value> {
    double m = cast_to_float64(a[0]);
    for (const Value& v : a.subspan(1))
      m = go_max(m, cast_to_float64(v));
    return Value::float64(m);
  });
  fm.add("minf", variadic({kAny}, kAny), [](Args a) -> Result<Value> {
    double m = cast_to_float64(a[0]);
    for (const Value& v : a.subspan(1))
      m = go_min(m, cast_to_float64(v));
    return Value::float64(m);
  });
}

}  // namespace meshop::template_engine::sprig
