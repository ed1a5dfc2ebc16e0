// The client's transport against a scripted HTTPS server on 127.0.0.1:0 (Beast): retries,
// keep-alive, credential refresh on 401, and watch streams whose lines are split across HTTP
// chunks and TLS records at every position.
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <gtest/gtest.h>

#include "operator/kube/client.hpp"
#include "operator/kube/events.hpp"
#include "test/unit/kube/fake_apiserver.hpp"

namespace meshop::kube {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
namespace fs = std::filesystem;
constexpr auto kTok = net::as_tuple(net::use_awaitable);

using fake::Exchange;
using fake::FakeApiServer;
using fake::read_text;
using fake::response;
using fake::Script;
using fake::TestCert;

std::string chunked(const std::vector<std::string>& chunks) {
  std::ostringstream out;
  out << "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const auto& c : chunks) {
    if (c.empty()) continue;
    out << std::hex << c.size() << "\r\n" << c << "\r\n";
  }
  out << "0\r\n\r\n";
  return out.str();
}

class KubeTransport : public ::testing::Test {
 public:
  KubeTransport() : server_(io_) {}

  std::shared_ptr<Client> client(Config cfg = {}, ClientOptions opts = {}) {
    cfg.server = "https://127.0.0.1:" + std::to_string(server_.port());
    cfg.ca_pem = TestCert::get().cert;
    opts.qps = 0;  // no limiter in these tests
    auto c = Client::create(io_.get_executor(), cfg, opts);
    EXPECT_TRUE(c) << c.error().message;
    return c ? *c : nullptr;
  }

  template <class T>
  T run(Task<T> task) {
    std::optional<T> out;
    net::co_spawn(io_, std::move(task), [&](std::exception_ptr e, T v) {
      if (e) std::rethrow_exception(e);
      out.emplace(std::move(v));
    });
    while (!out)
      io_.run_one();
    return std::move(*out);
  }

  // Responds with the scripts in order, one per request.
  void respond(std::vector<Script> scripts) {
    auto queue = std::make_shared<std::deque<Script>>(scripts.begin(), scripts.end());
    server_.handler = [queue](const Exchange&) {
      if (queue->empty()) return Script{{response(500, "{}")}};
      Script s = queue->front();
      queue->pop_front();
      return s;
    };
  }

  net::io_context io_;
  FakeApiServer server_;
};

const std::string kCm =
    R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"n"}})";

TEST_F(KubeTransport, TooManyRequestsIsRetriedEvenForPostAndCountsARetry) {
  respond({Script{{response(429, R"({"kind":"Status","reason":"TooManyRequests","code":429})",
                            "Retry-After: 0\r\n")}},
           Script{{response(201, kCm)}}});
  auto c = client();
  rapidjson::Document obj;
  obj.Parse(kCm.c_str());
  auto r = run(c->create(resources::kConfigMaps, "n", obj));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(server_.seen.size(), 2u);
  EXPECT_EQ(server_.seen[0].method, "POST");
  EXPECT_EQ(server_.seen[1].body, server_.seen[0].body);
  EXPECT_EQ(c->stats().retries, 1u);
}

TEST_F(KubeTransport, EvictionRefusedByABudgetIsReturnedAtOnceNamingIt) {
  // What the apiserver answers when a PodDisruptionBudget allows no disruption.
  const std::string refusal = R"({"kind":"Status","apiVersion":"v1","status":"Failure",
    "message":"Cannot evict pod as it would violate the pod's disruption budget.",
    "reason":"TooManyRequests","details":{"causes":[{"reason":"DisruptionBudget",
    "message":"The disruption budget web-pdb needs 3 healthy pods and has 3 currently"}]},
    "code":429})";
  respond({Script{{response(429, refusal)}},
           Script{{response(201, R"({"kind":"Status","status":"Success"})")}}});
  auto c = client();
  auto r = run(c->evict("n", "web-1"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kTooManyRequests);
  EXPECT_EQ(r.error().message,
            "evict pods n/web-1: Cannot evict pod as it would violate the pod's disruption "
            "budget.: The disruption budget web-pdb needs 3 healthy pods and has 3 currently "
            "(TooManyRequests, 429)");
  ASSERT_EQ(server_.seen.size(), 1u) << "a budget's refusal is the caller's to wait on";
  EXPECT_EQ(server_.seen[0].method, "POST");
  EXPECT_EQ(server_.seen[0].target, "/api/v1/namespaces/n/pods/web-1/eviction");
  EXPECT_EQ(
      server_.seen[0].body,
      R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web-1","namespace":"n"}})");

  auto dry = run(c->evict("n", "web-1", true));
  ASSERT_TRUE(dry) << dry.error().message;
  EXPECT_EQ(server_.seen[1].target, "/api/v1/namespaces/n/pods/web-1/eviction?dryRun=All");
}

