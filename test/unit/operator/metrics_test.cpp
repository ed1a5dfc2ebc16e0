// What meshop exposes on /metrics, and the contract of metrics::Registry over prometheus-cpp.
//
// MetricsExposition.* register every family the process registers (the runtime's, the
// webhook's and each reconciler's), give each one series, and read the text that
// prometheus::TextSerializer writes with a parser of the exposition format written here, not
// with prometheus-cpp. The families (name, type, label names, buckets, help) must equal
// testdata/metrics_families.tsv, which was captured from main's /metrics before the move to
// prometheus-cpp; values are not compared.
#include "operator/runtime/metrics.hpp"

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "operator/metrics/registry.hpp"
#include "operator/webhook/metrics.hpp"
#include "reconcilers/certificates.hpp"
#include "reconcilers/install.hpp"
#include "reconcilers/restarts.hpp"
#include "reconcilers/revisions.hpp"
#include "reconcilers/webhooks.hpp"

namespace meshop::metrics {
namespace {

struct ExposedFamily {
  std::string type;
  std::string help;
  std::set<std::string> labels;  // label names of the samples, without a histogram's le
  std::vector<double> buckets;   // a histogram's le bounds, +Inf excluded, in exposition order
  int samples = 0;
};

std::string unescape_help(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size()) {
      char c = s[++i];
      out += c == 'n' ? '\n' : c;
    } else {
      out += s[i];
    }
  }
  return out;
}

double parse_value(const std::string& v) {
  // The format's values are Go ParseFloat's: decimal, exponent, [+-]Inf and NaN in any case.
  if (v == "+Inf" || v == "Inf") return INFINITY;
  if (v == "-Inf") return -INFINITY;
  std::string lower;
  for (char c : v)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "nan") return NAN;
  size_t used = 0;
  double d = std::stod(v, &used);
  if (used != v.size()) throw std::invalid_argument("bad sample value: " + v);
  return d;
}

