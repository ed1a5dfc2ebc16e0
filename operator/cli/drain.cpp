#include "operator/cli/drain.hpp"

#include "operator/restart/policy.hpp"

namespace meshop::cli {

void add_drain_options(CLI::App& cmd, std::string& delay, std::string& timeout) {
  cmd.add_option("--drain-delay", delay,
                 "After SIGTERM, keep answering the webhook this long (each answer closing its "
                 "connection) while /readyz says 503, then stop accepting")
      ->capture_default_str();
  cmd.add_option("--drain-timeout", timeout,
                 "Bound of the webhook's drain after SIGTERM; requests still in progress then "
                 "are abandoned (a second signal exits at once)")
      ->capture_default_str();
}

std::optional<DrainSettings> drain_settings(const std::string& delay, const std::string& timeout,
                                            std::ostream& err) {
  auto d = restart::parse_go_duration(delay);
  if (!d) {
    err << "Error: --drain-delay: " << d.message() << '\n';
    return std::nullopt;
  }
  auto t = restart::parse_go_duration(timeout);
  if (!t) {
    err << "Error: --drain-timeout: " << t.message() << '\n';
    return std::nullopt;
  }
  DrainSettings s{std::chrono::duration_cast<std::chrono::milliseconds>(*d),
                  std::chrono::duration_cast<std::chrono::milliseconds>(*t)};
  if (s.delay.count() < 0 || s.timeout.count() <= 0 || s.delay >= s.timeout) {
    err << "Error: --drain-delay " << delay << " must be at least 0 and shorter than "
        << "--drain-timeout " << timeout << '\n';
    return std::nullopt;
  }
  return s;
}

}  // namespace meshop::cli
