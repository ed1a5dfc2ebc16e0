#include "operator/metrics/registry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace meshop::metrics {

void Counter::inc(double v) {
  if (v < 0) throw std::invalid_argument("counter increment must not be negative");
  value_.fetch_add(v, std::memory_order_relaxed);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      counts_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (std::isnan(bounds_[i]) || std::isinf(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1]))
      throw std::invalid_argument("histogram buckets must be finite and strictly increasing");
  }
}

void Histogram::observe(double v) {
  // Bucket i holds values in (bounds[i-1], bounds[i]]; le is inclusive.
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(v, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::vector<double> default_buckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

std::vector<double> exponential_buckets(double start, double factor, int count) {
  if (start <= 0 || factor <= 1 || count < 1)
    throw std::invalid_argument("exponential_buckets needs start > 0, factor > 1, count >= 1");
  std::vector<double> out;
  for (int i = 0; i < count; ++i, start *= factor)
    out.push_back(start);
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[32];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

std::string escape_label_value(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

namespace {
bool name_char(char c, bool first, bool colon) {
  bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
  return alpha || (!first && c >= '0' && c <= '9');
}

std::string_view type_name(Type t) {
  switch (t) {
    case Type::counter:
      return "counter";
    case Type::gauge:
      return "gauge";
    case Type::histogram:
      return "histogram";
  }
  return "untyped";
}

// Writes `{a="x",b="y"` (no closing brace) for the label pairs; nothing when empty.
void write_labels(std::string& out, const std::vector<std::string>& names,
                  const LabelValues& values) {
  for (size_t i = 0; i < names.size(); ++i) {
    out += i == 0 ? '{' : ',';
    out += names[i];
    out += "=\"";
    out += escape_label_value(values[i]);
    out += '"';
  }
}

void write_sample(std::string& out, std::string_view name, const std::vector<std::string>& names,
                  const LabelValues& values, double v) {
  out += name;
  write_labels(out, names, values);
  if (!names.empty()) out += '}';
  out += ' ';
  out += format_value(v);
  out += '\n';
}
}  // namespace

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0, true)) return false;
  return true;
}

bool valid_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (!name_char(name[i], i == 0, false)) return false;
  return true;
}

FamilyBase::FamilyBase(std::string name, std::string help, std::vector<std::string> labels,
                       Type type)
    : name_(std::move(name)), help_(std::move(help)), labels_(std::move(labels)), type_(type) {
  if (!valid_metric_name(name_)) throw std::invalid_argument("invalid metric name: " + name_);
  for (size_t i = 0; i < labels_.size(); ++i) {
    const auto& l = labels_[i];
    if (!valid_label_name(l))
      throw std::invalid_argument("metric " + name_ + ": invalid label name: " + l);
    if (type_ == Type::histogram && l == "le")
      throw std::invalid_argument("metric " + name_ + ": label name \"le\" is reserved");
    if (std::find(labels_.begin(), labels_.begin() + i, l) != labels_.begin() + i)
      throw std::invalid_argument("metric " + name_ + ": duplicate label name: " + l);
  }
}

void FamilyBase::check_arity(const LabelValues& values) const {
  if (values.size() != labels_.size())
    throw std::invalid_argument("metric " + name_ + ": expected " + std::to_string(labels_.size()) +
                                " label values, got " + std::to_string(values.size()));
}

void FamilyBase::write_header(std::string& out) const {
  out += "# HELP ";
  out += name_;
  out += ' ';
  out += escape_help(help_);
  out += "\n# TYPE ";
  out += name_;
  out += ' ';
  out += type_name(type_);
  out += '\n';
}

template <class M>
Family<M>::Family(std::string name, std::string help, std::vector<std::string> labels, Type type,
                  std::vector<double> buckets)
    : FamilyBase(std::move(name), std::move(help), std::move(labels), type),
      buckets_(std::move(buckets)) {
  if constexpr (std::is_same_v<M, Histogram>) Histogram check(buckets_);  // validates bounds
  // A family without labels has exactly one series; expose it from the start at zero.
  if (labels_.empty()) with({});
}

template <class M>
M& Family<M>::with(const LabelValues& values) {
  check_arity(values);
  std::lock_guard lock(mu_);
  auto it = series_.find(values);
  if (it == series_.end()) {
    std::unique_ptr<M> m;
    if constexpr (std::is_same_v<M, Histogram>)
      m = std::make_unique<M>(buckets_);
    else
      m = std::make_unique<M>();
    it = series_.emplace(values, std::move(m)).first;
  }
  return *it->second;
}

template <class M>
void Family<M>::expose(std::string& out) const {
  std::lock_guard lock(mu_);
  if (series_.empty()) return;  // as client_golang: a labelled family with no series is omitted
  write_header(out);
  for (const auto& [values, m] : series_) {
    if constexpr (std::is_same_v<M, Histogram>) {
      std::vector<std::string> names = labels_;
      names.push_back("le");
      LabelValues vals = values;
      vals.emplace_back();
      uint64_t cumulative = 0;
      const auto& bounds = m->bounds();
      for (size_t i = 0; i <= bounds.size(); ++i) {
        cumulative += m->bucket_count(i);
        vals.back() = i < bounds.size() ? format_value(bounds[i]) : "+Inf";
        write_sample(out, name_ + "_bucket", names, vals, static_cast<double>(cumulative));
      }
      write_sample(out, name_ + "_sum", labels_, values, m->sum());
      // _count equals the +Inf bucket; read from the buckets so the two always agree.
      write_sample(out, name_ + "_count", labels_, values, static_cast<double>(cumulative));
    } else {
      write_sample(out, name_, labels_, values, m->value());
    }
  }
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

template <class M>
Family<M>& Registry::add(std::unique_ptr<Family<M>> family) {
  std::lock_guard lock(mu_);
  auto [it, inserted] = families_.try_emplace(family->name(), nullptr);
  if (!inserted) throw std::invalid_argument("metric registered twice: " + family->name());
  auto* raw = family.get();
  it->second = std::move(family);
  return *raw;
}

Family<Counter>& Registry::counter(std::string name, std::string help,
                                   std::vector<std::string> labels) {
  return add(std::make_unique<Family<Counter>>(std::move(name), std::move(help), std::move(labels),
                                               Type::counter));
}

Family<Gauge>& Registry::gauge(std::string name, std::string help,
                               std::vector<std::string> labels) {
  return add(std::make_unique<Family<Gauge>>(std::move(name), std::move(help), std::move(labels),
                                             Type::gauge));
}

Family<Histogram>& Registry::histogram(std::string name, std::string help,
                                       std::vector<std::string> labels,
                                       std::vector<double> buckets) {
  return add(std::make_unique<Family<Histogram>>(
      std::move(name), std::move(help), std::move(labels), Type::histogram, std::move(buckets)));
}

std::string Registry::expose() const {
  std::string out;
  std::lock_guard lock(mu_);
  for (const auto& [name, family] : families_)
    family->expose(out);
  return out;
}

}  // namespace meshop::metrics
