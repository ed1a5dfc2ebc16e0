// The files of manifests/ that `meshop manifest generate` and `meshop profile` need, compiled
// into the binary so it works from any directory: manifests/profiles/*.yaml,
// manifests/components/*.yaml and the injection templates manifests/inject/{sidecar,gateway}.yaml
// (written by the injection work; whichever exist at configure time are embedded).
//
// The build generates the data (embed.cmake) from the files; paths are relative to
// manifests/ ("profiles/demo.yaml"). Immutable; safe from any thread.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace meshop::manifest {

// The contents of an embedded file, or nullopt.
std::optional<std::string_view> embedded_file(std::string_view path);
// Paths of all embedded files under `prefix` ("profiles/"), sorted.
std::vector<std::string_view> embedded_paths(std::string_view prefix = {});

namespace detail {
struct RawEmbeddedFile {
  const char* path;
  const unsigned char* data;
  std::size_t size;
};
// Null-terminated table, defined in the generated source.
extern const RawEmbeddedFile kEmbeddedFiles[];
}  // namespace detail

}  // namespace meshop::manifest
