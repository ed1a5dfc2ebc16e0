// Prometheus metrics: counters, gauges and histograms with labels, exposed in the
// text exposition format 0.0.4.
//
//   metrics::Registry reg;
//   auto& total = reg.counter("controller_runtime_reconcile_total", "Total reconciliations.",
//                             {"controller", "result"});
//   total.with({"install", "success"}).inc();
//   std::string body = reg.expose();   // served at /metrics
//
// Contract:
// - Names are checked at registration (metric: [a-zA-Z_:][a-zA-Z0-9_:]*, label:
//   [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__"; "le" is reserved for histograms).
//   A bad name, a duplicate metric name or a wrong number of label values is a programming
//   error and throws std::invalid_argument.
// - References returned by with() and by the registration calls stay valid for the
//   registry's lifetime.
// - Thread-safe: updates are lock-free atomics; with() and expose() take a per-family mutex.
// - Output is deterministic: families sorted by name, series by label values.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace meshop::metrics {

using LabelValues = std::vector<std::string>;

class Counter {
 public:
  // Adds `v`, which must not be negative (counters only go up).
  void inc(double v = 1.0);
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void inc(double v = 1.0) { value_.fetch_add(v, std::memory_order_relaxed); }
  void dec(double v = 1.0) { value_.fetch_sub(v, std::memory_order_relaxed); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

class Histogram {
 public:
  // `bounds` are the upper bounds of the buckets, strictly increasing, without +Inf.
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  const std::vector<double>& bounds() const { return bounds_; }
  // Non-cumulative count of bucket i (i == bounds().size() is the +Inf bucket).
  uint64_t bucket_count(size_t i) const { return counts_[i].load(std::memory_order_relaxed); }
  uint64_t count() const { return count_.load(std::memory_order_relaxed); }
  double sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> counts_;
  std::atomic<uint64_t> count_{0};
  std::atomic<double> sum_{0.0};
};

// Default buckets of client_golang (prometheus.DefBuckets).
std::vector<double> default_buckets();
// `count` buckets starting at `start`, each `factor` times the previous.
std::vector<double> exponential_buckets(double start, double factor, int count);

enum class Type { counter, gauge, histogram };

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  const std::string& name() const { return name_; }
  virtual void expose(std::string& out) const = 0;

 protected:
  FamilyBase(std::string name, std::string help, std::vector<std::string> labels, Type type);
  void check_arity(const LabelValues& values) const;
  void write_header(std::string& out) const;

  std::string name_;
  std::string help_;
  std::vector<std::string> labels_;
  Type type_;
  mutable std::mutex mu_;
};

// A metric family: one series per distinct list of label values.
template <class M>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help, std::vector<std::string> labels, Type type,
         std::vector<double> buckets = {});
  // The series for these label values (one per label name, in order), created on first use.
  M& with(const LabelValues& values);
  // The series with no labels; only for families registered without label names.
  M& get() { return with({}); }
  void expose(std::string& out) const override;

 private:
  std::vector<double> buckets_;
  std::map<LabelValues, std::unique_ptr<M>> series_;
};

class Registry {
 public:
  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> labels = {});
  Family<Gauge>& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  Family<Histogram>& histogram(std::string name, std::string help,
                               std::vector<std::string> labels = {},
                               std::vector<double> buckets = default_buckets());

  // The text exposition format 0.0.4 (Content-Type: text/plain; version=0.0.4).
  std::string expose() const;

 private:
  template <class M>
  Family<M>& add(std::unique_ptr<Family<M>> family);

  mutable std::mutex mu_;
  std::map<std::string, std::unique_ptr<FamilyBase>, std::less<>> families_;
};

// Formatting helpers of the exposition format, exposed for tests.
std::string format_value(double v);                  // "+Inf", "-Inf", "NaN", shortest repr
std::string escape_help(std::string_view help);      // \ and newline
std::string escape_label_value(std::string_view v);  // \, " and newline
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

}  // namespace meshop::metrics
