// What the commands that talk to a cluster share: a client from --kubeconfig/--context, the
// native-sidecar setting (flag, $ENABLE_NATIVE_SIDECARS, or the nodes' kubelet versions), and
// the Warning Event for a rejected injector ConfigMap.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <rapidjson/document.h>

#include "operator/inject/injector.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"

namespace meshop::cli {

// A client for --kubeconfig / --context, else $KUBECONFIG, in-cluster config or
// ~/.kube/config (kube::load_default_config); nullptr after "Error: ..." on `err`.
std::shared_ptr<kube::Client> connect(boost::asio::any_io_executor executor,
                                      const std::string& kubeconfig, const std::string& context,
                                      std::ostream& err);

// "true", "false" or "auto".
std::optional<inject::NativeSidecars> parse_native_sidecars(std::string_view text);

// The --native-sidecars flag, else $ENABLE_NATIVE_SIDECARS, else auto; nullopt after
// "Error: ..." on `err` when the value is none of the three.
std::optional<inject::NativeSidecars> native_sidecars_setting(const std::string& flag,
                                                              std::ostream& err);

// istiod's ENABLE_NATIVE_SIDECARS=auto: the nodes' kubelet versions go into `sources`; when the
// nodes cannot be listed, native sidecars are turned off (with a warning), as without a cluster.
boost::asio::awaitable<void> detect_native_sidecars(std::shared_ptr<kube::Client> client,
                                                    inject::SnapshotSources* sources);

// Rows as kubectl prints them: columns left-aligned, three spaces apart, the last unpadded.
// rows[0] is the header; every row has its size.
void write_table(const std::vector<std::vector<std::string>>& rows, std::ostream& out);

// Records the webhook's rejection of an injector ConfigMap as a Warning Event on it.
std::function<void(const rapidjson::Value&, const std::string&)> configmap_rejection_reporter(
    std::shared_ptr<kube::EventRecorder> events);

}  // namespace meshop::cli
