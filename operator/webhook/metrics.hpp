// The webhook's Prometheus metrics, registered once on a metrics::Registry.
//
// Upstream's names (pkg/kube/inject/monitoring.go), with upstream's counting rules:
//   sidecar_injection_requests_total          every request to /inject
//   sidecar_injection_success_total           every review answered (skips and denials too)
//   sidecar_injection_skip_total{reason}      policy skips; reason = inject::reason_name()
//   sidecar_injection_failure_total{type}     every error: bad body, content type, decode,
//                                             engine failure (its failure_type), ...
//   sidecar_injection_time_seconds            histogram of every request
// meshop's own:
//   meshop_injector_config_reloads_total{revision,source}   good configurations swapped in
//   meshop_injector_config_errors_total{revision,source}    bad ones (last good one kept)
//   meshop_webhook_certificate_reloads_total{result}        "success" | "error"
//   meshop_webhook_injection_cache_total{result}            memoized answers: "hit" | "miss"
// Thread-safe (the registry's series are atomics); the registry must outlive this object.
#pragma once

#include "operator/metrics/registry.hpp"

namespace meshop::webhook {

struct WebhookMetrics {
  explicit WebhookMetrics(metrics::Registry& registry);

  metrics::Counter& requests;
  metrics::Counter& success;
  metrics::Family<metrics::Counter>& skip;
  metrics::Family<metrics::Counter>& failure;
  metrics::Histogram& time;
  metrics::Family<metrics::Counter>& config_reloads;
  metrics::Family<metrics::Counter>& config_errors;
  metrics::Family<metrics::Counter>& certificate_reloads;
  metrics::Family<metrics::Counter>& injection_cache;
};

}  // namespace meshop::webhook
