#include "operator/runtime/leader_election.hpp"

#include <cstdio>
#include <ctime>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "api/time.hpp"
#include "operator/log/log.hpp"

namespace meshop::runtime {

namespace asio = boost::asio;

std::string format_micro_time(WallTime t) {
  return api::rfc3339_micro(t);
}

LeaseRecord lease_record_from_json(const rapidjson::Value& lease) {
  LeaseRecord r;
  if (!lease.IsObject()) return r;
  auto spec = lease.FindMember("spec");
  if (spec == lease.MemberEnd() || !spec->value.IsObject()) return r;
  const auto& s = spec->value;
  auto str = [&](const char* name) -> std::string {
    auto it = s.FindMember(name);
    return it != s.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  auto num = [&](const char* name) -> int {
    auto it = s.FindMember(name);
    return it != s.MemberEnd() && it->value.IsInt() ? it->value.GetInt() : 0;
  };
  r.holder_identity = str("holderIdentity");
  r.lease_duration_seconds = num("leaseDurationSeconds");
  r.acquire_time = str("acquireTime");
  r.renew_time = str("renewTime");
  r.lease_transitions = num("leaseTransitions");
  return r;
}

void lease_record_to_json(const LeaseRecord& record, rapidjson::Document& lease) {
  auto& a = lease.GetAllocator();
  if (!lease.IsObject()) lease.SetObject();
  lease.RemoveMember("spec");
  rapidjson::Value spec(rapidjson::kObjectType);
  auto put_str = [&](const char* name, const std::string& v) {
    if (!v.empty()) spec.AddMember(rapidjson::StringRef(name), rapidjson::Value(v.c_str(), a), a);
  };
  // An empty holder is written explicitly: that is how a release is seen by others.
  spec.AddMember("holderIdentity", rapidjson::Value(record.holder_identity.c_str(), a), a);
  spec.AddMember("leaseDurationSeconds", record.lease_duration_seconds, a);
  put_str("acquireTime", record.acquire_time);
  put_str("renewTime", record.renew_time);
  spec.AddMember("leaseTransitions", record.lease_transitions, a);
  lease.AddMember("spec", spec, a);
}

LeaderElector::LeaderElector(LeaseLock& lock, Clock& clock, asio::any_io_executor executor,
                             LeaderElectionConfig config, RuntimeMetrics* metrics)
    : lock_(lock),
      clock_(clock),
      executor_(std::move(executor)),
      config_(std::move(config)),
      timer_(clock.make_timer(executor_)) {
  if (metrics != nullptr) {
    leader_gauge_ = &metrics->leader_status.with({lock_.describe()});
    leader_gauge_->Set(0);
  }
}

bool LeaderElector::is_leader() const {
  return !lost_ && have_observed_ && observed_.holder_identity == config_.identity;
}

void LeaderElector::set_leader_metric(bool leader) {
  if (leader_gauge_ != nullptr) leader_gauge_->Set(leader ? 1 : 0);
}

void LeaderElector::observe(const LeaseRecord& record, const std::string& rv) {
  // The clock restarts only when the record CHANGES: a holder that stopped renewing leaves
  // the record as it was, and its lease runs out leaseDurationSeconds after we first saw it.
  if (!have_observed_ || !(record == observed_)) observed_time_ = clock_.now();
  observed_ = record;
  observed_rv_ = rv;
  have_observed_ = true;
}

bool LeaderElector::lease_valid_for_others() const {
  return observed_time_ + std::chrono::seconds(observed_.lease_duration_seconds) > clock_.now();
}

asio::awaitable<bool> LeaderElector::try_acquire_or_renew() {
  std::string now_text = format_micro_time(clock_.wall_now());
  LeaseRecord desired;
  desired.holder_identity = config_.identity;
  desired.lease_duration_seconds = static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(config_.lease_duration).count());
  desired.acquire_time = now_text;
  desired.renew_time = now_text;

  // Fast path: we hold a valid lease; renew it with the version we wrote last.
  if (is_leader() && lease_valid_for_others()) {
    desired.acquire_time = observed_.acquire_time;
    desired.lease_transitions = observed_.lease_transitions;
    api::Result<StoredLease> r = co_await lock_.update(desired, observed_rv_);
    if (r.ok()) {
      observe(r->record, r->resource_version);
      co_return true;
    }
    log::warn("lease renewal failed; re-reading the lease",
              {{"lease", lock_.describe()}, {"error", r.message()}});
  }

  api::Result<StoredLease> current = co_await lock_.get();
  if (!current.ok() && current.error().is(api::ErrorKind::kNotFound)) {
    api::Result<StoredLease> created = co_await lock_.create(desired);
    if (!created.ok()) co_return false;
    observe(created->record, created->resource_version);
    co_return true;
  }
  if (!current.ok()) {
    log::warn("reading the lease failed",
              {{"lease", lock_.describe()}, {"error", current.message()}});
    co_return false;
  }
  observe(current->record, current->resource_version);

  bool held_by_other =
      !observed_.holder_identity.empty() && observed_.holder_identity != config_.identity;
  if (held_by_other && lease_valid_for_others()) co_return false;

  if (observed_.holder_identity == config_.identity) {
    desired.acquire_time = observed_.acquire_time;
    desired.lease_transitions = observed_.lease_transitions;
  } else {
    desired.lease_transitions = observed_.lease_transitions + 1;
  }
  api::Result<StoredLease> updated = co_await lock_.update(desired, current->resource_version);
  if (!updated.ok()) co_return false;  // lost the race (conflict) or the API failed
  observe(updated->record, updated->resource_version);
  co_return true;
}

asio::awaitable<bool> LeaderElector::attempt_until(TimePoint deadline) {
  // The attempt runs on its own so a hanging request cannot hold us past the deadline; its
  // state (and the timer that wakes us) is shared so a late completion touches nothing freed.
  struct State {
    bool done = false;
    bool ok = false;
    std::unique_ptr<Timer> wake;
  };
  auto state = std::make_shared<State>();
  state->wake = clock_.make_timer(executor_);
  current_attempt_wake_ = state->wake.get();
  ++in_flight_;
  asio::co_spawn(
      executor_,
      [this, state]() -> asio::awaitable<void> {
        bool ok = false;
        try {
          ok = co_await try_acquire_or_renew();
        } catch (const std::exception& e) {
          log::error("lease attempt threw", {{"lease", lock_.describe()}, {"error", e.what()}});
        }
        state->ok = ok;
        state->done = true;
        state->wake->cancel();
        --in_flight_;
        if (release_wake_ != nullptr) release_wake_->cancel();
      },
      asio::detached);
  while (!state->done && clock_.now() < deadline && !stopping_) {
    state->wake->expires_at(deadline);
    co_await state->wake->wait();
  }
  current_attempt_wake_ = nullptr;
  co_return state->done && state->ok;
}

asio::awaitable<bool> LeaderElector::acquire() {
  log::info("waiting to acquire the leader lease",
            {{"lease", lock_.describe()}, {"identity", config_.identity}});
  while (!stopping_) {
    bool acquired = co_await attempt_until(clock_.now() + config_.renew_deadline);
    if (acquired) {
      log::info("acquired the leader lease",
                {{"lease", lock_.describe()}, {"identity", config_.identity}});
      set_leader_metric(true);
      co_return true;
    }
    if (stopping_) break;
    timer_->expires_at(clock_.now() + config_.retry_period);
    co_await timer_->wait();
  }
  co_return false;
}

asio::awaitable<void> LeaderElector::renew() {
  TimePoint last_renew = clock_.now();
  while (!stopping_ && !lost_) {
    timer_->expires_at(clock_.now() + config_.retry_period);
    co_await timer_->wait();
    if (stopping_) break;
    TimePoint deadline = last_renew + config_.renew_deadline;
    bool ok = co_await attempt_until(deadline);
    if (stopping_) break;
    if (ok) {
      last_renew = clock_.now();
      continue;
    }
    bool other_holder = have_observed_ && observed_.holder_identity != config_.identity &&
                        !observed_.holder_identity.empty();
    if (other_holder || clock_.now() >= deadline) {
      lost_ = true;
      set_leader_metric(false);
      log::error("lost the leader lease",
                 {{"lease", lock_.describe()},
                  {"identity", config_.identity},
                  {"holder", observed_.holder_identity},
                  {"reason", other_holder ? "another holder took the lease"
                                          : "no renewal succeeded within the renew deadline"}});
    }
  }
}

asio::awaitable<void> LeaderElector::release() {
  // A renewal still in flight would change the resourceVersion under our release (which
  // would then fail with a conflict and leave the lease to expire): let it land first.
  auto wait = clock_.make_timer(executor_);
  TimePoint give_up = clock_.now() + config_.renew_deadline;
  while (in_flight_ > 0 && clock_.now() < give_up) {
    release_wake_ = wait.get();
    wait->expires_at(give_up);
    co_await wait->wait();
  }
  release_wake_ = nullptr;
  if (!is_leader()) co_return;
  LeaseRecord released;
  released.holder_identity = "";
  released.lease_duration_seconds = 1;
  std::string now_text = format_micro_time(clock_.wall_now());
  released.acquire_time = now_text;
  released.renew_time = now_text;
  released.lease_transitions = observed_.lease_transitions;
  api::Result<StoredLease> r = co_await lock_.update(released, observed_rv_);
  set_leader_metric(false);
  if (!r.ok()) {
    log::warn("releasing the leader lease failed; it will expire",
              {{"lease", lock_.describe()}, {"error", r.message()}});
    co_return;
  }
  observe(r->record, r->resource_version);
  log::info("released the leader lease", {{"lease", lock_.describe()}});
}

void LeaderElector::stop() {
  stopping_ = true;
  timer_->cancel();
  if (current_attempt_wake_ != nullptr) current_attempt_wake_->cancel();
}

}  // namespace meshop::runtime
