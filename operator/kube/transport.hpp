// Internal: HTTPS transport of the client (Beast over OpenSSL). A keep-alive connection pool,
// connect/request timeouts, the QPS limiter, retries (retry.hpp) and credential refresh on 401.
// Included only by the client's own sources; public users see client.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "operator/kube/client.hpp"
#include "operator/kube/config.hpp"
#include "operator/kube/rate_limiter.hpp"
#include "operator/kube/retry.hpp"

namespace meshop::kube {

struct Connection {
  Connection(boost::asio::any_io_executor ex, std::shared_ptr<boost::asio::ssl::context> c)
      : tls(std::move(c)), stream(ex, *tls) {}
  // Held by every connection: asio's ssl::context destructor frees callbacks live streams use.
  std::shared_ptr<boost::asio::ssl::context> tls;
  boost::beast::ssl_stream<boost::beast::tcp_stream> stream;
  boost::beast::flat_buffer buffer;  // kept across header and body reads (leftover bytes)
  std::uint64_t tls_generation = 0;
  bool reused = false;
};

struct HttpRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string target;  // path + query, without the server's base path
  std::string body;
  std::string content_type;
  std::string accept = "application/json";
  std::string what;  // "<verb> <resource> <ns/name>" for messages
  // For request metrics: the Kubernetes verb (get, list, watch, create, update, patch, apply,
  // delete, discover; the HTTP method for raw requests) and the resource ("" when none).
  std::string verb;
  std::string resource;
  // A 429 is retried (with Retry-After or backoff) unless this is false: an eviction refused by
  // a PodDisruptionBudget is an answer for the caller, not server overload.
  bool retry_too_many_requests = true;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
};

// An HTTP response whose body has not been read yet (watch streams).
struct StreamingResponse {
  std::unique_ptr<Connection> connection;
  std::unique_ptr<boost::beast::http::response_parser<boost::beast::http::buffer_body>> parser;
};

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> create(boost::asio::any_io_executor executor,
                                                   Config config, ClientOptions options);

  // Sends with limiter, retries and pooling; a non-2xx answer is returned as a typed Error.
  Task<Result<HttpResponse>> send(HttpRequest request);
  // Same, but returns after the response header of a 2xx answer; the caller reads the body.
  Task<Result<StreamingResponse>> open_stream(HttpRequest request);

  const Config& config() const { return config_; }
  boost::asio::any_io_executor executor() const { return executor_; }
  Client::Stats& stats() { return stats_; }
  void set_request_observer(Client::RequestObserver observer) { observer_ = std::move(observer); }

  Transport(boost::asio::any_io_executor executor, Config config, ClientOptions options);

 private:
  struct Attempt;
  Task<Result<Attempt>> run(const HttpRequest& request, bool streaming);
  Task<Attempt> attempt_once(const HttpRequest& request, bool streaming, const Credential& cred);
  Task<Result<std::unique_ptr<Connection>>> acquire(bool& connect_failed);
  void release(std::unique_ptr<Connection> c);
  Status refresh_tls(const Credential& cred);
  Task<void> sleep(std::chrono::steady_clock::duration d);

  boost::asio::any_io_executor executor_;
  Config config_;
  ClientOptions options_;
  RetryPolicy retry_;
  TokenBucket limiter_;
  CredentialSource credentials_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  std::uint64_t tls_generation_ = 0;
  std::string tls_cert_pem_;  // client cert currently loaded in tls_
  std::string host_;          // for connect (no brackets)
  std::string port_;
  std::string host_header_;  // host[:port] as in the URL
  std::string verify_name_;  // tls-server-name or host
  std::string base_path_;    // path prefix of the server URL
  std::vector<std::unique_ptr<Connection>> idle_;
  std::mt19937_64 rng_{std::random_device{}()};
  Client::Stats stats_;
  Client::RequestObserver observer_;
};

}  // namespace meshop::kube
