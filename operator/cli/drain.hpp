// The webhook's graceful-shutdown flags, shared by `meshop run` and `meshop webhook`
// (operator/webhook/server.hpp, WebhookServer::shutdown()):
//
//   --drain-delay 2s     after SIGTERM, answers go on (each with Connection: close) this long
//                        while load balancers see /readyz 503; then the listener closes
//   --drain-timeout 5s   the whole drain, from the signal: requests still in progress then are
//                        abandoned and the process exits
//
// Go durations ("1500ms", "2s"). The delay must be shorter than the timeout.
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace meshop::cli {

struct DrainSettings {
  std::chrono::milliseconds delay;
  std::chrono::milliseconds timeout;
};

void add_drain_options(CLI::App& cmd, std::string& delay, std::string& timeout);

// nullopt after "Error: --drain-...: ..." on `err`.
std::optional<DrainSettings> drain_settings(const std::string& delay, const std::string& timeout,
                                            std::ostream& err);

}  // namespace meshop::cli
