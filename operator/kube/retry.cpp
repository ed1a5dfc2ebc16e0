#include "operator/kube/retry.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace meshop::kube {

bool is_idempotent(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE" ||
         method == "OPTIONS";
}

std::optional<std::chrono::seconds> parse_retry_after(std::string_view header) {
  while (!header.empty() && header.front() == ' ')
    header.remove_prefix(1);
  while (!header.empty() && header.back() == ' ')
    header.remove_suffix(1);
  if (header.empty()) return std::nullopt;
  long long seconds = 0;
  auto [ptr, ec] = std::from_chars(header.data(), header.data() + header.size(), seconds);
  if (ec != std::errc() || ptr != header.data() + header.size() || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::seconds(seconds);
}

std::optional<std::chrono::milliseconds> retry_delay(const RetryPolicy& policy,
                                                     std::string_view method, int attempt,
                                                     const AttemptOutcome& outcome,
                                                     double random01) {
  if (attempt >= policy.max_retries) return std::nullopt;
  const int code = outcome.http_status;
  bool retry = false;
  if (code == 429) {
    retry = true;  // not processed; the server asks us to come back
  } else if (code >= 500 && code != 501) {
    retry = is_idempotent(method) || outcome.retry_after.has_value();
  } else if (code == 0 && outcome.connect_failed) {
    retry = true;  // nothing reached the server
  } else if (code == 0 && outcome.transport_failed) {
    retry = is_idempotent(method);
  }
  if (!retry) return std::nullopt;

  if (outcome.retry_after) {
    auto ra = std::chrono::duration_cast<std::chrono::milliseconds>(*outcome.retry_after);
    return std::min(ra, policy.max_retry_after);
  }
  double exp = std::ldexp(1.0, std::min(attempt, 30));
  double full = std::min(static_cast<double>(policy.base_delay.count()) * exp,
                         static_cast<double>(policy.max_delay.count()));
  random01 = std::clamp(random01, 0.0, 1.0);
  return std::chrono::milliseconds(static_cast<long long>(full / 2 + full / 2 * random01));
}

}  // namespace meshop::kube