// What kube-apiserver v1.36 answers a JSON patch that does not apply, e.g. whose test of
// /metadata/resourceVersion fails (handlers/patch.go): 422 Invalid, the generic message and no
// cause to say which operation failed.
const std::string kPatchDoesNotApply = R"({"kind":"Status","apiVersion":"v1","metadata":{},
  "status":"Failure","message":"the server rejected our request due to an error in our request",
  "reason":"Invalid","details":{},"code":422})";

TEST_F(KubeTransport, JsonPatchGuardedByAResourceVersionTestThatNoLongerAppliesIsAConflict) {
  const std::string guarded =
      R"([{"op":"test","path":"/metadata/resourceVersion","value":"7"},)"
      R"({"op":"add","path":"/metadata/finalizers","value":["meshop.io/uninstall"]}])";
  const std::string unguarded = R"([{"op":"add","path":"/data/x","value":"1"}])";
  respond({Script{{response(422, kPatchDoesNotApply)}}, Script{{response(422, kPatchDoesNotApply)}},
           Script{{response(422, kPatchDoesNotApply)}}});
  auto c = client();
  auto r = run(c->patch(resources::kConfigMaps, "n", "a", PatchType::kJson, guarded));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kConflict) << r.error().message;
  EXPECT_EQ(r.error().message,
            "patch configmaps n/a: the server rejected our request due to an error in our "
            "request (Invalid, 422); taken as a conflict: the patch tests the resourceVersion, "
            "and the object changed since it was read");
  EXPECT_EQ(server_.seen.size(), 1u) << "a conflict is the caller's to retry from a new read";

  // Without the test the failed operation is unknown: still Invalid, as is a merge patch.
  r = run(c->patch(resources::kConfigMaps, "n", "a", PatchType::kJson, unguarded));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid);
  r = run(c->patch(resources::kConfigMaps, "n", "a", PatchType::kMerge,
                   R"({"metadata":{"resourceVersion":"7"}})"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid);
}

