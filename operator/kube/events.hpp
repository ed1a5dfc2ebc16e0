// An events.k8s.io/v1 Event recorder that aggregates repeats: the same object + type + reason +
// note within `window` updates the existing Event's series (count, lastObservedTime) instead of
// creating a new Event.
//
// record() never blocks and never fails: it queues the event (dropping the oldest when the
// queue is full, counted in dropped()) and a background coroutine writes it. Thread affinity:
// the client's executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "operator/kube/client.hpp"

namespace meshop::kube {

// The object an Event is about.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string ns;
  std::string name;
  std::string uid;
  std::string resource_version;
};
// Builds the reference from an object's apiVersion, kind and metadata.
ObjectReference reference_to(const rapidjson::Value& object);

enum class EventType { kNormal, kWarning };

struct EventRecorderOptions {
  std::string controller = "meshop";  // reportingController
  std::string instance;               // reportingInstance (pod name); defaults to hostname
  std::chrono::seconds window{600};   // aggregation window
  std::size_t max_queue = 1000;
};

class EventRecorder : public std::enable_shared_from_this<EventRecorder> {
 public:
  static std::shared_ptr<EventRecorder> create(std::shared_ptr<Client> client,
                                               EventRecorderOptions options = {});

  // Queues an Event about `regarding`. `action` is what was done (e.g. "Restart"), `reason`
  // why (CamelCase), `note` the human message (truncated to 1 KiB as the API requires).
  void record(const ObjectReference& regarding, EventType type, std::string reason,
              std::string action, std::string note);

  // Waits until every queued event has been written (tests, graceful shutdown).
  Task<void> flush();

  std::uint64_t created() const { return created_; }
  std::uint64_t aggregated() const { return aggregated_; }
  std::uint64_t dropped() const { return dropped_; }
  std::uint64_t failed() const { return failed_; }

  struct Pending {
    ObjectReference regarding;
    EventType type;
    std::string reason, action, note;
    std::chrono::system_clock::time_point when;
  };

  EventRecorder(std::shared_ptr<Client> client, EventRecorderOptions options);

 private:
  struct Series {
    std::string ns, name;  // the Event object written
    std::int32_t count = 1;
    std::chrono::system_clock::time_point first, last;
  };
  Task<void> drain();
  Task<void> write_one(Pending p);

  std::shared_ptr<Client> client_;
  EventRecorderOptions options_;
  std::deque<Pending> queue_;
  std::map<std::string, Series> series_;
  bool draining_ = false;
  std::uint64_t created_ = 0, aggregated_ = 0, dropped_ = 0, failed_ = 0;
};

}  // namespace meshop::kube
