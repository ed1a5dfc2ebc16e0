// What the planners keep of the objects they watch (issue 13): an informer store of Pods holds
// these projections, not whole pods, so its memory is what the plans read.
//
// Readers of a Pod: observe_pod (the sidecar.istio.io/status and meshop.io/injector-fingerprint
// annotations, the istio-proxy container's image), the plan's ownership walk (the controller
// owner reference, metadata.{name,namespace}), the restarts executor (metadata.creationTimestamp,
// metadata.deletionTimestamp, the Ready condition, owner uids, and for the health watch after a
// restart each container's name, restartCount and waiting reason) and the revisions reconciler
// (namespace, labels, deletionTimestamp, phase, the status annotation). Nobody reads a controlled
// pod's own uid, apiVersion or kind (it is only ever read as one of its workload's pods), so they
// are not kept: 136 bytes of each of 100k pods. A pod no controller owns is a workload of its
// own: the injection engine decides for it as it is, so it is kept whole (managedFields and the
// last-applied annotation dropped, apiVersion and kind set).
// A controlled pod's projection is a record (api/record.hpp): its name, resourceVersion,
// creation and deletion times in slots, the rest in a base its siblings share; every reader of
// pods reads them through api::field / runtime::meta_string, which read a whole pod alike.
// Every projection keeps metadata.resourceVersion (the store's change detection); the others
// set apiVersion and kind (a LIST's items carry neither).
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
// A workload of the restart planner's watches (reconcilers/watches.cpp every()): project_whole,
// less what no planner, rollout follower or executor reads: metadata.creationTimestamp, the
// deployment.kubernetes.io/ annotations, the conditions' lastUpdateTime and lastTransitionTime,
// and the message of a condition whose status is True (only a False or Unknown one's is read).
// A ReplicaSet that a controller owns (a Deployment's) is only a link from its pods to that
// controller: its kind and metadata.{name,namespace,uid,resourceVersion,ownerReferences} are
// kept, the references as {uid, controller} (the ownership walk reads nothing else of them), no
// apiVersion, spec or status (a controlled workload is never a plan target; the plan and the
// rollout read its Deployment's). A plan over projected workloads equals the plan over the
// whole ones (projection_test).
void project_workload(rapidjson::Document& object, std::string_view api_version,
                      std::string_view kind);

}  // namespace meshop::restart