TEST_F(KubeTransport, JsonPatchGuardedByAResourceVersionTestKeepsAValidationFailureInvalid) {
  // The patch applied but the result is invalid: the apiserver names the field.
  respond({Script{{response(422, R"({"kind":"Status","status":"Failure","reason":"Invalid",
    "code":422,"message":"ConfigMap \"a\" is invalid: metadata.finalizers[0]: Invalid value",
    "details":{"causes":[{"reason":"FieldValueInvalid","message":"Invalid value",
    "field":"metadata.finalizers[0]"}]}})")}}});
  auto c = client();
  auto r = run(c->patch(resources::kConfigMaps, "n", "a", PatchType::kJson,
                        R"([{"op":"test","path":"/metadata/resourceVersion","value":"7"},)"
                        R"({"op":"add","path":"/metadata/finalizers","value":["bad name"]}])"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInvalid) << r.error().message;
}

TEST_F(KubeTransport, InternalErrorIsNotRetriedForPost) {
  respond({Script{{response(500, R"({"kind":"Status","reason":"InternalError","code":500,
                                     "message":"etcd is sad"})")}},
           Script{{response(201, kCm)}}});
  auto c = client();
  rapidjson::Document obj;
  obj.Parse(kCm.c_str());
  auto r = run(c->create(resources::kConfigMaps, "n", obj));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInternalError);
  EXPECT_EQ(r.error().message, "create configmaps n/a: etcd is sad (InternalError, 500)");
  EXPECT_EQ(server_.seen.size(), 1u);
}

TEST_F(KubeTransport, ServiceUnavailableIsRetriedForGet) {
  respond({Script{{response(503, "")}}, Script{{response(503, "")}}, Script{{response(200, kCm)}}});
  auto c = client();
  auto r = run(c->get(resources::kConfigMaps, "n", "a"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(server_.seen.size(), 3u);
  EXPECT_EQ(server_.seen[0].target, "/api/v1/namespaces/n/configmaps/a");
}

TEST_F(KubeTransport, RetriesStopAtTheLimitWithTheLastError) {
  respond({});  // always 500
  ClientOptions opts;
  opts.max_retries = 2;
  auto c = client({}, opts);
  auto r = run(c->get(resources::kConfigMaps, "n", "a"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kInternalError);
  EXPECT_EQ(server_.seen.size(), 3u);
}

TEST_F(KubeTransport, KeepAliveReusesOneConnection) {
  respond(
      {Script{{response(200, kCm)}}, Script{{response(200, kCm)}}, Script{{response(200, kCm)}}});
  auto c = client();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(run(c->get(resources::kConfigMaps, "n", "a")));
  EXPECT_EQ(server_.connections, 1);
  EXPECT_EQ(c->stats().connections_opened, 1u);
}

TEST_F(KubeTransport, ServerClosingAnIdleConnectionIsRetriedTransparently) {
  respond({Script{{response(200, kCm)}, true}, Script{{response(200, kCm)}}});
  auto c = client();
  ASSERT_TRUE(run(c->get(resources::kConfigMaps, "n", "a")));
  // Let the client notice nothing: the pooled connection is dead, the request must still work.
  auto r = run(c->get(resources::kConfigMaps, "n", "a"));
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(server_.connections, 2);
}

TEST_F(KubeTransport, UnauthorizedRefreshesExecCredentialOnce) {
  std::string tmpl = (fs::temp_directory_path() / "meshop-kube-exec-XXXXXX").string();
  std::string dir = mkdtemp(tmpl.data());
  std::string plugin = dir + "/plugin.sh";
  std::ofstream(plugin) << "#!/bin/sh\nn=$(cat " << dir << "/n 2>/dev/null || echo 0)\n"
                        << "n=$((n+1)); echo $n > " << dir << "/n\n"
                        << "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\","
                           "\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok-'$n'\"}}'\n";
  chmod(plugin.c_str(), 0755);
  server_.handler = [](const Exchange& ex) {
    if (ex.authorization != "Bearer tok-2") return Script{{response(401, "")}};
    return Script{{response(200, kCm)}};
  };
  Config cfg;
  ExecConfig exec;
  exec.api_version = "client.authentication.k8s.io/v1";
  exec.command = plugin;
  cfg.exec = exec;
  auto c = client(cfg);
  auto r = run(c->get(resources::kConfigMaps, "n", "a"));
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(server_.seen.size(), 2u);
  EXPECT_EQ(server_.seen[0].authorization, "Bearer tok-1");
  EXPECT_EQ(server_.seen[1].authorization, "Bearer tok-2");
  fs::remove_all(dir);
}

TEST_F(KubeTransport, WrongCertificateAuthorityFailsTheHandshakeWithoutRetries) {
  respond({Script{{response(200, kCm)}}});
  Config cfg;
  cfg.server = "https://127.0.0.1:" + std::to_string(server_.port());
  // A different self-signed CA: generate one.
  std::string tmpl = (fs::temp_directory_path() / "meshop-kube-ca-XXXXXX").string();
  std::string dir = mkdtemp(tmpl.data());
  ASSERT_EQ(
      std::system(("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                   "-days 1 -subj /CN=other -keyout " +
                   dir + "/k -out " + dir + "/c 2>/dev/null")
                      .c_str()),
      0);
  cfg.ca_pem = read_text(dir + "/c");
  fs::remove_all(dir);
  auto c = Client::create(io_.get_executor(), cfg);
  ASSERT_TRUE(c);
  auto r = run((*c)->get(resources::kConfigMaps, "n", "a"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kTransport);
  EXPECT_NE(r.error().message.find("TLS handshake"), std::string::npos) << r.error().message;
  EXPECT_EQ((*c)->stats().retries, 0u);
}

const std::vector<std::string> kEvents = {
    R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"10"}}})",
    R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"11"}}})",
    R"({"type":"MODIFIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"12"},"data":{"k":"é\n"}}})",
    R"({"type":"DELETED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"13"}}})",
};

