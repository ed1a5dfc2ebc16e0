#include "operator/runtime/builder.hpp"

#include <stdexcept>

namespace meshop::runtime {

ControllerBuilder::ControllerBuilder(Manager& manager, Cache& cache, std::string name)
    : manager_(manager), cache_(cache), name_(std::move(name)) {}

ControllerBuilder& ControllerBuilder::workers(int n) {
  options_.workers = n;
  return *this;
}

ControllerBuilder& ControllerBuilder::singleton(std::string key) {
  singleton_ = key;
  initial_.push_back(std::move(key));
  return *this;
}

ControllerBuilder& ControllerBuilder::initial(std::string key) {
  initial_.push_back(std::move(key));
  return *this;
}

ControllerBuilder& ControllerBuilder::for_kind(const WatchSpec& spec) {
  return handlers(spec, [](WorkQueue& q, const Store&) { return enqueue_object(q); });
}

ControllerBuilder& ControllerBuilder::watches(const WatchSpec& spec, KeyMapper map) {
  return handlers(
      spec, [map = std::move(map)](WorkQueue& q, const Store&) { return enqueue_mapped(q, map); });
}

ControllerBuilder& ControllerBuilder::watches(const WatchSpec& spec) {
  if (!singleton_)
    throw std::logic_error("controller " + name_ + ": watches(" + spec.type.resource +
                           ") without a mapper needs singleton() first");
  return watches(
      spec, [key = *singleton_](const rapidjson::Value&) { return std::vector<std::string>{key}; });
}

ControllerBuilder& ControllerBuilder::handlers(const WatchSpec& spec, HandlerFactory make) {
  handlers_.emplace_back(&cache_.store(spec), std::move(make));
  return *this;
}

Controller& ControllerBuilder::complete(Reconciler reconciler) {
  if (completed_) throw std::logic_error("controller " + name_ + ": complete() called twice");
  completed_ = true;
  auto queue = std::make_unique<WorkQueue>(name_, manager_.executor(), manager_.clock(), nullptr,
                                           &manager_.metrics());
  auto controller = std::make_unique<Controller>(name_, *queue, std::move(reconciler), options_,
                                                 manager_.clock(), &manager_.metrics());
  for (auto& [store, make] : handlers_)
    store->add_handlers(make(*queue, *store));
  for (const std::string& key : initial_)
    queue->add(key);
  return manager_.adopt(std::move(queue), std::move(controller));
}

}  // namespace meshop::runtime
