#include "operator/webhook/config_dir.hpp"

#include <filesystem>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace meshop::webhook {
namespace {

using namespace std::chrono_literals;
using testing::write_file;

class ConfigDirTest : public ::testing::Test {
 protected:
  ConfigDirTest() : metrics(registry), engine(testing::fake_engine()) {}
  metrics::Registry registry;
  WebhookMetrics metrics;
  Engine engine;
  RevisionStore store;
};

TEST_F(ConfigDirTest, ReadsConfigValuesAndOptionalMesh) {
  auto dir = testing::make_temp_dir("d");
  write_file(dir + "/config", "policy: enabled\n");
  write_file(dir + "/values", "{}");
  auto s = read_config_dir(dir, "canary");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(s->revision, "canary");
  EXPECT_EQ(s->config, "policy: enabled\n");
  EXPECT_EQ(s->values, "{}");
  EXPECT_EQ(s->mesh, "");
}

TEST_F(ConfigDirTest, MissingConfigFileIsAnErrorNamingThePath) {
  auto dir = testing::make_temp_dir("d");
  auto s = read_config_dir(dir, "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir + "/config: no such file");
}

TEST_F(ConfigDirTest, BadConfigKeepsLastGoodAndIsReported) {
  auto dir = testing::make_temp_dir("d");
  write_file(dir + "/config", "policy: enabled\n");
  ConfigDirSource source(dir, "default", store, engine, &metrics, 0ms);
  ASSERT_TRUE(source.load().ok());
  auto good = store.get("default");
  ASSERT_TRUE(good);

  write_file(dir + "/config", "policy: bad\n");
  auto t = std::chrono::steady_clock::now();
  EXPECT_FALSE(source.poll(t));  // change seen; debounce starts
  EXPECT_TRUE(source.poll(t));   // stable: load attempted
  EXPECT_EQ(store.get("default"), good);
  EXPECT_EQ(store.last_error("default"), "config: bad on purpose");
  EXPECT_EQ(metrics.config_errors.with({"default", "dir"}).Value(), 1);
  // The same bad files are not retried.
  EXPECT_FALSE(source.poll(t + 1s));
  EXPECT_FALSE(source.poll(t + 2s));
  EXPECT_EQ(metrics.config_errors.with({"default", "dir"}).Value(), 1);

  write_file(dir + "/config", "policy: disabled\n");
  EXPECT_FALSE(source.poll(t + 3s));
  EXPECT_TRUE(source.poll(t + 3s));
  ASSERT_TRUE(store.get("default"));
  EXPECT_GT(store.get("default")->generation, good->generation);
  EXPECT_EQ(store.last_error("default"), "");
  EXPECT_EQ(metrics.config_reloads.with({"default", "dir"}).Value(), 2);
}

TEST_F(ConfigDirTest, ReloadWaitsUntilFilesAreStableForTheDebounceTime) {
  auto dir = testing::make_temp_dir("d");
  write_file(dir + "/config", "a\n");
  ConfigDirSource source(dir, "", store, engine, &metrics, 100ms);
  ASSERT_TRUE(source.load().ok());
  auto first = store.get("default")->generation;

  auto t = std::chrono::steady_clock::now();
  write_file(dir + "/values", "{}");
  EXPECT_FALSE(source.poll(t));
  write_file(dir + "/mesh", "x: 1\n");   // a second file changes within the window
  EXPECT_FALSE(source.poll(t + 50ms));   // new signature: the window restarts
  EXPECT_FALSE(source.poll(t + 120ms));  // only 70 ms since the last change
  EXPECT_TRUE(source.poll(t + 160ms));
  EXPECT_EQ(store.get("default")->generation, first + 1);
}

TEST_F(ConfigDirTest, FirstLoadFailureLeavesNothingToServe) {
  auto dir = testing::make_temp_dir("d");
  write_file(dir + "/config", "bad");
  ConfigDirSource source(dir, "", store, engine, &metrics);
  auto loaded = source.load();
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.message(), "config: bad on purpose");
  EXPECT_EQ(store.get("default"), nullptr);
}

}  // namespace
}  // namespace meshop::webhook