// Parses the text exposition format 0.0.4 strictly: every line is a HELP, a TYPE or a sample;
// a family's HELP and TYPE come once, before its samples; a family's samples are contiguous;
// histograms have ascending le bounds ending with +Inf, cumulative counts, and _count equal to
// the +Inf bucket. Any violation is a test failure naming the line.
std::map<std::string, ExposedFamily> parse_exposition(const std::string& text) {
  static const std::regex sample_re(
      R"(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)*)\})? (\S+)( -?[0-9]+)?$)");
  static const std::regex label_re(R"re(([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)")re");
  std::map<std::string, ExposedFamily> out;
  std::set<std::string> finished;
  std::string current;
  std::map<std::string, double> last_bucket;  // series (labels without le) -> last cumulative
  std::map<std::string, double> inf_bucket;
  std::map<std::string, double> counts;
  std::map<std::string, std::string> first_series;  // family -> its first series
  std::istringstream in(text);
  std::string line;
  EXPECT_TRUE(text.empty() || text.back() == '\n') << "exposition must end with a newline";
  auto enter = [&](const std::string& name, const std::string& where) {
    if (name == current) return;
    EXPECT_EQ(finished.count(name), 0u) << "family " << name << " is not contiguous: " << where;
    if (!current.empty()) finished.insert(current);
    current = name;
  };
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      std::string name = rest.substr(0, sp);
      enter(name, line);
      auto& f = out[name];
      EXPECT_TRUE(f.help.empty() && f.type.empty() && f.samples == 0) << "HELP late: " << line;
      f.help = sp == std::string::npos ? "" : unescape_help(rest.substr(sp + 1));
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      std::string name, type, extra;
      words >> name >> type;
      EXPECT_FALSE(words >> extra) << line;
      enter(name, line);
      auto& f = out[name];
      EXPECT_TRUE(f.type.empty() && f.samples == 0) << "TYPE late: " << line;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram" ||
                  type == "summary" || type == "untyped")
          << line;
      f.type = type;
      continue;
    }
    std::smatch m;
    if (!std::regex_match(line, m, sample_re)) {
      ADD_FAILURE() << "not a HELP, TYPE or sample line: '" << line << "'";
      continue;
    }
    std::string name = m[1];
    std::string family = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      std::string s = suffix;
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        std::string base = name.substr(0, name.size() - s.size());
        if (out.count(base) && out[base].type == "histogram") family = base;
      }
    }
    enter(family, line);
    auto it = out.find(family);
    if (it == out.end() || it->second.type.empty()) {
      ADD_FAILURE() << "sample before its TYPE: " << line;
      continue;
    }
    auto& f = it->second;
    ++f.samples;
    double value = parse_value(m[4]);
    std::string labels = m[3];
    std::set<std::string> names;
    std::string series = family + "|", le;
    for (auto l = std::sregex_iterator(labels.begin(), labels.end(), label_re);
         l != std::sregex_iterator(); ++l) {
      std::string k = (*l)[1];
      EXPECT_EQ(names.count(k), 0u) << "label twice: " << line;
      if (family != name && k == "le") {
        le = (*l)[2];
        continue;
      }
      names.insert(k);
      series += k + "=" + (*l)[2].str() + ",";
    }
    if (f.samples == 1) f.labels = names;
    EXPECT_EQ(f.labels, names) << "label names differ within the family: " << line;
    if (f.type == "counter") {
      EXPECT_GE(value, 0) << line;
    }
    if (name == family + "_bucket") {
      EXPECT_FALSE(le.empty()) << "bucket without le: " << line;
      double bound = parse_value(le);
      if (!last_bucket.count(series)) last_bucket[series] = 0;
      EXPECT_GE(value, last_bucket[series]) << "buckets not cumulative: " << line;
      last_bucket[series] = value;
      if (!first_series.count(family)) first_series[family] = series;
      if (std::isinf(bound)) {
        EXPECT_EQ(inf_bucket.count(series), 0u) << "+Inf twice: " << line;
        inf_bucket[series] = value;
      } else {
        EXPECT_EQ(inf_bucket.count(series), 0u) << "bucket after +Inf: " << line;
        if (first_series[family] == series) {  // the first series gives the family's bounds
          if (!f.buckets.empty()) {
            EXPECT_LT(f.buckets.back(), bound) << "le not ascending: " << line;
          }
          f.buckets.push_back(bound);
        }
      }
    } else if (name == family + "_count") {
      counts[series] = value;
    }
  }
  // _count and _sum may come before or after the buckets (prometheus-cpp writes them first).
  for (const auto& [series, count] : counts) {
    EXPECT_TRUE(inf_bucket.count(series)) << "histogram series without +Inf bucket: " << series;
    EXPECT_EQ(count, inf_bucket[series]) << "_count differs from the +Inf bucket: " << series;
  }
  for (const auto& [name, f] : out)
    EXPECT_GT(f.samples, 0) << "family " << name << " has a header and no samples";
  return out;
}

struct ExpectedFamily {
  std::string type;
  std::set<std::string> labels;
  std::vector<double> buckets;
  std::string help;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep))
    out.push_back(part);
  if (s.back() == sep) out.emplace_back();
  return out;
}

std::map<std::string, ExpectedFamily> expected_families() {
  std::ifstream in(std::string(MESHOP_SOURCE_DIR) +
                   "/test/unit/operator/testdata/metrics_families.tsv");
  EXPECT_TRUE(in.good()) << "testdata/metrics_families.tsv missing";
  std::map<std::string, ExpectedFamily> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto cols = split(line, '\t');
    if (cols.size() != 5) {
      ADD_FAILURE() << "bad testdata line: " << line;
      continue;
    }
    ExpectedFamily f{cols[1], {}, {}, cols[4]};
    for (const auto& l : split(cols[2], ','))
      f.labels.insert(l);
    for (const auto& b : split(cols[3], ','))
      f.buckets.push_back(std::stod(b));
    out[cols[0]] = f;
  }
  return out;
}

