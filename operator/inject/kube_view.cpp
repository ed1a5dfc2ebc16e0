#include "operator/inject/kube_view.hpp"

#include <algorithm>
#include <iterator>
#include <optional>
#include <span>
#include <utility>

#include "api/json.hpp"
#include "operator/inject/quantity.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::inject {

namespace te = template_engine;

enum class FieldType : std::uint8_t {
  kString,
  kBool,
  kInt32,
  kInt64,
  kPtrInt32,
  kPtrInt64,
  kPtrBool,
  kPtrString,
  kStringMap,
  kQuantityMap,  // map[ResourceName]resource.Quantity
  kStruct,
  kPtrStruct,
  kStructList,
  kStringList,
  kTime,  // metav1.Time: marshals as null when zero
  kRaw,   // a type outside the table: read generically, marshalled as it is
};

struct GoField {
  std::string_view go;
  std::string_view json;
  FieldType type;
  const GoStruct* elem = nullptr;
  bool omitempty = true;
};

struct GoStruct {
  std::string_view go_type;      // "v1.Container"
  std::string_view go_ptr_type;  // "*v1.Container"
  std::span<const GoField> fields;

  const GoField* find(std::string_view go_name) const {
    for (const GoField& f : fields)
      if (f.go == go_name) return &f;
    return nullptr;
  }

  // Whether a field is a struct (not a pointer), which normalize_go_pod writes even when absent.
  static constexpr bool any_struct_field(std::span<const GoField> fs) {
    for (const GoField& f : fs)
      if (f.type == FieldType::kStruct) return true;
    return false;
  }
  bool has_struct_fields = any_struct_field(fields);
};

