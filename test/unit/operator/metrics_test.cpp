#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "operator/metrics/registry.hpp"

namespace meshop::metrics {
namespace {

TEST(Metrics, CounterWithLabelsExposesHelpTypeAndSortedSeries) {
  Registry reg;
  auto& c = reg.counter("controller_runtime_reconcile_total", "Total reconciliations.",
                        {"controller", "result"});
  c.with({"webhooks", "success"}).inc();
  c.with({"install", "error"}).inc(2);
  c.with({"install", "success"}).inc();
  EXPECT_EQ(reg.expose(),
            "# HELP controller_runtime_reconcile_total Total reconciliations.\n"
            "# TYPE controller_runtime_reconcile_total counter\n"
            "controller_runtime_reconcile_total{controller=\"install\",result=\"error\"} 2\n"
            "controller_runtime_reconcile_total{controller=\"install\",result=\"success\"} 1\n"
            "controller_runtime_reconcile_total{controller=\"webhooks\",result=\"success\"} 1\n");
}

TEST(Metrics, UnlabelledFamilyIsExposedAtZeroFromTheStart) {
  Registry reg;
  reg.gauge("workqueue_depth_total", "Depth.");
  EXPECT_EQ(reg.expose(),
            "# HELP workqueue_depth_total Depth.\n# TYPE workqueue_depth_total gauge\n"
            "workqueue_depth_total 0\n");
}

TEST(Metrics, LabelledFamilyWithoutSeriesIsOmitted) {
  Registry reg;
  reg.counter("a_total", "A.", {"x"});
  EXPECT_EQ(reg.expose(), "");
}

TEST(Metrics, FamiliesSortedByName) {
  Registry reg;
  reg.gauge("zeta", "Z.");
  reg.counter("alpha_total", "A.");
  auto text = reg.expose();
  EXPECT_LT(text.find("alpha_total"), text.find("zeta"));
}

TEST(Metrics, HelpEscapesBackslashAndNewlineOnly) {
  Registry reg;
  reg.gauge("g", "line1\nback\\slash \"quoted\"");
  EXPECT_NE(reg.expose().find("# HELP g line1\\nback\\\\slash \"quoted\"\n"), std::string::npos)
      << reg.expose();
}

TEST(Metrics, LabelValuesEscapeBackslashQuoteAndNewline) {
  Registry reg;
  reg.counter("c_total", "C.", {"v"}).with({"a\\b\"c\nd"}).inc();
  EXPECT_NE(reg.expose().find("c_total{v=\"a\\\\b\\\"c\\nd\"} 1\n"), std::string::npos)
      << reg.expose();
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  Registry reg;
  auto& h =
      reg.histogram("sidecar_injection_time_seconds", "Injection time.", {"rev"}, {0.1, 0.5, 1});
  auto& s = h.with({"canary"});
  s.observe(0.05);
  s.observe(0.1);  // le is inclusive: lands in the 0.1 bucket
  s.observe(0.7);
  s.observe(3);
  EXPECT_EQ(reg.expose(),
            "# HELP sidecar_injection_time_seconds Injection time.\n"
            "# TYPE sidecar_injection_time_seconds histogram\n"
            "sidecar_injection_time_seconds_bucket{rev=\"canary\",le=\"0.1\"} 2\n"
            "sidecar_injection_time_seconds_bucket{rev=\"canary\",le=\"0.5\"} 2\n"
            "sidecar_injection_time_seconds_bucket{rev=\"canary\",le=\"1\"} 3\n"
            "sidecar_injection_time_seconds_bucket{rev=\"canary\",le=\"+Inf\"} 4\n"
            "sidecar_injection_time_seconds_sum{rev=\"canary\"} 3.85\n"
            "sidecar_injection_time_seconds_count{rev=\"canary\"} 4\n");
}

TEST(Metrics, UnlabelledHistogramHasOnlyLeLabel) {
  Registry reg;
  reg.histogram("h_seconds", "H.", {}, {1}).get().observe(2);
  EXPECT_NE(reg.expose().find("h_seconds_bucket{le=\"1\"} 0\nh_seconds_bucket{le=\"+Inf\"} 1\n"
                              "h_seconds_sum 2\nh_seconds_count 1\n"),
            std::string::npos)
      << reg.expose();
}

TEST(Metrics, SpecialFloatValues) {
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(format_value(std::nan("")), "NaN");
  EXPECT_EQ(format_value(0.005), "0.005");
  EXPECT_EQ(format_value(42), "42");
  EXPECT_EQ(format_value(-1.5), "-1.5");
}

TEST(Metrics, DefaultBucketsMatchClientGolang) {
  std::vector<double> want{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
  EXPECT_EQ(default_buckets(), want);
  EXPECT_EQ(exponential_buckets(0.005, 2, 3), (std::vector<double>{0.005, 0.01, 0.02}));
}

TEST(Metrics, NamesAreValidated) {
  Registry reg;
  EXPECT_THROW(reg.counter("1bad", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad-name", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok_total", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok2_total", "x", {"a:b"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("ok3_total", "x", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {"le"}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h2", "x", {}, {1, 1}), std::invalid_argument);
  EXPECT_NO_THROW(reg.counter("name:with_colon_total", "x"));
  EXPECT_TRUE(valid_metric_name("a:b_c"));
  EXPECT_FALSE(valid_label_name("a:b"));
}

TEST(Metrics, DuplicateRegistrationAndWrongArityThrow) {
  Registry reg;
  auto& c = reg.counter("x_total", "x", {"a"});
  EXPECT_THROW(reg.gauge("x_total", "y"), std::invalid_argument);
  EXPECT_THROW(c.with({}), std::invalid_argument);
  EXPECT_THROW(c.with({"1", "2"}), std::invalid_argument);
  EXPECT_THROW(c.with({"1"}).inc(-1), std::invalid_argument);
}

TEST(Metrics, ConcurrentUpdatesAreNotLost) {
  Registry reg;
  auto& c = reg.counter("n_total", "n", {"t"});
  auto& h = reg.histogram("d_seconds", "d", {}, {0.5});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 10000; ++i) {
        c.with({t % 2 ? "odd" : "even"}).inc();
        h.get().observe(i % 2 ? 1.0 : 0.25);
      }
    });
  for (auto& t : ts)
    t.join();
  EXPECT_EQ(c.with({"odd"}).value(), 20000);
  EXPECT_EQ(c.with({"even"}).value(), 20000);
  EXPECT_EQ(h.get().count(), 40000u);
  EXPECT_EQ(h.get().bucket_count(0), 20000u);
  EXPECT_DOUBLE_EQ(h.get().sum(), 20000 * 1.0 + 20000 * 0.25);
}

}  // namespace
}  // namespace meshop::metrics
