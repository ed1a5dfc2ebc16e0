// The runtime's Prometheus metrics, with the names controller-runtime exports so existing
// dashboards work unchanged:
//
//   workqueue_depth{name}                          gauge      items ready to be processed
//   workqueue_adds_total{name}                     counter    adds that entered the queue
//   workqueue_queue_duration_seconds{name}         histogram  add -> get
//   workqueue_work_duration_seconds{name}          histogram  get -> done
//   workqueue_retries_total{name}                  counter    rate-limited re-adds
//   workqueue_unfinished_work_seconds{name}        gauge      sum of in-flight work ages
//   workqueue_longest_running_processor_seconds{name} gauge   oldest in-flight work age
//   controller_runtime_reconcile_total{controller,result}   result: success, error, requeue,
//                                                           requeue_after, conflict
//   controller_runtime_reconcile_errors_total{controller}
//   controller_runtime_reconcile_time_seconds{controller}
//   controller_runtime_active_workers{controller}
//   controller_runtime_max_concurrent_reconciles{controller}
//   leader_election_master_status{name}             1 while this process holds the lease
//   rest_client_requests_total{code,method,host}    client-go's request counter
//   meshop_kube_requests_total{verb,resource,code}  the same by Kubernetes verb and resource
//
// One RuntimeMetrics per Registry (a registry rejects a second registration of a name);
// every queue and controller of the process shares it through a pointer, which may be null
// in tests that do not look at metrics.
#pragma once

#include <string>
#include <string_view>

#include "operator/metrics/registry.hpp"

namespace meshop::runtime {

struct RuntimeMetrics {
  explicit RuntimeMetrics(metrics::Registry& registry);

  metrics::Registry& registry;
  metrics::Family<metrics::Gauge>& queue_depth;
  metrics::Family<metrics::Counter>& queue_adds;
  metrics::Family<metrics::Histogram>& queue_latency;
  metrics::Family<metrics::Histogram>& work_duration;
  metrics::Family<metrics::Counter>& retries;
  metrics::Family<metrics::Gauge>& unfinished_work;
  metrics::Family<metrics::Gauge>& longest_running;
  metrics::Family<metrics::Counter>& reconcile_total;
  metrics::Family<metrics::Counter>& reconcile_errors;
  metrics::Family<metrics::Histogram>& reconcile_time;
  metrics::Family<metrics::Gauge>& active_workers;
  metrics::Family<metrics::Gauge>& max_concurrent;
  metrics::Family<metrics::Gauge>& leader_status;
  // Every request to the apiserver (a kube::Client request observer feeds them): client-go's
  // rest_client_requests_total{code,method,host}, and by Kubernetes verb and resource, which
  // tells a LIST from a WATCH (both GETs).
  metrics::Family<metrics::Counter>& client_requests;
  metrics::Family<metrics::Counter>& kube_requests;
  // The manager's heap trims (heap.hpp): how many, and the resident bytes they gave back.
  metrics::Family<metrics::Counter>& heap_trims;
  metrics::Family<metrics::Counter>& heap_released;

  // code 0: no answer (transport failure).
  void count_request(std::string_view verb, std::string_view resource, std::string_view method,
                     int code, std::string_view host);
};

}  // namespace meshop::runtime
