// A JSON document from test text; a parse error fails the test, naming the text.
#pragma once

#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "api/json.hpp"

namespace meshop::api::test_support {

inline Document json(std::string_view text) {
  auto d = parse_json(text);
  EXPECT_TRUE(d.ok()) << d.message() << " in " << text;
  return std::move(d).value();
}

}  // namespace meshop::api::test_support
