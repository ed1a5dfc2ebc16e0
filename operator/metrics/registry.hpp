// meshop's metric families on prometheus-cpp (core): prometheus::Registry holds the series,
// prometheus::Counter / Gauge / Histogram count, prometheus::TextSerializer writes the text
// exposition format 0.0.4. What this header adds is what prometheus-cpp leaves to its caller:
//
//   metrics::Registry reg;
//   auto& total = reg.counter("controller_runtime_reconcile_total",
//                             "Total number of reconciliations per controller",
//                             {"controller", "result"});
//   total.with({"install", "success"}).Increment();
//   std::string body = reg.expose();   // served at /metrics
//
// - A family's label names are fixed when it is registered, and every series gives one value
//   per name, in order (prometheus-cpp takes a free-form label map per series, so a typo would
//   make a second schema; here a wrong number of values throws std::invalid_argument). Label
//   values must come from bounded sets (reasons, kinds, controller names), never from objects.
// - with() caches the series it returns: the first call creates it in prometheus-cpp's family
//   (prometheus::Family::Add, which allocates and locks); later calls are a shared-lock lookup.
//   Hot paths keep the reference instead (work queues, the webhook's unlabelled counters).
// - An unlabelled family has its one series from the start (exposed at 0); a labelled family
//   with no series yet is not exposed at all (prometheus-cpp omits empty families).
// - Help text must not contain a backslash or newline (prometheus-cpp writes it unescaped).
// - Names are checked by prometheus-cpp (std::invalid_argument); a name registered twice
//   throws std::invalid_argument (the prometheus::Registry is in InsertBehavior::Throw).
// - References returned by the registration calls and by with() stay valid for the
//   registry's lifetime. Thread-safe: series updates are prometheus-cpp's (atomics; a
//   histogram observation takes its own mutex); with() and expose() lock the family.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <shared_mutex>
#include <string>
#include <vector>

namespace meshop::metrics {

using Counter = prometheus::Counter;
using Gauge = prometheus::Gauge;
using Histogram = prometheus::Histogram;
using LabelValues = std::vector<std::string>;

// Default buckets of client_golang (prometheus.DefBuckets).
std::vector<double> default_buckets();
// `count` buckets starting at `start`, each `factor` times the previous (client_golang's
// ExponentialBuckets).
std::vector<double> exponential_buckets(double start, double factor, int count);

// Observations recorded by a histogram series (its _count), for tests and status reports.
uint64_t sample_count(const Histogram& h);

enum class Type { counter, gauge, histogram };

// What a registered family is, whether or not it has series yet.
struct FamilyInfo {
  std::string name;
  std::string help;
  Type type;
  std::vector<std::string> labels;
  std::vector<double> buckets;  // histograms only
};

class FamilyBase {
 public:
  virtual ~FamilyBase() = default;
  const FamilyInfo& info() const { return info_; }
  // Creates (or finds) the series for these label values without touching its value.
  virtual void touch(const LabelValues& values) = 0;

 protected:
  explicit FamilyBase(FamilyInfo info) : info_(std::move(info)) {}
  prometheus::Labels labels_for(const LabelValues& values) const;

  FamilyInfo info_;
};

// One prometheus-cpp family and its label names.
template <class M>
class Family final : public FamilyBase {
 public:
  Family(prometheus::Family<M>& family, FamilyInfo info);
  // The series for these label values (one per label name, in order), created on first use.
  M& with(const LabelValues& values);
  // The series of a family registered without label names.
  M& get() { return with({}); }
  void touch(const LabelValues& values) override { with(values); }

 private:
  prometheus::Family<M>& family_;
  std::shared_mutex mu_;
  std::map<LabelValues, M*, std::less<>> series_;
};

class Registry {
 public:
  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> labels = {});
  Family<Gauge>& gauge(std::string name, std::string help, std::vector<std::string> labels = {});
  Family<Histogram>& histogram(std::string name, std::string help,
                               std::vector<std::string> labels = {},
                               std::vector<double> buckets = default_buckets());

  // The text exposition format 0.0.4 (Content-Type: text/plain; version=0.0.4), written by
  // prometheus::TextSerializer from the registry's families.
  std::string expose() const;

  // Every registered family, in registration order.
  std::vector<FamilyBase*> families() const;
  // The underlying registry, for collectors that register on prometheus-cpp directly.
  prometheus::Registry& underlying() { return registry_; }

 private:
  template <class M>
  Family<M>& add(prometheus::Family<M>& family, FamilyInfo info);

  prometheus::Registry registry_{prometheus::Registry::InsertBehavior::Throw};
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
};

}  // namespace meshop::metrics