namespace {

using F = FieldType;

// Field lists follow the declaration order of k8s.io/api core/v1 and apimachinery meta/v1,
// which is the order encoding/json writes them in.
constexpr GoField kContainerPortFields[] = {
    {"Name", "name", F::kString},
    {"HostPort", "hostPort", F::kInt32},
    {"ContainerPort", "containerPort", F::kInt32, nullptr, false},
    {"Protocol", "protocol", F::kString},
    {"HostIP", "hostIP", F::kString},
};
constexpr GoStruct kContainerPort{"v1.ContainerPort", "*v1.ContainerPort", kContainerPortFields};

constexpr GoField kEnvVarFields[] = {
    {"Name", "name", F::kString, nullptr, false},
    {"Value", "value", F::kString},
    {"ValueFrom", "valueFrom", F::kRaw},
};
constexpr GoStruct kEnvVar{"v1.EnvVar", "*v1.EnvVar", kEnvVarFields};

constexpr GoField kVolumeMountFields[] = {
    {"Name", "name", F::kString, nullptr, false},
    {"ReadOnly", "readOnly", F::kBool},
    {"RecursiveReadOnly", "recursiveReadOnly", F::kPtrString},
    {"MountPath", "mountPath", F::kString, nullptr, false},
    {"SubPath", "subPath", F::kString},
    {"MountPropagation", "mountPropagation", F::kPtrString},
    {"SubPathExpr", "subPathExpr", F::kString},
};
constexpr GoStruct kVolumeMount{"v1.VolumeMount", "*v1.VolumeMount", kVolumeMountFields};

constexpr GoField kResourceRequirementsFields[] = {
    {"Limits", "limits", F::kQuantityMap},
    {"Requests", "requests", F::kQuantityMap},
    {"Claims", "claims", F::kRaw},
};
constexpr GoStruct kResourceRequirements{"v1.ResourceRequirements", "*v1.ResourceRequirements",
                                         kResourceRequirementsFields};

constexpr GoField kSecurityContextFields[] = {
    {"Capabilities", "capabilities", F::kRaw},
    {"Privileged", "privileged", F::kPtrBool},
    {"SELinuxOptions", "seLinuxOptions", F::kRaw},
    {"WindowsOptions", "windowsOptions", F::kRaw},
    {"RunAsUser", "runAsUser", F::kPtrInt64},
    {"RunAsGroup", "runAsGroup", F::kPtrInt64},
    {"RunAsNonRoot", "runAsNonRoot", F::kPtrBool},
    {"ReadOnlyRootFilesystem", "readOnlyRootFilesystem", F::kPtrBool},
    {"AllowPrivilegeEscalation", "allowPrivilegeEscalation", F::kPtrBool},
    {"ProcMount", "procMount", F::kPtrString},
    {"SeccompProfile", "seccompProfile", F::kRaw},
    {"AppArmorProfile", "appArmorProfile", F::kRaw},
};
constexpr GoStruct kSecurityContext{"v1.SecurityContext", "*v1.SecurityContext",
                                    kSecurityContextFields};

// ProbeHandler is embedded in Probe: its fields are promoted (and marshalled inline).
constexpr GoField kProbeFields[] = {
    {"Exec", "exec", F::kRaw},
    {"HTTPGet", "httpGet", F::kRaw},
    {"TCPSocket", "tcpSocket", F::kRaw},
    {"GRPC", "grpc", F::kRaw},
    {"InitialDelaySeconds", "initialDelaySeconds", F::kInt32},
    {"TimeoutSeconds", "timeoutSeconds", F::kInt32},
    {"PeriodSeconds", "periodSeconds", F::kInt32},
    {"SuccessThreshold", "successThreshold", F::kInt32},
    {"FailureThreshold", "failureThreshold", F::kInt32},
    {"TerminationGracePeriodSeconds", "terminationGracePeriodSeconds", F::kPtrInt64},
};
constexpr GoStruct kProbe{"v1.Probe", "*v1.Probe", kProbeFields};

constexpr GoField kContainerFields[] = {
    {"Name", "name", F::kString, nullptr, false},
    {"Image", "image", F::kString},
    {"Command", "command", F::kStringList},
    {"Args", "args", F::kStringList},
    {"WorkingDir", "workingDir", F::kString},
    {"Ports", "ports", F::kStructList, &kContainerPort},
    {"EnvFrom", "envFrom", F::kRaw},
    {"Env", "env", F::kStructList, &kEnvVar},
    {"Resources", "resources", F::kStruct, &kResourceRequirements},
    {"ResizePolicy", "resizePolicy", F::kRaw},
    {"RestartPolicy", "restartPolicy", F::kPtrString},
    {"RestartPolicyRules", "restartPolicyRules", F::kRaw},
    {"VolumeMounts", "volumeMounts", F::kStructList, &kVolumeMount},
    {"VolumeDevices", "volumeDevices", F::kRaw},
    {"LivenessProbe", "livenessProbe", F::kPtrStruct, &kProbe},
    {"ReadinessProbe", "readinessProbe", F::kPtrStruct, &kProbe},
    {"StartupProbe", "startupProbe", F::kPtrStruct, &kProbe},
    {"Lifecycle", "lifecycle", F::kRaw},
    {"TerminationMessagePath", "terminationMessagePath", F::kString},
    {"TerminationMessagePolicy", "terminationMessagePolicy", F::kString},
    {"ImagePullPolicy", "imagePullPolicy", F::kString},
    {"SecurityContext", "securityContext", F::kPtrStruct, &kSecurityContext},
    {"Stdin", "stdin", F::kBool},
    {"StdinOnce", "stdinOnce", F::kBool},
    {"TTY", "tty", F::kBool},
};
constexpr GoStruct kContainer{"v1.Container", "*v1.Container", kContainerFields};

constexpr GoField kOwnerReferenceFields[] = {
    {"APIVersion", "apiVersion", F::kString, nullptr, false},
    {"Kind", "kind", F::kString, nullptr, false},
    {"Name", "name", F::kString, nullptr, false},
    {"UID", "uid", F::kString, nullptr, false},
    {"Controller", "controller", F::kPtrBool},
    {"BlockOwnerDeletion", "blockOwnerDeletion", F::kPtrBool},
};
constexpr GoStruct kOwnerReference{"v1.OwnerReference", "*v1.OwnerReference",
                                   kOwnerReferenceFields};

constexpr GoField kObjectMetaFields[] = {
    {"Name", "name", F::kString},
    {"GenerateName", "generateName", F::kString},
    {"Namespace", "namespace", F::kString},
    {"SelfLink", "selfLink", F::kString},
    {"UID", "uid", F::kString},
    {"ResourceVersion", "resourceVersion", F::kString},
    {"Generation", "generation", F::kInt64},
    {"CreationTimestamp", "creationTimestamp", F::kTime, nullptr, false},
    {"DeletionTimestamp", "deletionTimestamp", F::kRaw},
    {"DeletionGracePeriodSeconds", "deletionGracePeriodSeconds", F::kPtrInt64},
    {"Labels", "labels", F::kStringMap},
    {"Annotations", "annotations", F::kStringMap},
    {"OwnerReferences", "ownerReferences", F::kStructList, &kOwnerReference},
    {"Finalizers", "finalizers", F::kStringList},
    {"ManagedFields", "managedFields", F::kRaw},
};
constexpr GoStruct kObjectMeta{"v1.ObjectMeta", "*v1.ObjectMeta", kObjectMetaFields};

constexpr GoField kLocalObjectReferenceFields[] = {
    {"Name", "name", F::kString},
};
constexpr GoStruct kLocalObjectReference{"v1.LocalObjectReference", "*v1.LocalObjectReference",
                                         kLocalObjectReferenceFields};

constexpr GoField kPodSpecFields[] = {
    {"Volumes", "volumes", F::kRaw},
    {"InitContainers", "initContainers", F::kStructList, &kContainer},
    {"Containers", "containers", F::kStructList, &kContainer, false},
    {"EphemeralContainers", "ephemeralContainers", F::kRaw},
    {"RestartPolicy", "restartPolicy", F::kString},
    {"TerminationGracePeriodSeconds", "terminationGracePeriodSeconds", F::kPtrInt64},
    {"ActiveDeadlineSeconds", "activeDeadlineSeconds", F::kPtrInt64},
    {"DNSPolicy", "dnsPolicy", F::kString},
    {"NodeSelector", "nodeSelector", F::kStringMap},
    {"ServiceAccountName", "serviceAccountName", F::kString},
    {"DeprecatedServiceAccount", "serviceAccount", F::kString},
    {"AutomountServiceAccountToken", "automountServiceAccountToken", F::kPtrBool},
    {"NodeName", "nodeName", F::kString},
    {"HostNetwork", "hostNetwork", F::kBool},
    {"HostPID", "hostPID", F::kBool},
    {"HostIPC", "hostIPC", F::kBool},
    {"ShareProcessNamespace", "shareProcessNamespace", F::kPtrBool},
    {"SecurityContext", "securityContext", F::kRaw},
    {"ImagePullSecrets", "imagePullSecrets", F::kStructList, &kLocalObjectReference},
    {"Hostname", "hostname", F::kString},
    {"Subdomain", "subdomain", F::kString},
    {"Affinity", "affinity", F::kRaw},
    {"SchedulerName", "schedulerName", F::kString},
    {"Tolerations", "tolerations", F::kRaw},
    {"HostAliases", "hostAliases", F::kRaw},
    {"PriorityClassName", "priorityClassName", F::kString},
    {"Priority", "priority", F::kPtrInt32},
    {"DNSConfig", "dnsConfig", F::kRaw},
    {"ReadinessGates", "readinessGates", F::kRaw},
    {"RuntimeClassName", "runtimeClassName", F::kPtrString},
    {"EnableServiceLinks", "enableServiceLinks", F::kPtrBool},
    {"PreemptionPolicy", "preemptionPolicy", F::kPtrString},
    {"Overhead", "overhead", F::kQuantityMap},
    {"TopologySpreadConstraints", "topologySpreadConstraints", F::kRaw},
    {"SetHostnameAsFQDN", "setHostnameAsFQDN", F::kPtrBool},
    {"OS", "os", F::kRaw},
    {"HostUsers", "hostUsers", F::kPtrBool},
    {"SchedulingGates", "schedulingGates", F::kRaw},
    {"ResourceClaims", "resourceClaims", F::kRaw},
    {"Resources", "resources", F::kRaw},
};
constexpr GoStruct kPodSpec{"v1.PodSpec", "*v1.PodSpec", kPodSpecFields};

// A struct whose type is outside the table (reached through a kRaw field).
constexpr GoStruct kUnknown{"struct {}", "*struct {}", {}};

// JSON name for a Go field name outside the table: Go's convention for Kubernetes types is the
// Go name with a lowered first word; initialisms lower as a whole.
std::string json_name_for(std::string_view go) {
  static constexpr std::pair<std::string_view, std::string_view> kInitialisms[] = {
      {"HTTPGet", "httpGet"},
      {"HTTPHeaders", "httpHeaders"},
      {"TCPSocket", "tcpSocket"},
      {"GRPC", "grpc"},
      {"UID", "uid"},
      {"IP", "ip"},
      {"IPs", "ips"},
      {"DNSPolicy", "dnsPolicy"},
      {"DNSConfig", "dnsConfig"},
      {"SELinuxOptions", "seLinuxOptions"},
      {"FSGroup", "fsGroup"},
      {"FSGroupChangePolicy", "fsGroupChangePolicy"},
      {"APIVersion", "apiVersion"},
      {"OS", "os"},
      {"TTY", "tty"},
      {"PodIP", "podIP"},
      {"HostIP", "hostIP"},
  };
  for (const auto& [g, j] : kInitialisms)
    if (g == go) return std::string(j);
  std::string out(go);
  if (!out.empty() && out[0] >= 'A' && out[0] <= 'Z')
    out[0] = static_cast<char>(out[0] - 'A' + 'a');
  return out;
}

const rapidjson::Value* member_of(const rapidjson::Value* json, std::string_view name) {
  if (json == nullptr || !json->IsObject()) return nullptr;
  const rapidjson::Value* m = api::find_member(*json, name);
  return m != nullptr && !m->IsNull() ? m : nullptr;
}

te::Value empty_string() {
  return te::Value::string_ref(std::string_view(), nullptr);
}

std::int64_t int_of(const rapidjson::Value* m) {
  if (m == nullptr || !m->IsNumber()) return 0;
  if (m->IsInt64()) return m->GetInt64();
  if (m->IsUint64()) return static_cast<std::int64_t>(m->GetUint64());
  return static_cast<std::int64_t>(m->GetDouble());
}

te::Value string_ref(const rapidjson::Value& m, const std::shared_ptr<const void>& owner) {
  return te::Value::string_ref(api::string_view_of(m), owner);
}

te::Value string_map_of(const rapidjson::Value* m) {
  if (m == nullptr || !m->IsObject()) return te::Value::typed_nil(te::Kind::kStringMap);
  auto out = std::make_shared<te::StringMap>();
  for (const auto& e : m->GetObject()) {
    if (e.value.IsString())
      out->set(api::string_view_of(e.name), std::string(api::string_view_of(e.value)));
    else
      out->set(api::string_view_of(e.name), api::to_json(e.value));
  }
  return te::Value::string_map(std::move(out));
}

te::Value generic_value(const rapidjson::Value* m, const std::shared_ptr<const void>& owner) {
  if (m == nullptr) return te::Value::nil();
  switch (m->GetType()) {
    case rapidjson::kNullType:
      return te::Value::nil();
    case rapidjson::kFalseType:
      return te::Value::boolean(false);
    case rapidjson::kTrueType:
      return te::Value::boolean(true);
    case rapidjson::kStringType:
      return string_ref(*m, owner);
    case rapidjson::kNumberType:
      if (m->IsInt64()) return te::Value::integer(m->GetInt64(), te::Kind::kInt64);
      return te::Value::float64(m->GetDouble());
    case rapidjson::kObjectType:
      return struct_view(m, kUnknown, owner);
    case rapidjson::kArrayType: {
      auto l = std::make_shared<te::List>();
      for (const auto& e : m->GetArray())
        l->items.push_back(generic_value(&e, owner));
      return te::Value::list(std::move(l));
    }
  }
  return te::Value::nil();
}

class StructView : public te::Object {
 public:
  StructView(const rapidjson::Value* json, const GoStruct& type, std::shared_ptr<const void> owner,
             bool pointer)
      : json_(json != nullptr && json->IsObject() ? json : nullptr),
        type_(type),
        owner_(std::move(owner)),
        pointer_(pointer) {}

