// kube::Reader: the reads a reconciler makes from the apiserver, behind a narrow interface
// (the counterpart of kube::Writer, operator/kube/writer.hpp).
//
// With it a unit test runs a reconciler's whole pass against an in-memory fake
// (test/support/fake_api.hpp) instead of an apiserver. `meshop run` gives client_reader(), which
// forwards to kube::Client; `meshop run` gives runtime::CachedReader
// (operator/runtime/cached_reader.hpp), which answers from the shared cache's stores what a
// watch covers (issue 13: "reconcilers observe from the cache"), without touching the
// reconcilers' decisions.
//
// Every call has the meaning, arguments and Result of the kube::Client verb of the same name.
// Thread affinity: the executor of the client behind it.
#pragma once

#include <memory>
#include <string>

#include <rapidjson/document.h>

#include "operator/kube/client.hpp"

namespace meshop::kube {

class Reader {
 public:
  virtual ~Reader() = default;

  virtual Task<Result<rapidjson::Document>> get(const ResourceType& type, std::string ns,
                                                std::string name) = 0;
  // Every page of a list, items in one List (Client::list_all).
  virtual Task<Result<ListPage>> list_all(const ResourceType& type, std::string ns,
                                          ListOptions options) = 0;
  // Resolves apiVersion and kind to a resource (Client::discover).
  virtual Task<Result<ResourceType>> discover(std::string api_version, std::string kind) = 0;
};

// `client`'s verbs. `client` may be null for an object that never reads.
std::shared_ptr<Reader> client_reader(std::shared_ptr<Client> client);

}  // namespace meshop::kube
