// Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics
// (tools/leaderelection):
//
// - try_acquire_or_renew() is one attempt: GET the lease (CREATE it when missing); if another
//   holder's lease has not expired, give up; else PUT our record with the resourceVersion we
//   read, so two candidates racing for it cannot both win (the loser gets a conflict).
// - Expiry is judged by LOCAL observation: a lease is held until leaseDurationSeconds after
//   the moment THIS process last saw the record change, never by comparing the remote
//   renewTime with our clock, so clock skew between machines cannot cause two leaders.
// - acquire() retries every retry_period until it wins or stop() is called.
// - renew() renews every retry_period; the leadership is lost when no renewal succeeded for
//   renew_deadline (each attempt is bounded by what is left of it, even when a request hangs),
//   or at once when another holder is seen in the lease. Lost is final: the caller must stop
//   its reconcilers and exit the process (controller-runtime does the same, "for safety").
// - release() (graceful shutdown, client-go ReleaseOnCancel) writes an empty holder with
//   leaseDurationSeconds 1, so a standby takes over within about a second of seeing it.
//
// Defaults: lease 15 s, renew deadline 10 s, retry 2 s (controller-runtime's).
// Thread affinity: the control-loop thread. The lock, clock and metrics outlive the elector,
// and the elector outlives every attempt it started (the process exits after a loss).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/runtime/clock.hpp"
#include "operator/runtime/metrics.hpp"

namespace meshop::runtime {

// spec of a Lease, as the election reads and writes it.
struct LeaseRecord {
  std::string holder_identity;
  int lease_duration_seconds = 0;
  std::string acquire_time;  // metav1.MicroTime text
  std::string renew_time;
  int lease_transitions = 0;

  bool operator==(const LeaseRecord&) const = default;
};

// A lease as the server stored it.
struct StoredLease {
  LeaseRecord record;
  std::string resource_version;
};

// Where the lease lives. kube_source.hpp implements it over the API; tests use a fake.
// Failures are api::Errors: kind kNotFound when there is no lease (get, update), kAlreadyExists
// or kConflict when another candidate wrote first (create, update with a stale version).
class LeaseLock {
 public:
  virtual ~LeaseLock() = default;
  virtual boost::asio::awaitable<api::Result<StoredLease>> get() = 0;
  virtual boost::asio::awaitable<api::Result<StoredLease>> create(const LeaseRecord& record) = 0;
  virtual boost::asio::awaitable<api::Result<StoredLease>> update(
      const LeaseRecord& record, const std::string& resource_version) = 0;
  // "namespace/name" for logs.
  virtual std::string describe() const = 0;
};

struct LeaderElectionConfig {
  std::string identity;  // unique per process: hostname + "_" + random
  Duration lease_duration = std::chrono::seconds(15);
  Duration renew_deadline = std::chrono::seconds(10);
  Duration retry_period = std::chrono::seconds(2);
};

// metav1.MicroTime: RFC 3339 UTC with microseconds, "2026-11-29T18:00:00.123456Z".
std::string format_micro_time(WallTime t);

// spec <-> LeaseRecord (absent fields stay empty / zero).
LeaseRecord lease_record_from_json(const rapidjson::Value& lease);
// Writes `record` into lease.spec (creating spec), leaving metadata alone.
void lease_record_to_json(const LeaseRecord& record, rapidjson::Document& lease);

class LeaderElector {
 public:
  LeaderElector(LeaseLock& lock, Clock& clock, boost::asio::any_io_executor executor,
                LeaderElectionConfig config, RuntimeMetrics* metrics = nullptr);

  boost::asio::awaitable<bool> try_acquire_or_renew();
  // true once leading; false when stop() was called first.
  boost::asio::awaitable<bool> acquire();
  // Returns when leadership is lost (lost() true) or stop() was called.
  boost::asio::awaitable<void> renew();
  // Gives the lease up if we hold it: waits (up to renew_deadline) for a renewal in flight,
  // then one PUT; on failure the lease simply expires. Call after stop().
  boost::asio::awaitable<void> release();
  void stop();

  bool is_leader() const;
  bool lost() const { return lost_; }
  const LeaseRecord& observed_record() const { return observed_; }
  const LeaderElectionConfig& config() const { return config_; }

 private:
  // Runs try_acquire_or_renew() bounded by `deadline`; false on timeout (the attempt goes on
  // in the background and its outcome is ignored).
  boost::asio::awaitable<bool> attempt_until(TimePoint deadline);
  void observe(const LeaseRecord& record, const std::string& rv);
  bool lease_valid_for_others() const;
  void set_leader_metric(bool leader);

  LeaseLock& lock_;
  Clock& clock_;
  boost::asio::any_io_executor executor_;
  LeaderElectionConfig config_;
  metrics::Gauge* leader_gauge_ = nullptr;
  std::unique_ptr<Timer> timer_;
  Timer* current_attempt_wake_ = nullptr;
  Timer* release_wake_ = nullptr;
  int in_flight_ = 0;  // attempts started by attempt_until() and not finished

  LeaseRecord observed_;
  std::string observed_rv_;
  TimePoint observed_time_{};
  bool have_observed_ = false;
  bool lost_ = false;
  bool stopping_ = false;
};

}  // namespace meshop::runtime
