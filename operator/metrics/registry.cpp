#include "operator/metrics/registry.hpp"

#include <algorithm>
#include <cmath>
#include <prometheus/check_names.h>
#include <prometheus/text_serializer.h>
#include <stdexcept>

namespace meshop::metrics {

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

uint64_t sample_count(const Histogram& h) {
  return h.Collect().histogram.sample_count;
}

prometheus::Labels FamilyBase::labels_for(const LabelValues& values) const {
  if (values.size() != info_.labels.size())
    throw std::invalid_argument("metric " + info_.name + ": expected " +
                                std::to_string(info_.labels.size()) + " label values, got " +
                                std::to_string(values.size()));
  prometheus::Labels labels;
  for (size_t i = 0; i < values.size(); ++i)
    labels.emplace(info_.labels[i], values[i]);
  return labels;
}

template <class M>
Family<M>::Family(prometheus::Family<M>& family, FamilyInfo info)
    : FamilyBase(std::move(info)), family_(family) {
  if (info_.labels.empty()) with({});
}

template <class M>
M& Family<M>::with(const LabelValues& values) {
  {
    std::shared_lock lock(mu_);
    auto it = series_.find(values);
    if (it != series_.end()) return *it->second;
  }
  prometheus::Labels labels = labels_for(values);
  std::unique_lock lock(mu_);
  auto [it, inserted] = series_.try_emplace(values, nullptr);
  if (inserted) {
    if constexpr (std::is_same_v<M, Histogram>)
      it->second = &family_.Add(labels, info_.buckets);
    else
      it->second = &family_.Add(labels);
  }
  return *it->second;
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<Histogram>;

namespace {

void check_labels(const std::string& name, const std::string& help,
                  const std::vector<std::string>& labels, Type type) {
  // prometheus-cpp 1.0.1's TextSerializer writes HELP text unescaped: a newline would end the
  // line early and a backslash would be read as an escape.
  if (help.find_first_of("\\\n") != std::string::npos)
    throw std::invalid_argument("metric " + name +
                                ": help must not contain a backslash or newline");
  for (size_t i = 0; i < labels.size(); ++i) {
    const auto& l = labels[i];
    // prometheus-cpp checks a series' label names only when the series is created; a
    // family's names are known now, so a bad one fails at registration.
    if (!prometheus::CheckLabelName(l))
      throw std::invalid_argument("metric " + name + ": invalid label name: " + l);
    if (type == Type::histogram && l == "le")
      throw std::invalid_argument("metric " + name + ": label name \"le\" is reserved");
    if (std::find(labels.begin(), labels.begin() + static_cast<std::ptrdiff_t>(i), l) !=
        labels.begin() + static_cast<std::ptrdiff_t>(i))
      throw std::invalid_argument("metric " + name + ": duplicate label name: " + l);
  }
}

}  // namespace

template <class M>
Family<M>& Registry::add(prometheus::Family<M>& family, FamilyInfo info) {
  auto owned = std::make_unique<Family<M>>(family, std::move(info));
  auto* raw = owned.get();
  std::lock_guard lock(mu_);
  families_.push_back(std::move(owned));
  return *raw;
}

Family<Counter>& Registry::counter(std::string name, std::string help,
                                   std::vector<std::string> labels) {
  check_labels(name, help, labels, Type::counter);
  auto& family = prometheus::BuildCounter().Name(name).Help(help).Register(registry_);
  return add(family, {std::move(name), std::move(help), Type::counter, std::move(labels), {}});
}

Family<Gauge>& Registry::gauge(std::string name, std::string help,
                               std::vector<std::string> labels) {
  check_labels(name, help, labels, Type::gauge);
  auto& family = prometheus::BuildGauge().Name(name).Help(help).Register(registry_);
  return add(family, {std::move(name), std::move(help), Type::gauge, std::move(labels), {}});
}

Family<Histogram>& Registry::histogram(std::string name, std::string help,
                                       std::vector<std::string> labels,
                                       std::vector<double> buckets) {
  check_labels(name, help, labels, Type::histogram);
  // prometheus-cpp takes the bounds as given; unsorted ones would count into the wrong bucket.
  for (size_t i = 0; i < buckets.size(); ++i)
    if (!std::isfinite(buckets[i]) || (i > 0 && buckets[i] <= buckets[i - 1]))
      throw std::invalid_argument("metric " + name +
                                  ": histogram buckets must be finite and strictly increasing");
  auto& family = prometheus::BuildHistogram().Name(name).Help(help).Register(registry_);
  return add(family, {std::move(name), std::move(help), Type::histogram, std::move(labels),
                      std::move(buckets)});
}

std::string Registry::expose() const {
  return prometheus::TextSerializer().Serialize(registry_.Collect());
}

std::vector<FamilyBase*> Registry::families() const {
  std::lock_guard lock(mu_);
  std::vector<FamilyBase*> out;
  for (const auto& f : families_)
    out.push_back(f.get());
  return out;
}

}  // namespace meshop::metrics
