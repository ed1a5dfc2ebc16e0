// Shared fixture code of the reconcilers' e2e tests: a kube client to the cluster of the default
// kubeconfig (KUBECONFIG, set by the e2e ctest fixture), a suffix that keeps one test's objects
// apart from every other's, a helper that drives a coroutine to completion, JSON parsing for the
// objects a test writes, namespace creation and the IstioOperator CRD applied if missing.
//
// Thread affinity: everything runs on the test's thread; run() drives the fixture's io_context
// there until the task is done, so no handler is ever left pending between two calls.
#pragma once

#include <chrono>
#include <exception>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "api/json.hpp"
#include "api/yaml.hpp"
#include "operator/kube/client.hpp"
#include "reconcilers/install.hpp"

namespace meshop::reconcilers::e2e {

// Parses JSON the test wrote itself; malformed JSON is a bug of the test, so it fails the
// test (naming the text) and yields an empty document.
inline rapidjson::Document parse(const std::string& s) {
  auto d = api::parse_json(s);
  EXPECT_TRUE(d.ok()) << d.message() << "\n" << s;
  return d.ok() ? std::move(*d) : rapidjson::Document();
}

class ClusterTest : public ::testing::Test {
 protected:
  // Connects client_ to the cluster of the default kubeconfig. Fails fatally, so call it as
  // ASSERT_NO_FATAL_FAILURE(connect()) before anything that uses client_.
  void connect() {
    auto cfg = kube::load_default_config();
    ASSERT_TRUE(cfg) << cfg.error().message;
    auto c = kube::Client::create(io_.get_executor(), *cfg);
    ASSERT_TRUE(c) << c.error().message;
    client_ = *c;
  }

  // "<pid><separator><n>": unique per test of this process and across processes that run
  // at the same time against the same cluster (ctest runs one process per test).
  static std::string unique_suffix(std::string_view separator = "-") {
    static int counter = 0;
    return std::to_string(getpid()) + std::string(separator) + std::to_string(counter++);
  }

  // Runs one coroutine to completion on the test's io_context. (co_spawn's completion wants a
  // default-constructible result, which api::Result is not; the value goes through `out`.)
  template <class T>
  T run(kube::Task<T> task) {
    std::optional<T> out;
    std::exception_ptr error;
    auto body = [](kube::Task<T> t, std::optional<T>* o) -> kube::Task<void> {
      T value = co_await std::move(t);
      o->emplace(std::move(value));
    };
    boost::asio::co_spawn(io_, body(std::move(task), &out),
                          [&](std::exception_ptr e) { error = e; });
    drive(error);
    return std::move(*out);
  }
  void run(kube::Task<void> task) {
    std::exception_ptr error;
    boost::asio::co_spawn(io_, std::move(task), [&](std::exception_ptr e) { error = e; });
    drive(error);
  }

  // Creates Namespace `name` (no labels); the test deletes it in TearDown.
  void create_namespace(const std::string& name) {
    auto r = run(client_->create(
        kube::resources::kNamespaces, "",
        parse(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")" + name + R"("}})")));
    ASSERT_TRUE(r) << r.error().message;
  }

  // Creates the IstioOperator CRD from crd/ unless it is there, and waits until the resource
  // is served. Tests running at once may race to create it: AlreadyExists is success.
  void ensure_istio_operator_crd() {
    if (run(client_->list(istio_operator_resource(), "")).ok()) return;
    std::ifstream in(std::string(MESHOP_SOURCE_DIR) + "/crd/istiooperator.yaml");
    std::stringstream text;
    text << in.rdbuf();
    auto doc = api::yaml_to_json(text.str());
    ASSERT_TRUE(doc) << doc.message();
    auto created = run(client_->create(kube::resources::kCustomResourceDefinitions, "", *doc));
    ASSERT_TRUE(created || created.error().is(kube::ErrorKind::kAlreadyExists))
        << created.error().message;
    for (int i = 0; i < 100; ++i) {
      if (run(client_->list(istio_operator_resource(), "")).ok()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    FAIL() << "IstioOperator CRD not served";
  }

  boost::asio::io_context io_;
  std::shared_ptr<kube::Client> client_;

 private:
  void drive(const std::exception_ptr& error) {
    io_.restart();
    io_.run();
    if (error) std::rethrow_exception(error);
  }
};

}  // namespace meshop::reconcilers::e2e
