#include "operator/webhook/metrics.hpp"

namespace meshop::webhook {

WebhookMetrics::WebhookMetrics(metrics::Registry& r)
    : requests(r.counter("sidecar_injection_requests_total",
                         "Total number of sidecar injection requests.")
                   .get()),
      success(r.counter("sidecar_injection_success_total",
                        "Total number of successful sidecar injection requests.")
                  .get()),
      skip(r.counter("sidecar_injection_skip_total",
                     "Total number of skipped sidecar injection requests.", {"reason"})),
      failure(r.counter("sidecar_injection_failure_total",
                        "Total number of failed sidecar injection requests.", {"type"})),
      // Upstream's buckets (.1 .. 60 s) say nothing about a fast injector; finer ones first.
      time(r.histogram(
                "sidecar_injection_time_seconds", "Total time taken for injection in seconds.", {},
                {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 1, 3, 5, 10, 20, 30, 60})
               .get()),
      config_reloads(r.counter("meshop_injector_config_reloads_total",
                               "Injector configurations loaded and swapped in.",
                               {"revision", "source"})),
      config_errors(r.counter("meshop_injector_config_errors_total",
                              "Injector configurations rejected (the last good one is kept).",
                              {"revision", "source"})),
      certificate_reloads(r.counter("meshop_webhook_certificate_reloads_total",
                                    "Webhook serving certificate reloads.", {"result"})),
      injection_cache(r.counter("meshop_webhook_injection_cache_total",
                                "Lookups of memoized injection answers, by result (hit, miss).",
                                {"result"})) {}

}  // namespace meshop::webhook