std::vector<std::string> drain_watch(KubeTransport* t, const std::shared_ptr<Client>& c,
                                     Error* error_out = nullptr) {
  std::vector<std::string> got;
  WatchOptions wo;
  auto w = t->run(c->watch(resources::kConfigMaps, "n", wo));
  if (!w) {
    if (error_out) *error_out = w.error();
    return got;
  }
  for (;;) {
    auto ev = t->run(w->next());
    if (!ev) {
      if (error_out) *error_out = ev.error();
      break;
    }
    if (!ev->has_value()) break;
    got.push_back(std::string(to_string((*ev)->type)) + "@" + (*ev)->resource_version());
  }
  return got;
}

TEST_F(KubeTransport, WatchLinesSplitAcrossChunksAndTlsRecordsAtEveryPosition) {
  std::string body;
  for (const auto& e : kEvents)
    body += e + "\n";
  const std::vector<std::string> expected = {"ADDED@10", "BOOKMARK@11", "MODIFIED@12",
                                             "DELETED@13"};
  auto c = client();
  for (std::size_t i = 1; i < body.size(); ++i) {
    // Chunk boundary at byte i of the body; TLS record boundaries somewhere else.
    std::string raw = chunked({body.substr(0, i), body.substr(i)});
    std::size_t p1 = (i * 13) % raw.size(), p2 = (i * 29) % raw.size();
    if (p1 > p2) std::swap(p1, p2);
    server_.handler = [raw, p1, p2](const Exchange&) {
      return Script{{raw.substr(0, p1), raw.substr(p1, p2 - p1), raw.substr(p2)}};
    };
    Error error;
    auto got = drain_watch(this, c, &error);
    ASSERT_EQ(got, expected) << "chunk split at " << i << ": " << error.message;
  }
  EXPECT_EQ(server_.seen.back().target,
            "/api/v1/namespaces/n/configmaps?watch=true&allowWatchBookmarks=true");
}

TEST_F(KubeTransport, WatchBodyOfManyChunksEndsCleanly) {
  std::vector<std::string> chunks;
  std::vector<std::string> expected;
  // ~20 MiB in 1-byte..64 KiB chunks: far above Beast's default 8 MiB body limit.
  std::string big(512 * 1024, 'x');
  std::string body;
  for (int i = 0; i < 40; ++i) {
    body += R"({"type":"ADDED","object":{"metadata":{"name":"o","resourceVersion":")" +
            std::to_string(100 + i) + R"("},"data":{"v":")" + big + "\"}}}\n";
    expected.push_back("ADDED@" + std::to_string(100 + i));
  }
  std::size_t off = 0, n = 1;
  while (off < body.size()) {
    chunks.push_back(body.substr(off, n));
    off += n;
    n = n * 3 % 65521 + 1;
  }
  std::string raw = chunked(chunks);
  server_.handler = [raw](const Exchange&) { return Script{{raw}}; };
  auto c = client();
  EXPECT_EQ(drain_watch(this, c), expected);
}

TEST_F(KubeTransport, WatchErrorEventGoneIsTyped) {
  std::string body =
      kEvents[0] + "\n" +
      R"js({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (10)","reason":"Expired","code":410}})js" +
      "\n";
  server_.handler = [body](const Exchange&) { return Script{{chunked({body})}}; };
  auto c = client();
  Error error;
  auto got = drain_watch(this, c, &error);
  EXPECT_EQ(got, std::vector<std::string>{"ADDED@10"});
  EXPECT_EQ(error.kind, ErrorKind::kGone);
  EXPECT_NE(error.message.find("watch configmaps in namespace n"), std::string::npos)
      << error.message;
}

