// Kubernetes objects as Go templates see them: `.ObjectMeta.Annotations`, `.Spec.Containers`,
// `$c.Ports`, `.Spec.SecurityContext` ... read a Pod's JSON through the Go field names and Go
// types of k8s.io/api (metav1.ObjectMeta, corev1.PodSpec, corev1.Container, ...).
//
// Why a view and not a conversion: upstream's templates run over typed Go structs, so a missing
// field is its zero value ("" for a string, a nil map[string]string that indexes to "", a nil
// pointer, a nil slice), maps of strings are map[string]string, and structToJSON/toYaml marshal
// with the JSON names in Go struct order with omitempty. The view gives exactly that over the
// JSON DOM without copying the pod into template Values up front.
//
// Coverage: the struct types and fields listed in kube_view.cpp (ObjectMeta, OwnerReference,
// PodSpec, Container, ContainerPort, EnvVar, VolumeMount, ResourceRequirements,
// SecurityContext, Probe, LocalObjectReference). A field outside the table is still readable:
// its JSON name is derived from the Go name (first letter lowered, known initialisms such as
// HTTPGet/TCPSocket/UID handled) and its value is converted generically (objects become views
// of an unknown struct, numbers int64 or float64, strings, bools, lists). Marshalling an unknown
// struct writes its JSON as it is.
//
// Lifetime and threads: a view holds a shared owner of the JSON it reads; it is created per
// request and read by the one thread that renders that request (views cache the maps they
// build, without locking).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "operator/template/value.hpp"

namespace meshop::inject {

struct GoStruct;  // schema of one Go struct type (kube_view.cpp)

const GoStruct& object_meta_type();
const GoStruct& pod_spec_type();
const GoStruct& container_type();

// A template Value of Go type `type` over `json` (an object, or null for the zero struct).
// `owner` keeps `json` alive. `pointer` makes it `*T` (a null json is then a nil pointer).
template_engine::Value struct_view(const rapidjson::Value* json, const GoStruct& type,
                                   std::shared_ptr<const void> owner, bool pointer = false);

// encoding/json of the Go struct `type` read from `json`: fields in Go order, omitempty
// honoured, map keys sorted, HTML characters escaped. Fields outside the table are dropped.
void append_go_json(std::string& out, const rapidjson::Value& json, const GoStruct& type);
std::string go_json(const rapidjson::Value& json, const GoStruct& type);

// What json.Unmarshal into corev1.Pod followed by json.Marshal does to a Pod, for the fields in
// the table: zero-valued omitempty scalars, nulls and empty omitempty lists/maps dropped,
// resource quantities canonical (quantity.hpp). Fields outside the table only lose nulls and
// empty lists (Go would also drop fields unknown to corev1.Pod; those are kept).
void normalize_go_pod(rapidjson::Value& pod, rapidjson::Document::AllocatorType& alloc);

// A simple typed Go struct for template data (SidecarTemplateData, TypeMeta, NamespacedName):
// named fields with ready Values, printed and marshalled in declaration order.
class RecordObject : public template_engine::Object {
 public:
  // The names are views of strings that outlive every template run (string literals): a
  // record is built per injection, and copying its dozens of names was measurable.
  struct Field {
    std::string_view name;       // Go field name
    std::string_view json_name;  // "" = not marshalled
    template_engine::Value value;
    bool omitempty = false;
  };
  RecordObject(std::string_view go_type, std::vector<Field> fields)
      : go_type_(go_type), fields_(std::move(fields)) {}

  std::string_view go_type() const override { return go_type_; }
  std::string_view go_kind() const override;
  std::optional<template_engine::Value> field(std::string_view name) const override;
  std::optional<template_engine::Function> method(std::string_view name) const override;
  void format(std::string& out, bool plus, bool sharp) const override;

 private:
  std::string_view go_type_;
  std::vector<Field> fields_;
};

}  // namespace meshop::inject