  std::string_view go_type() const override { return pointer_ ? type_.go_ptr_type : type_.go_type; }
  std::string_view go_kind() const override { return pointer_ ? "ptr" : "struct"; }
  bool is_nil() const override { return pointer_ && json_ == nullptr; }

  std::optional<te::Value> field(std::string_view name) const override {
    for (auto& [f, v] : cache_)
      if (f == name) return v;
    te::Value v;
    if (const GoField* f = type_.find(name)) {
      v = value_of(*f);
    } else {
      // Not in the table: read generically rather than fail, so templates touching a field
      // this file does not list still see the pod's data.
      if (name.empty() || name[0] < 'A' || name[0] > 'Z') return std::nullopt;
      v = generic_value(member_of(json_, json_name_for(name)), owner_);
    }
    cache_.emplace_back(std::string(name), v);
    return v;
  }

  std::optional<te::Function> method(std::string_view name) const override {
    if (name != "MarshalJSON") return std::nullopt;
    const StructView* self = this;
    return te::Function(te::Signature{}, [self](te::Args) -> te::Result<te::Value> {
      if (self->json_ == nullptr) return te::Value::string(self->pointer_ ? "null" : "{}");
      if (&self->type_ == &kUnknown) return te::Value::string(api::to_json(*self->json_));
      return te::Value::string(go_json(*self->json_, self->type_));
    });
  }

