// The source an Informer lists and watches: a small abstract interface so the informer's
// state machine is tested against a scripted fake, and runs against the real apiserver
// through kube_list_watch.hpp (an adapter over meshop::kube::Client).
//
// Contract for implementations:
// - list(rv, prepare) returns every object (all pages), each already passed through
//   `prepare` (the store's projection + compaction), and the list's resourceVersion. A source
//   should convert a page and drop it before fetching the next, so the peak memory of a large
//   list stays one page plus the compact objects. rv
// "" asks for
//   a consistent (quorum) read, "0" allows any cached state, anything else "not older than".
// - watch(rv, timeout) opens a stream of the changes after rv; the server ends it cleanly
//   after about `timeout_seconds`.
// - Failures are api::Errors (the client's, unchanged). A resourceVersion too old to serve
//   (HTTP 410 Gone, "Expired", or an ERROR event with code 410) has kind ErrorKind::kGone: the
//   informer relists from scratch; any other kind retries from the version it has.
// Everything runs on the control-loop thread.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>
#include <rapidjson/document.h>

#include "api/result.hpp"
#include "operator/runtime/object.hpp"

namespace meshop::runtime {

// True for the error that asks for a relist (kind kGone).
inline bool is_gone(const api::Error& e) {
  return e.is(api::ErrorKind::kGone);
}

// Turns one listed item into what the store keeps (Store::prepare).
using ItemPreparer = std::function<Object(const rapidjson::Value& item)>;

struct ListResult {
  std::vector<Object> items;
  std::string resource_version;
};

enum class EventType { kAdded, kModified, kDeleted, kBookmark };

struct WatchNext {
  enum class Kind { kEvent, kEnd, kError };
  Kind kind = Kind::kEnd;
  EventType type = EventType::kAdded;
  rapidjson::Document object;  // kEvent: the object (a bookmark's carries only its version)
  api::Error error;            // kError

  static WatchNext end() { return {}; }
  static WatchNext fail(api::Error e) {
    WatchNext n;
    n.kind = Kind::kError;
    n.error = std::move(e);
    return n;
  }
  static WatchNext event(EventType t, rapidjson::Document o) {
    WatchNext n;
    n.kind = Kind::kEvent;
    n.type = t;
    n.object = std::move(o);
    return n;
  }
};

class WatchStream {
 public:
  virtual ~WatchStream() = default;
  // The next event, a clean end, or an error. After kEnd or kError the stream is finished.
  virtual boost::asio::awaitable<WatchNext> next() = 0;
  // Makes a pending next() complete (with kError) so the informer can stop.
  virtual void close() = 0;
};

class ListWatch {
 public:
  virtual ~ListWatch() = default;
  // `prepare` stays valid until the returned awaitable completes.
  virtual boost::asio::awaitable<api::Result<ListResult>> list(std::string resource_version,
                                                               const ItemPreparer& prepare) = 0;
  virtual boost::asio::awaitable<api::Result<std::unique_ptr<WatchStream>>> watch(
      std::string resource_version, int timeout_seconds) = 0;
};

}  // namespace meshop::runtime
