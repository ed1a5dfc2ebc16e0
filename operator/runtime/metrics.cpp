#include "operator/runtime/metrics.hpp"

namespace meshop::runtime {

namespace {

// controller-runtime's workqueue buckets: 10 ns .. 1000 s, factor 10.
std::vector<double> queue_buckets() {
  return metrics::exponential_buckets(1e-8, 10, 12);
}

// controller-runtime's reconcile_time_seconds buckets.
std::vector<double> reconcile_buckets() {
  return {0.005, 0.01, 0.025, 0.05, 0.1,  0.15, 0.2,  0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
          0.7,   0.8,  0.9,   1.0,  1.25, 1.5,  1.75, 2.0,  2.5, 3.0,  3.5, 4.0,  4.5, 5,
          6,     7,    8,     9,    10,   15,   20,   25,   30,  40,   50,  60};
}

}  // namespace

RuntimeMetrics::RuntimeMetrics(metrics::Registry& r)
    : registry(r),
      queue_depth(r.gauge("workqueue_depth", "Current depth of workqueue", {"name"})),
      queue_adds(
          r.counter("workqueue_adds_total", "Total number of adds handled by workqueue", {"name"})),
      queue_latency(r.histogram("workqueue_queue_duration_seconds",
                                "How long in seconds an item stays in workqueue before being "
                                "requested",
                                {"name"}, queue_buckets())),
      work_duration(r.histogram("workqueue_work_duration_seconds",
                                "How long in seconds processing an item from workqueue takes",
                                {"name"}, queue_buckets())),
      retries(r.counter("workqueue_retries_total", "Total number of retries handled by workqueue",
                        {"name"})),
      unfinished_work(r.gauge("workqueue_unfinished_work_seconds",
                              "How many seconds of work has been done that is in progress and "
                              "hasn't been observed by work_duration",
                              {"name"})),
      longest_running(r.gauge("workqueue_longest_running_processor_seconds",
                              "How many seconds has the longest running processor for workqueue "
                              "been running",
                              {"name"})),
      reconcile_total(r.counter("controller_runtime_reconcile_total",
                                "Total number of reconciliations per controller",
                                {"controller", "result"})),
      reconcile_errors(r.counter("controller_runtime_reconcile_errors_total",
                                 "Total number of reconciliation errors per controller",
                                 {"controller"})),
      reconcile_time(r.histogram("controller_runtime_reconcile_time_seconds",
                                 "Length of time per reconciliation per controller", {"controller"},
                                 reconcile_buckets())),
      active_workers(r.gauge("controller_runtime_active_workers",
                             "Number of currently used workers per controller", {"controller"})),
      max_concurrent(r.gauge("controller_runtime_max_concurrent_reconciles",
                             "Maximum number of concurrent reconciles per controller",
                             {"controller"})),
      leader_status(r.gauge("leader_election_master_status",
                            "Gauge of if the reporting system is master of the relevant lease, 0 "
                            "indicates backup, 1 indicates master. 'name' is the string used to "
                            "identify the lease.",
                            {"name"})),
      client_requests(r.counter("rest_client_requests_total",
                                "Number of HTTP requests, partitioned by status code, method, and "
                                "host.",
                                {"code", "method", "host"})),
      kube_requests(r.counter("meshop_kube_requests_total",
                              "Requests meshop sent to the apiserver, by verb (get, list, watch, "
                              "create, update, patch, apply, delete, discover), resource and "
                              "status code (<error> when no answer came).",
                              {"verb", "resource", "code"})),
      heap_trims(r.counter("meshop_heap_trims_total",
                           "Times the manager gave free heap memory back to the kernel "
                           "(malloc_trim)",
                           {})),
      heap_released(r.counter("meshop_heap_released_bytes_total",
                              "Resident bytes the heap trims gave back to the kernel", {})) {}

void RuntimeMetrics::count_request(std::string_view verb, std::string_view resource,
                                   std::string_view method, int code, std::string_view host) {
  const std::string code_label = code == 0 ? std::string("<error>") : std::to_string(code);
  client_requests.with({code_label, std::string(method), std::string(host)}).Increment();
  kube_requests.with({std::string(verb), std::string(resource), code_label}).Increment();
}

}  // namespace meshop::runtime