  void format(std::string& out, bool, bool) const override {
    // Go prints a struct as {field values...}; templates never print pod structs, so the
    // JSON form (readable, unambiguous) stands in for it.
    if (json_ == nullptr)
      out += "{}";
    else
      api::append_json(out, *json_);
  }

 private:
  te::Value value_of(const GoField& f) const {
    const rapidjson::Value* m = member_of(json_, f.json);
    switch (f.type) {
      case F::kString:
        return m != nullptr && m->IsString() ? string_ref(*m, owner_) : empty_string();
      case F::kBool:
        return te::Value::boolean(m != nullptr && m->IsBool() && m->GetBool());
      case F::kInt32:
        return te::Value::integer(int_of(m), te::Kind::kInt32);
      case F::kInt64:
        return te::Value::integer(int_of(m), te::Kind::kInt64);
      case F::kPtrInt32:
        return m == nullptr ? te::Value::nil() : te::Value::integer(int_of(m), te::Kind::kInt32);
      case F::kPtrInt64:
        return m == nullptr ? te::Value::nil() : te::Value::integer(int_of(m), te::Kind::kInt64);
      case F::kPtrBool:
        return m == nullptr ? te::Value::nil() : te::Value::boolean(m->IsBool() && m->GetBool());
      case F::kPtrString:
        return m == nullptr || !m->IsString() ? te::Value::nil() : string_ref(*m, owner_);
      case F::kStringMap:
      case F::kQuantityMap:
        return string_map_of(m);
      case F::kStruct:
        return struct_view(m, *f.elem, owner_, false);
      case F::kPtrStruct:
        return struct_view(m, *f.elem, owner_, true);
      case F::kStructList: {
        if (m == nullptr || !m->IsArray()) {
          auto nil = te::Value::typed_nil(te::Kind::kList);
          return nil;
        }
        auto l = std::make_shared<te::List>();
        l->elem_type = std::string(f.elem->go_type);
        l->items.reserve(m->Size());
        for (const auto& e : m->GetArray())
          l->items.push_back(struct_view(&e, *f.elem, owner_, false));
        return te::Value::list(std::move(l));
      }
      case F::kStringList: {
        if (m == nullptr || !m->IsArray()) return te::Value::typed_nil(te::Kind::kList);
        auto l = std::make_shared<te::List>();
        l->elem_type = "string";
        for (const auto& e : m->GetArray())
          l->items.push_back(e.IsString() ? string_ref(e, owner_) : empty_string());
        return te::Value::list(std::move(l));
      }
      case F::kTime:
        return te::Value::nil();
      case F::kRaw:
        return generic_value(m, owner_);
    }
    return te::Value();
  }

