#include "operator/kube/events.hpp"

#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/json.hpp"
#include "api/time.hpp"

namespace meshop::kube {
namespace {

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "meshop";
  return buf;
}

std::string series_key(const EventRecorder::Pending& p) {
  const auto& r = p.regarding;
  return r.uid + '\x1f' + r.api_version + '\x1f' + r.kind + '\x1f' + r.ns + '\x1f' + r.name +
         '\x1f' + (p.type == EventType::kWarning ? "W" : "N") + '\x1f' + p.reason + '\x1f' +
         p.action + '\x1f' + p.note;
}

}  // namespace

ObjectReference reference_to(const rapidjson::Value& object) {
  ObjectReference r;
  r.api_version = api::string_at(object, {"apiVersion"});
  r.kind = api::string_at(object, {"kind"});
  r.ns = api::string_at(object, {"metadata", "namespace"});
  r.name = api::string_at(object, {"metadata", "name"});
  r.uid = api::string_at(object, {"metadata", "uid"});
  r.resource_version = api::string_at(object, {"metadata", "resourceVersion"});
  return r;
}

EventRecorder::EventRecorder(std::shared_ptr<Client> client, EventRecorderOptions options)
    : client_(std::move(client)), options_(std::move(options)) {
  if (options_.instance.empty()) options_.instance = hostname();
}

std::shared_ptr<EventRecorder> EventRecorder::create(std::shared_ptr<Client> client,
                                                     EventRecorderOptions options) {
  return std::make_shared<EventRecorder>(std::move(client), std::move(options));
}

void EventRecorder::record(const ObjectReference& regarding, EventType type, std::string reason,
                           std::string action, std::string note) {
  if (note.size() > 1024) note.resize(1024);  // the API rejects longer notes
  if (queue_.size() >= options_.max_queue) {
    queue_.pop_front();
    ++dropped_;
  }
  queue_.push_back(Pending{regarding, type, std::move(reason), std::move(action), std::move(note),
                           std::chrono::system_clock::now()});
  if (!draining_) {
    draining_ = true;
    boost::asio::co_spawn(
        client_->get_executor(),
        [self = shared_from_this()]() -> Task<void> { co_await self->drain(); },
        boost::asio::detached);
  }
}

Task<void> EventRecorder::drain() {
  while (!queue_.empty()) {
    Pending p = std::move(queue_.front());
    queue_.pop_front();
    try {
      co_await write_one(std::move(p));
    } catch (const std::exception&) {
      ++failed_;  // an Event is best effort; never let it take the process down
    }
  }
  draining_ = false;
}

Task<void> EventRecorder::flush() {
  boost::asio::steady_timer timer(client_->get_executor());
  while (draining_ || !queue_.empty()) {
    timer.expires_after(std::chrono::milliseconds(10));
    co_await timer.async_wait(boost::asio::use_awaitable);
  }
}

Task<void> EventRecorder::write_one(Pending p) {
  const std::string key = series_key(p);
  // Forget series that ended long ago so the map stays small.
  if (series_.size() > 4096) {
    for (auto it = series_.begin(); it != series_.end();) {
      it = p.when - it->second.last > options_.window ? series_.erase(it) : std::next(it);
    }
  }
  auto it = series_.find(key);
  if (it != series_.end() && p.when - it->second.last < options_.window) {
    Series& s = it->second;
    std::string patch = R"({"series":{"count":)" + std::to_string(s.count + 1) +
                        R"(,"lastObservedTime":")" + api::rfc3339_micro(p.when) + R"("}})";
    auto r = co_await client_->patch(resources::kEvents, s.ns, s.name, PatchType::kMerge,
                                     std::move(patch));
    if (r) {
      ++s.count;
      s.last = p.when;
      ++aggregated_;
      co_return;
    }
    if (!r.error().is(ErrorKind::kNotFound)) {
      ++failed_;
      co_return;
    }
    series_.erase(it);  // the Event expired on the server (TTL): start a new one
  }

  const ObjectReference& ref = p.regarding;
  std::string ns = ref.ns.empty() ? "default" : ref.ns;
  auto nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(p.when.time_since_epoch()).count();
  char suffix[32];
  std::snprintf(suffix, sizeof suffix, ".%llx", static_cast<unsigned long long>(nanos));
  std::string name = (ref.name.empty() ? std::string("meshop") : ref.name) + suffix;

  rapidjson::Document ev(rapidjson::kObjectType);
  auto& a = ev.GetAllocator();
  auto s = [&a](const std::string& v) { return rapidjson::Value(v.c_str(), a); };
  ev.AddMember("apiVersion", "events.k8s.io/v1", a);
  ev.AddMember("kind", "Event", a);
  rapidjson::Value md(rapidjson::kObjectType);
  md.AddMember("name", s(name), a);
  md.AddMember("namespace", s(ns), a);
  ev.AddMember("metadata", md, a);
  ev.AddMember("eventTime", s(api::rfc3339_micro(p.when)), a);
  ev.AddMember("reportingController", s(options_.controller), a);
  ev.AddMember("reportingInstance", s(options_.instance.substr(0, 128)), a);
  ev.AddMember("action", s(p.action), a);
  ev.AddMember("reason", s(p.reason), a);
  ev.AddMember("note", s(p.note), a);
  ev.AddMember("type", rapidjson::StringRef(p.type == EventType::kWarning ? "Warning" : "Normal"),
               a);
  rapidjson::Value regarding(rapidjson::kObjectType);
  if (!ref.api_version.empty()) regarding.AddMember("apiVersion", s(ref.api_version), a);
  if (!ref.kind.empty()) regarding.AddMember("kind", s(ref.kind), a);
  if (!ref.ns.empty()) regarding.AddMember("namespace", s(ref.ns), a);
  if (!ref.name.empty()) regarding.AddMember("name", s(ref.name), a);
  if (!ref.uid.empty()) regarding.AddMember("uid", s(ref.uid), a);
  if (!ref.resource_version.empty()) {
    regarding.AddMember("resourceVersion", s(ref.resource_version), a);
  }
  ev.AddMember("regarding", regarding, a);

  auto r = co_await client_->create(resources::kEvents, ns, ev);
  if (!r) {
    ++failed_;
    co_return;
  }
  ++created_;
  series_[key] = Series{ns, name, 1, p.when, p.when};
}

}  // namespace meshop::kube