// Every family the process registers: `meshop run` registers all of these on one registry,
// `meshop webhook` the webhook's. The reconcilers register theirs when constructed (no
// client is needed for that).
struct Process {
  Registry registry;
  runtime::RuntimeMetrics runtime_metrics{registry};
  webhook::WebhookMetrics webhook_metrics{registry};
  reconcilers::InstallReconciler install{nullptr, {}, &registry, nullptr};
  reconcilers::CertificatesReconciler certificates{nullptr, {}, &registry, nullptr};
  reconcilers::RevisionsReconciler revisions{nullptr, {}, &registry, nullptr};
  reconcilers::RestartsReconciler restarts{nullptr, {}, &registry, nullptr};
  reconcilers::WebhooksReconciler webhooks{nullptr, {}, &registry, nullptr};

  // One series in every family, so labelled families show up in the exposition.
  void touch_every_family() {
    for (FamilyBase* f : registry.families())
      f->touch(LabelValues(f->info().labels.size(), "x"));
  }
};

TEST(MetricsExposition, FamiliesAreThoseMeshopExposedBefore) {
  Process p;
  p.touch_every_family();
  const std::string text = p.registry.expose();
  auto got = parse_exposition(text);
  auto want = expected_families();
  ASSERT_FALSE(want.empty());
  for (const auto& [name, w] : want) {
    auto it = got.find(name);
    if (it == got.end()) {
      ADD_FAILURE() << "family " << name << " is not exposed any more";
      continue;
    }
    const auto& g = it->second;
    EXPECT_EQ(g.type, w.type) << name;
    EXPECT_EQ(g.labels, w.labels) << name;
    EXPECT_EQ(g.help, w.help) << name;
    ASSERT_EQ(g.buckets.size(), w.buckets.size()) << name;
    for (size_t i = 0; i < w.buckets.size(); ++i)
      EXPECT_DOUBLE_EQ(g.buckets[i], w.buckets[i]) << name << " bucket " << i;
  }
  for (const auto& [name, g] : got)
    EXPECT_TRUE(want.count(name)) << "new family " << name << " (add it to the testdata)";
}

TEST(MetricsExposition, UntouchedProcessExposesOnlyUnlabelledFamilies) {
  Process p;
  auto got = parse_exposition(p.registry.expose());
  for (const auto& [name, w] : expected_families())
    EXPECT_EQ(got.count(name), w.labels.empty() ? 1u : 0u) << name;
}

TEST(MetricsExposition, ValuesAndLabelsOfUpdatedSeries) {
  Process p;
  auto& w = p.webhook_metrics;
  w.requests.Increment();
  w.requests.Increment();
  w.skip.with({"policy-disabled"}).Increment();
  w.time.Observe(0.002);
  w.time.Observe(100);
  p.runtime_metrics.reconcile_total.with({"install", "success"}).Increment(3);
  p.runtime_metrics.queue_depth.with({"install"}).Set(7);
  p.runtime_metrics.queue_depth.with({"install"}).Decrement();
  const std::string text = p.registry.expose();
  parse_exposition(text);
  for (const char* want : {
           "\nsidecar_injection_requests_total 2\n",
           "\nsidecar_injection_skip_total{reason=\"policy-disabled\"} 1\n",
           "\nsidecar_injection_time_seconds_bucket{le=\"0.001\"} 0\n",
           "\nsidecar_injection_time_seconds_bucket{le=\"0.0025\"} 1\n",
           "\nsidecar_injection_time_seconds_bucket{le=\"60\"} 1\n",
           "\nsidecar_injection_time_seconds_bucket{le=\"+Inf\"} 2\n",
           "\nsidecar_injection_time_seconds_count 2\n",
           "\nsidecar_injection_time_seconds_sum 100.002\n",
           "\ncontroller_runtime_reconcile_total{controller=\"install\",result=\"success\"} 3\n",
           "\nworkqueue_depth{name=\"install\"} 6\n",
       })
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  EXPECT_EQ(sample_count(w.time), 2u);
}