  const rapidjson::Value* json_;
  const GoStruct& type_;
  std::shared_ptr<const void> owner_;
  bool pointer_;
  mutable std::vector<std::pair<std::string, te::Value>> cache_;
};

void append_key(std::string& out, bool& first, std::string_view name) {
  if (!first) out += ',';
  first = false;
  out += '"';
  out += name;
  out += "\":";
}

void append_number(std::string& out, const rapidjson::Value* m) {
  if (m == nullptr || !m->IsNumber()) {
    out += '0';
    return;
  }
  api::append_json(out, *m);
}

bool is_empty_string(const rapidjson::Value* m) {
  return m == nullptr || !m->IsString() || m->GetStringLength() == 0;
}

bool is_zero_number(const rapidjson::Value* m) {
  return m == nullptr || !m->IsNumber() || m->GetDouble() == 0;
}

// canonical_quantity of short texts, remembered per thread: an injection writes the same few
// quantities (the proxy's and the init container's requests and limits) pod after pod. A
// direct-mapped table: a text evicts the one in its slot.
struct QuantityMemo {
  static constexpr std::size_t kSlots = 64, kMaxText = 22;
  struct Slot {
    std::string text;
    std::optional<std::string> canonical;
    bool used = false;
  };
  Slot slots[kSlots];

