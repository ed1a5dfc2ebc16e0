// One pass of the restarts reconciler run to completion on a fresh io_context: what
// `meshop restart plan|run` and `meshop check` compute their answers from
// (operator/cli/restart_cmd.cpp).
#pragma once

#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "reconcilers/restarts.hpp"

namespace meshop::cli {

// The pass's report; nullopt with `error` set when the pass threw.
std::optional<api::Result<reconcilers::PassReport>> run_pass(reconcilers::RestartsReconciler& r,
                                                             boost::asio::io_context& ioc,
                                                             bool execute, std::string& error);

}  // namespace meshop::cli
