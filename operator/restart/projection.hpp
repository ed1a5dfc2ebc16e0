// What the planners keep of the objects they watch (issue 13): an informer store of Pods holds
// these projections, not whole pods, so its memory is what the plans read.
//
// Readers of a Pod: observe_pod (the sidecar.istio.io/status and meshop.io/injector-fingerprint
// annotations, the istio-proxy container's image), the plan's ownership walk (kind,
// metadata.{name,namespace,uid}, the controller owner reference), the restarts executor
// (metadata.creationTimestamp, metadata.deletionTimestamp, the Ready condition, owner uids,
// and for the health watch after a restart each container's name, restartCount and waiting
// reason)
// and the revisions reconciler (namespace, deletionTimestamp, the status annotation). A pod no
// controller owns is a workload of its own: the injection engine decides for it as it is, so it
// is kept whole (managedFields and the last-applied annotation dropped).
// Every projection sets apiVersion and kind (a LIST's items carry neither) and keeps
// metadata.resourceVersion (the store's change detection).
// A plan over projected pods equals the plan over the whole pods (cluster_plan_test).
#pragma once

#include <string_view>

#include <rapidjson/document.h>

namespace meshop::restart {

// In place. A non-object is left as it is.
void project_pod(rapidjson::Document& pod);
// metadata.{name,uid,resourceVersion} and status.nodeInfo.kubeletVersion (what the injection
// engine's native-sidecar detection reads).
void project_node(rapidjson::Document& node);
// A workload (or PDB, or any object the plan reads whole): managedFields and the last-applied
// annotation dropped, apiVersion and kind set when absent.
void project_whole(rapidjson::Document& object, std::string_view api_version,
                   std::string_view kind);

}  // namespace meshop::restart