  const std::optional<std::string>& get(std::string_view text) {
    std::size_t h = text.size();
    for (char c : text)
      h = h * 31 + static_cast<unsigned char>(c);
    Slot& s = slots[h % kSlots];
    if (!s.used || s.text != text) {
      s.text = text;
      s.canonical = canonical_quantity(text);
      s.used = true;
    }
    return s.canonical;
  }
};

void set_quantity(rapidjson::Value& v, api::Allocator& alloc) {
  std::string number;
  std::string_view text;
  if (v.IsString()) {
    text = api::string_view_of(v);
  } else if (v.IsNumber()) {
    number = api::to_json(v);
    text = number;
  } else {
    return;
  }
  // A string already canonical stays as it is; a number becomes the string it is written as.
  auto set = [&](const std::optional<std::string>& q) {
    if (q && (v.IsNumber() || *q != text))
      v.SetString(q->data(), static_cast<rapidjson::SizeType>(q->size()), alloc);
  };
  if (text.size() <= QuantityMemo::kMaxText) {
    thread_local QuantityMemo memo;
    set(memo.get(text));
  } else {
    set(canonical_quantity(text));
  }
}

// Values of a type outside the table: what encoding/json drops whatever the type (nil
// pointers/slices/maps, empty omitempty slices); quantities under their usual names.
void normalize_raw(rapidjson::Value& v, api::Allocator& alloc) {
  if (v.IsArray()) {
    for (auto& e : v.GetArray())
      normalize_raw(e, alloc);
    return;
  }
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
    std::string_view name = api::string_view_of(it->name);
    normalize_raw(it->value, alloc);
    if (name == "divisor" || name == "sizeLimit") set_quantity(it->value, alloc);
    if (it->value.IsNull() || (it->value.IsArray() && it->value.Empty()))
      it = v.EraseMember(it);
    else
      ++it;
  }
}

