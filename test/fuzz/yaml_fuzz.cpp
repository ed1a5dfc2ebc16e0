// Fuzz target for the YAML reader and writer (meshop::api): arbitrary bytes must never crash,
// hang or trip a sanitizer, and every document that reads must survive the round trip
// yaml_to_json(json_to_yaml(doc)) == doc.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api/yaml.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace meshop::api;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)yaml_to_json(text, YamlReadOptions{.strict = true});
  auto docs = yaml_stream_to_json(text);
  if (!docs.ok()) return 0;
  for (const auto& doc : *docs) {
    std::string yaml = json_to_yaml(doc);
    auto back = yaml_to_json(yaml);
    if (!back.ok() || !json_equal(doc, *back)) {
      std::fprintf(stderr, "round trip failed\nJSON: %s\nYAML:\n%s\nback: %s\n",
                   to_json(doc).c_str(), yaml.c_str(),
                   back.ok() ? to_json(*back).c_str() : back.message().c_str());
      std::abort();
    }
  }
  return 0;
}
