// The meshop command line: `meshop <command> [subcommand] [flags]`.
//
// Exit codes: 0 success, 1 the command failed, 2 usage error (unknown command or
// flag, missing or malformed argument); `meshop check` also 3, no verdict (its 1 means a
// finding). Help goes to `out`; errors go to `err`.
#pragma once

#include <ostream>
#include <span>
#include <string>

namespace meshop::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
// `meshop check` only: the check could not be made (cluster unreachable, namespace or pod not
// found), told apart from its 1, which says the check found something wrong.
inline constexpr int kExitNoVerdict = 3;

// Runs the command line `args` (args[0] is the program name).
int run(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace meshop::cli
