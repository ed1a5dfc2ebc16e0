#include "operator/manifest/embedded.hpp"

#include <algorithm>

namespace meshop::manifest {
namespace {

std::string_view contents(const detail::RawEmbeddedFile& f) {
  // The generated arrays are unsigned char; the text is read as chars.
  return {reinterpret_cast<const char*>(f.data), f.size};
}

}  // namespace

std::optional<std::string_view> embedded_file(std::string_view path) {
  for (const detail::RawEmbeddedFile* f = detail::kEmbeddedFiles; f->path != nullptr; ++f)
    if (path == f->path) return contents(*f);
  return std::nullopt;
}

std::vector<std::string_view> embedded_paths(std::string_view prefix) {
  std::vector<std::string_view> out;
  for (const detail::RawEmbeddedFile* f = detail::kEmbeddedFiles; f->path != nullptr; ++f)
    if (std::string_view(f->path).starts_with(prefix)) out.emplace_back(f->path);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace meshop::manifest
