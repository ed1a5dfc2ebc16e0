// Replays template/data pairs whose output (or error) was recorded from Go 1.26's
// text/template with builtins only: testdata/go_corpus.json. Any change in behaviour versus
// Go on these ~550 cases (every language feature, builtin, printf verb and error message
// the hand-written tests cover, and more) fails here with the template that differs.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "test/unit/template/test_util.hpp"

namespace meshop::template_engine::testing {
namespace {

TEST(GoCorpus, EveryRecordedCaseRendersAsGoDid) {
  std::ifstream in(MESHOP_TEMPLATE_TESTDATA "/go_corpus.json");
  ASSERT_TRUE(in) << "missing " MESHOP_TEMPLATE_TESTDATA "/go_corpus.json";
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = api::parse_json(ss.str());
  ASSERT_TRUE(doc.ok()) << doc.message();
  std::vector<Value> data;
  for (const auto& d : (*doc)["data"].GetArray())
    data.push_back(funcs::from_rapidjson(d));
  const auto& cases = (*doc)["cases"];
  ASSERT_GT(cases.Size(), 500u);
  int failures = 0;
  for (const auto& c : cases.GetArray()) {
    std::string tmpl(c["t"].GetString(), c["t"].GetStringLength());
    std::string want(c["want"].GetString(), c["want"].GetStringLength());
    std::string got = render_with(no_functions(), tmpl, data.at(c["data"].GetUint()));
    if (got != want) {
      ++failures;
      ADD_FAILURE() << "template: " << tmpl << "\n  go:   " << want << "\n  ours: " << got;
    }
  }
  EXPECT_EQ(failures, 0);
}

}  // namespace
}  // namespace meshop::template_engine::testing
