// Build identity of the meshop binary.
#pragma once

#include <string_view>

namespace meshop {

// The project version (CMake's PROJECT_VERSION), e.g. "0.1.0".
std::string_view version();

// The git commit the binary was built from (12 hex digits, "-dirty" when the
// tracked tree had changes, "unknown" outside a git checkout).
std::string_view git_commit();

}  // namespace meshop