void normalize_struct(rapidjson::Value& v, const GoStruct& type, api::Allocator& alloc) {
  if (!v.IsObject()) return;
  for (auto it = v.MemberBegin(); it != v.MemberEnd();) {
    std::string_view name = api::string_view_of(it->name);
    rapidjson::Value& m = it->value;
    const GoField* f = nullptr;
    for (const GoField& candidate : type.fields) {
      if (candidate.json.size() == name.size() && candidate.json[0] == name[0] &&
          candidate.json == name) {
        f = &candidate;  // json names are unique within a struct
        break;
      }
    }
    bool drop = m.IsNull();
    if (!drop && f == nullptr) {
      normalize_raw(m, alloc);
    } else if (!drop) {
      switch (f->type) {
        case F::kString:
          drop = f->omitempty && m.IsString() && m.GetStringLength() == 0;
          break;
        case F::kBool:
          drop = f->omitempty && m.IsBool() && !m.GetBool();
          break;
        case F::kInt32:
        case F::kInt64:
          drop = f->omitempty && m.IsNumber() && m.GetDouble() == 0;
          break;
        case F::kStringMap:
        case F::kQuantityMap:
          if (m.IsObject()) {
            for (auto e = m.MemberBegin(); e != m.MemberEnd();) {
              if (e->value.IsNull()) {
                e = m.EraseMember(e);
                continue;
              }
              if (f->type == F::kQuantityMap) set_quantity(e->value, alloc);
              ++e;
            }
            drop = f->omitempty && m.MemberCount() == 0;
          }
          break;
        case F::kStruct:
        case F::kPtrStruct:
          normalize_struct(m, *f->elem, alloc);
          break;
        case F::kStructList:
          if (m.IsArray()) {
            for (auto& e : m.GetArray())
              normalize_struct(e, *f->elem, alloc);
            drop = f->omitempty && m.Empty();
          }
          break;
        case F::kStringList:
          drop = f->omitempty && m.IsArray() && m.Empty();
          break;
        case F::kRaw:
          normalize_raw(m, alloc);
          drop = m.IsArray() && m.Empty();
          break;
        default:
          break;
      }
    }
    if (drop)
      it = v.EraseMember(it);
    else
      ++it;
  }
  // A struct field (not a pointer) is always written, as {} when zero.
  if (!type.has_struct_fields) return;
  for (const GoField& f : type.fields) {
    if (f.type != F::kStruct || api::find_member(v, f.json) != nullptr) continue;
    v.AddMember(
        rapidjson::StringRef(f.json.data(), static_cast<rapidjson::SizeType>(f.json.size())),
        rapidjson::Value(rapidjson::kObjectType), alloc);
  }
}

}  // namespace

void normalize_go_pod(rapidjson::Value& pod, api::Allocator& alloc) {
  if (!pod.IsObject()) return;
  for (auto it = pod.MemberBegin(); it != pod.MemberEnd();) {
    std::string_view name = api::string_view_of(it->name);
    if (it->value.IsNull()) {
      it = pod.EraseMember(it);
      continue;
    }
    if (name == "metadata")
      normalize_struct(it->value, kObjectMeta, alloc);
    else if (name == "spec")
      normalize_struct(it->value, kPodSpec, alloc);
    else
      normalize_raw(it->value, alloc);
    ++it;
  }
}

const GoStruct& object_meta_type() {
  return kObjectMeta;
}
const GoStruct& pod_spec_type() {
  return kPodSpec;
}
const GoStruct& container_type() {
  return kContainer;
}

te::Value struct_view(const rapidjson::Value* json, const GoStruct& type,
                      std::shared_ptr<const void> owner, bool pointer) {
  return te::Value::object(std::make_shared<StructView>(json, type, std::move(owner), pointer));
}