TEST_F(KubeTransport, WatchCutInTheMiddleOfAnEventIsATransportError) {
  std::string body = kEvents[0] + "\n" + kEvents[2].substr(0, 30);
  // No terminating chunk, connection closed mid-event.
  std::string raw = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + [&] {
    std::ostringstream o;
    o << std::hex << body.size() << "\r\n" << body << "\r\n";
    return o.str();
  }();
  server_.handler = [raw](const Exchange&) { return Script{{raw}, true}; };
  auto c = client();
  Error error;
  auto got = drain_watch(this, c, &error);
  EXPECT_EQ(got, std::vector<std::string>{"ADDED@10"});
  EXPECT_EQ(error.kind, ErrorKind::kTransport) << error.message;
}

TEST_F(KubeTransport, WatchOpenRefusedWithStatusIsTyped) {
  respond({Script{{response(403, R"({"kind":"Status","reason":"Forbidden","code":403,
                                     "message":"watch forbidden"})")}}});
  auto c = client();
  Error error;
  auto got = drain_watch(this, c, &error);
  EXPECT_TRUE(got.empty());
  EXPECT_EQ(error.kind, ErrorKind::kForbidden);
}

TEST_F(KubeTransport, MetadataOnlyListSendsPartialObjectMetadataAccept) {
  respond({Script{{response(
      200,
      R"({"kind":"PartialObjectMetadataList","metadata":{"resourceVersion":"5","continue":"tok"},"items":[]})")}}});
  auto c = client();
  ListOptions lo;
  lo.metadata_only = true;
  lo.limit = 2;
  lo.label_selector = "a in (b,c)";
  auto page = run(c->list(resources::kPods, "", lo));
  ASSERT_TRUE(page) << page.error().message;
  EXPECT_EQ(page->continue_token, "tok");
  EXPECT_EQ(page->resource_version, "5");
  EXPECT_EQ(server_.seen[0].accept,
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1");
  EXPECT_EQ(server_.seen[0].target, "/api/v1/pods?labelSelector=a%20in%20%28b%2Cc%29&limit=2");
}

TEST_F(KubeTransport, RequestTimeoutFailsASilentServer) {
  server_.handler = [](const Exchange&) { return Script{}; };  // never answers
  ClientOptions opts;
  opts.request_timeout = std::chrono::milliseconds(300);
  opts.max_retries = 0;
  auto c = client({}, opts);
  auto r = run(c->get(resources::kConfigMaps, "n", "a"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, ErrorKind::kTransport);
  EXPECT_NE(r.error().message.find("timed out"), std::string::npos) << r.error().message;
}

TEST_F(KubeTransport, EventRecorderNeverQueuesMoreThanItsLimit) {
  server_.handler = [](const Exchange& ex) { return Script{{response(201, ex.body)}}; };
  auto c = client();
  EventRecorderOptions opts;
  opts.instance = "test";
  opts.max_queue = 2;
  auto recorder = EventRecorder::create(c, opts);
  ObjectReference ref{"v1", "ConfigMap", "n", "a", "uid-1", "1"};
  // record() only queues (the writer runs on the io_context, which is not running here).
  for (int i = 0; i < 5; ++i) {
    recorder->record(ref, EventType::kNormal, "R" + std::to_string(i), "A", "note");
  }
  EXPECT_EQ(recorder->dropped(), 3u);
  run([](std::shared_ptr<EventRecorder> r) -> Task<int> {
    co_await r->flush();
    co_return 0;
  }(recorder));
  EXPECT_EQ(recorder->created(), 2u);
  ASSERT_EQ(server_.seen.size(), 2u);
  EXPECT_NE(server_.seen[0].body.find("\"reason\":\"R3\""), std::string::npos)
      << server_.seen[0].body;
  EXPECT_NE(server_.seen[1].body.find("\"reason\":\"R4\""), std::string::npos);
  EXPECT_EQ(server_.seen[0].target, "/apis/events.k8s.io/v1/namespaces/n/events");
}

}  // namespace
}  // namespace meshop::kube