TEST(Metrics, LabelValuesAreEscaped) {
  Registry reg;
  reg.counter("c_total", "C.", {"v"}).with({"a\\b\"c\nd"}).Increment();
  const std::string text = reg.expose();
  EXPECT_NE(text.find("c_total{v=\"a\\\\b\\\"c\\nd\"} 1\n"), std::string::npos) << text;
  parse_exposition(text);
}

TEST(Metrics, HelpTheSerializerWouldNotEscapeIsRejected) {
  // prometheus-cpp 1.0.1 writes HELP text as given: a newline would end the line early.
  Registry reg;
  EXPECT_THROW(reg.gauge("g", "line1\nline2"), std::invalid_argument);
  EXPECT_THROW(reg.gauge("g2", "back\\slash"), std::invalid_argument);
  reg.gauge("g3", "Quotes \"are\" fine.");
  const std::string text = reg.expose();
  EXPECT_EQ(parse_exposition(text)["g3"].help, "Quotes \"are\" fine.") << text;
}

TEST(Metrics, WithReturnsTheSameSeries) {
  Registry reg;
  auto& c = reg.counter("n_total", "N.", {"a", "b"});
  EXPECT_EQ(&c.with({"1", "2"}), &c.with({"1", "2"}));
  EXPECT_NE(&c.with({"1", "2"}), &c.with({"2", "1"}));
  c.with({"1", "2"}).Increment();
  EXPECT_EQ(c.with({"1", "2"}).Value(), 1);
}

TEST(Metrics, LabelNamesAreFixedAtRegistration) {
  Registry reg;
  auto& c = reg.counter("x_total", "X.", {"a"});
  EXPECT_THROW(c.with({}), std::invalid_argument);
  EXPECT_THROW(c.with({"1", "2"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad_total", "x", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad2_total", "x", {"a:b"}), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad3_total", "x", {"a", "a"}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h", "x", {"le"}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h2", "x", {}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(reg.histogram("h3", "x", {}, {2, 1}), std::invalid_argument);
}

TEST(Metrics, NamesAreCheckedAndRegisteredOnce) {
  Registry reg;
  EXPECT_THROW(reg.counter("1bad", "x"), std::invalid_argument);
  EXPECT_THROW(reg.counter("bad-name", "x"), std::invalid_argument);
  reg.counter("once_total", "x");
  EXPECT_THROW(reg.counter("once_total", "x"), std::invalid_argument);
  EXPECT_THROW(reg.gauge("once_total", "y"), std::invalid_argument);
  EXPECT_NO_THROW(reg.counter("name:with_colon_total", "x"));
}

TEST(Metrics, BucketHelpersMatchClientGolang) {
  EXPECT_EQ(default_buckets(),
            (std::vector<double>{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}));
  EXPECT_EQ(exponential_buckets(0.005, 2, 3), (std::vector<double>{0.005, 0.01, 0.02}));
  EXPECT_THROW(exponential_buckets(0, 2, 3), std::invalid_argument);
}

TEST(Metrics, ConcurrentUpdatesAreNotLost) {
  Registry reg;
  auto& c = reg.counter("n_total", "n", {"t"});
  auto& h = reg.histogram("d_seconds", "d", {}, {0.5});
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&c, &h, t] {
      for (int i = 0; i < 10000; ++i) {
        c.with({t % 2 ? "odd" : "even"}).Increment();
        h.get().Observe(i % 2 ? 1.0 : 0.25);
      }
    });
  for (auto& t : ts)
    t.join();
  EXPECT_EQ(c.with({"odd"}).Value(), 20000);
  EXPECT_EQ(c.with({"even"}).Value(), 20000);
  auto m = h.get().Collect().histogram;
  EXPECT_EQ(m.sample_count, 40000u);
  ASSERT_EQ(m.bucket.size(), 2u);
  EXPECT_EQ(m.bucket[0].cumulative_count, 20000u);
  EXPECT_DOUBLE_EQ(m.sample_sum, 20000 * 1.0 + 20000 * 0.25);
}

}  // namespace
}  // namespace meshop::metrics