void append_go_json(std::string& out, const rapidjson::Value& json, const GoStruct& type) {
  const rapidjson::Value* obj = json.IsObject() ? &json : nullptr;
  out += '{';
  bool first = true;
  for (const GoField& f : type.fields) {
    const rapidjson::Value* m = member_of(obj, f.json);
    switch (f.type) {
      case F::kString:
        if (f.omitempty && is_empty_string(m)) break;
        append_key(out, first, f.json);
        if (m != nullptr && m->IsString())
          api::append_json(out, *m);
        else
          out += "\"\"";
        break;
      case F::kBool: {
        bool b = m != nullptr && m->IsBool() && m->GetBool();
        if (f.omitempty && !b) break;
        append_key(out, first, f.json);
        out += b ? "true" : "false";
        break;
      }
      case F::kInt32:
      case F::kInt64:
        if (f.omitempty && is_zero_number(m)) break;
        append_key(out, first, f.json);
        append_number(out, m);
        break;
      case F::kPtrInt32:
      case F::kPtrInt64:
      case F::kPtrBool:
      case F::kPtrString:
      case F::kRaw:
        if (m == nullptr) break;
        append_key(out, first, f.json);
        api::append_json(out, *m);
        break;
      case F::kTime:
        append_key(out, first, f.json);
        if (m == nullptr)
          out += "null";
        else
          api::append_json(out, *m);
        break;
      case F::kStringMap:
      case F::kQuantityMap: {
        if (m == nullptr || !m->IsObject() || m->MemberCount() == 0) {
          if (f.omitempty) break;
          append_key(out, first, f.json);
          out += m != nullptr && m->IsObject() ? "{}" : "null";
          break;
        }
        append_key(out, first, f.json);
        std::vector<std::pair<std::string_view, const rapidjson::Value*>> entries;
        for (const auto& e : m->GetObject())
          entries.emplace_back(api::string_view_of(e.name), &e.value);
        std::stable_sort(entries.begin(), entries.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        out += '{';
        for (std::size_t i = 0; i < entries.size(); ++i) {
          if (i) out += ',';
          template_engine::funcs::append_json_string(out, entries[i].first, true);
          out += ':';
          // Go writes a resource.Quantity in canonical form ("3000m" is "3").
          const rapidjson::Value& q = *entries[i].second;
          std::optional<std::string> canonical;
          if (f.type == F::kQuantityMap && q.IsString())
            canonical = canonical_quantity(api::string_view_of(q));
          else if (f.type == F::kQuantityMap && q.IsNumber())
            canonical = canonical_quantity(api::to_json(q));
          if (canonical)
            template_engine::funcs::append_json_string(out, *canonical, true);
          else
            api::append_json(out, q);
        }
        out += '}';
        break;
      }
      case F::kStruct:
        append_key(out, first, f.json);
        if (m != nullptr) {
          append_go_json(out, *m, *f.elem);
        } else {
          static const rapidjson::Value kNull;
          append_go_json(out, kNull, *f.elem);
        }
        break;
      case F::kPtrStruct:
        if (m == nullptr) break;
        append_key(out, first, f.json);
        append_go_json(out, *m, *f.elem);
        break;
      case F::kStructList:
      case F::kStringList: {
        bool empty = m == nullptr || !m->IsArray() || m->Empty();
        if (empty && f.omitempty) break;
        append_key(out, first, f.json);
        if (m == nullptr || !m->IsArray()) {
          out += "null";
          break;
        }
        out += '[';
        bool first_item = true;
        for (const auto& e : m->GetArray()) {
          if (!first_item) out += ',';
          first_item = false;
          if (f.type == F::kStructList)
            append_go_json(out, e, *f.elem);
          else
            api::append_json(out, e);
        }
        out += ']';
        break;
      }
    }
  }
  out += '}';
}

std::string go_json(const rapidjson::Value& json, const GoStruct& type) {
  std::string out;
  append_go_json(out, json, type);
  return out;
}

std::string_view RecordObject::go_kind() const {
  return !go_type_.empty() && go_type_[0] == '*' ? "ptr" : "struct";
}

std::optional<te::Value> RecordObject::field(std::string_view name) const {
  for (const Field& f : fields_)
    if (f.name == name) return f.value;
  return std::nullopt;
}

std::optional<te::Function> RecordObject::method(std::string_view name) const {
  if (name != "MarshalJSON") return std::nullopt;
  const RecordObject* self = this;
  return te::Function(te::Signature{}, [self](te::Args) -> te::Result<te::Value> {
    std::string out = "{";
    bool first = true;
    for (const Field& f : self->fields_) {
      if (f.json_name.empty()) continue;
      if (f.omitempty && !te::truth(f.value)) continue;
      std::string item;
      if (!te::funcs::append_json(item, f.value, {})) return te::fail("json: unsupported value");
      append_key(out, first, f.json_name);
      out += item;
    }
    out += '}';
    return te::Value::string(std::move(out));
  });
}

void RecordObject::format(std::string& out, bool plus, bool) const {
  out += '{';
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    if (i) out += ' ';
    if (plus) {
      out += fields_[i].name;
      out += ':';
    }
    te::append_value(out, fields_[i].value);
  }
  out += '}';
}

}  // namespace meshop::inject
