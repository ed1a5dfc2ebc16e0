#include "operator/restart/policy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <map>

#include "api/json.hpp"
#include "api/label_selector.hpp"

namespace meshop::restart {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};

std::optional<int> parse_hhmm(std::string_view s) {
  if (s.size() != 5 || s[2] != ':') return std::nullopt;
  auto digit = [&](std::size_t i) { return s[i] >= '0' && s[i] <= '9' ? s[i] - '0' : -100; };
  int h = digit(0) * 10 + digit(1), m = digit(3) * 10 + digit(4);
  if (h < 0 || h > 23 || m < 0 || m > 59) return std::nullopt;
  return h * 60 + m;
}

struct UtcParts {
  int weekday;  // 0 = Sunday
  int minute;   // of the day
  SystemTime midnight;
};

UtcParts utc_parts(SystemTime t) {
  std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  UtcParts p;
  p.weekday = tm.tm_wday;
  p.minute = tm.tm_hour * 60 + tm.tm_min;
  p.midnight = std::chrono::floor<std::chrono::days>(t);
  return p;
}

bool day_listed(const std::vector<int>& days, int d) {
  return days.empty() || std::find(days.begin(), days.end(), d) != days.end();
}

}  // namespace

api::Result<CanaryPolicy> parse_canary(const rapidjson::Value& v, const std::string& path) {
  if (!v.IsObject()) return api::Error{path + ": expected an object"};
  CanaryPolicy c;
  for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
    std::string key = it->name.GetString();
    const rapidjson::Value& f = it->value;
    std::string field = path + "." + key;
    if (key == "count") {
      if (!f.IsInt()) return api::Error{field + ": expected an integer"};
      if (f.GetInt() < 1)
        return api::Error{field + ": must be at least 1, got " + std::to_string(f.GetInt())};
      c.count = f.GetInt();
    } else if (key == "selector") {
      if (!f.IsObject())
        return api::Error{field + ": expected a label selector (matchLabels, matchExpressions)"};
      auto s = api::LabelSelector::from_json(f, field);
      if (!s) return api::Error{s.message()};
      c.selector = std::move(*s);
    } else if (key == "soak") {
      if (!f.IsString()) return api::Error{field + ": expected a duration string such as 5m"};
      auto d = parse_go_duration(f.GetString());
      if (!d) return api::Error{field + ": " + d.message()};
      c.soak = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else {
      return api::Error{field + ": unknown field"};
    }
  }
  if (c.count && c.selector) return api::Error{path + ": set either count or selector, not both"};
  if (!c.count && !c.selector) return api::Error{path + ": set count or selector"};
  return c;
}

std::string_view mode_name(Mode m) {
  switch (m) {
    case Mode::kAuto:
      return "Auto";
    case Mode::kDryRun:
      return "DryRun";
    case Mode::kOff:
      return "Off";
  }
  return "Unknown";
}

std::string_view strategy_name(Strategy s) {
  return s == Strategy::kEvict ? "Evict" : "Rollout";
}

std::string_view version_skew_name(VersionSkew v) {
  switch (v) {
    case VersionSkew::kPatch:
      return "Patch";
    case VersionSkew::kMinor:
      return "Minor";
    case VersionSkew::kAny:
      return "Any";
  }
  return "Any";
}

std::optional<IstioVersion> parse_istio_version(std::string_view text) {
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.remove_prefix(1);
  int parts[3] = {0, 0, 0};
  int n = 0;
  std::size_t i = 0;
  while (n < 3) {
    std::size_t start = i;
    long long v = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9' && i - start < 6)
      v = v * 10 + (text[i++] - '0');
    if (i == start) break;
    parts[n++] = static_cast<int>(v);
    if (i < text.size() && text[i] == '.' && n < 3) {
      ++i;
      continue;
    }
    break;
  }
  if (n < 2) return std::nullopt;
  // What follows must not continue the number ("1.30x" is no version, "1.30-dev.x" is).
  if (i < text.size() && text[i] != '-' && text[i] != '+' && text[i] != '_') return std::nullopt;
  IstioVersion out{parts[0], parts[1], std::nullopt};
  if (n == 3) out.patch = parts[2];
  return out;
}

std::string version_of_image(std::string_view image) {
  std::size_t at = image.find('@');
  if (at != std::string_view::npos) image = image.substr(0, at);
  std::size_t colon = image.rfind(':');
  if (colon == std::string_view::npos || image.find('/', colon) != std::string_view::npos)
    return "";
  std::string_view tag = image.substr(colon + 1);
  auto v = parse_istio_version(tag);
  if (!v) return "";
  std::string out = std::to_string(v->major) + "." + std::to_string(v->minor);
  if (v->patch) out += "." + std::to_string(*v->patch);
  return out;
}

bool within_skew(const IstioVersion& from, const IstioVersion& to, VersionSkew skew) {
  switch (skew) {
    case VersionSkew::kAny:
      return true;
    case VersionSkew::kPatch:
      return from.major == to.major && from.minor == to.minor;
    case VersionSkew::kMinor:
      return from.major == to.major && std::abs(from.minor - to.minor) <= 1;
  }
  return true;
}

bool approval_matches(std::string_view value, std::string_view target_revision,
                      std::string_view target_version) {
  if (value.empty() || target_revision.empty()) return false;
  if (value == target_revision) return true;
  std::size_t at = value.find('@');
  return at != std::string_view::npos && value.substr(0, at) == target_revision &&
         !target_version.empty() && value.substr(at + 1) == target_version;
}

std::optional<std::string> version_gate(std::string_view current_version,
                                        std::string_view target_version, VersionSkew skew,
                                        bool approved) {
  if (skew == VersionSkew::kAny || approved) return std::nullopt;
  auto from = parse_istio_version(current_version);
  auto to = parse_istio_version(target_version);
  if (!from || !to || within_skew(*from, *to, skew)) return std::nullopt;
  return "Istio " + std::string(current_version) + " -> " + std::string(target_version) +
         " exceeds maxVersionSkew " + std::string(version_skew_name(skew)) +
         "; approve with meshop restart approve";
}

std::optional<SystemTime> stale_since_of(const rapidjson::Value& workload, std::string_view cause) {
  const rapidjson::Value* annotations = api::find(workload, "/metadata/annotations");
  if (annotations == nullptr) return std::nullopt;
  std::string value = api::string_at(*annotations, {kStaleSinceAnnotation});
  std::size_t space = value.find(' ');
  if (space == std::string::npos || std::string_view(value).substr(space + 1) != cause)
    return std::nullopt;
  return parse_rfc3339(std::string_view(value).substr(0, space));
}

std::string stale_since_value(SystemTime since, std::string_view cause) {
  return rfc3339(since) + " " + std::string(cause);
}

bool overdue(SystemTime since, const Policy& policy, SystemTime now) {
  return policy.max_staleness && now - since > *policy.max_staleness;
}

bool MaintenanceWindow::allows(SystemTime t) const {
  UtcParts p = utc_parts(t);
  if (start_minute == end_minute) return day_listed(days, p.weekday);  // the whole day
  if (start_minute < end_minute)
    return day_listed(days, p.weekday) && p.minute >= start_minute && p.minute < end_minute;
  // Spans midnight: open from start on a listed day, or before end on the day after one.
  if (p.minute >= start_minute) return day_listed(days, p.weekday);
  if (p.minute < end_minute) return day_listed(days, (p.weekday + 6) % 7);
  return false;
}

SystemTime MaintenanceWindow::next_open(SystemTime t) const {
  if (allows(t)) return t;
  // Windows open on minute boundaries: the first start at or after t within 8 days.
  UtcParts p = utc_parts(t);
  for (int d = 0; d <= 7; ++d) {
    SystemTime open = p.midnight + std::chrono::days(d) + std::chrono::minutes(start_minute);
    if (open >= t && allows(open)) return open;
  }
  return t + std::chrono::days(7);  // unreachable for a valid window
}

api::Result<std::chrono::nanoseconds> parse_go_duration(std::string_view text) {
  static const std::map<std::string_view, double> kUnits = {
      {"ns", 1}, {"us", 1e3}, {"µs", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"m", 60e9}, {"h", 3600e9}};
  if (text.empty()) return api::Error{"empty duration"};
  double total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'))
      ++i;
    if (start == i) return api::Error{"invalid duration \"" + std::string(text) + "\""};
    double number = std::stod(std::string(text.substr(start, i - start)));
    std::size_t unit_start = i;
    while (i < text.size() && !(text[i] >= '0' && text[i] <= '9') && text[i] != '.')
      ++i;
    auto unit = kUnits.find(text.substr(unit_start, i - unit_start));
    if (unit == kUnits.end())
      return api::Error{"invalid duration \"" + std::string(text) + "\": missing or unknown unit"};
    total += number * unit->second;
  }
  if (total > 9.2e18) return api::Error{"duration \"" + std::string(text) + "\" is too long"};
  return std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(total)));
}

api::Result<Policy> parse_policy(const rapidjson::Value* restarts) {
  Policy p;
  if (restarts == nullptr || restarts->IsNull()) return p;
  const std::string base = "spec.restarts";
  if (!restarts->IsObject()) return api::Error{base + ": expected an object"};
  for (auto it = restarts->MemberBegin(); it != restarts->MemberEnd(); ++it) {
    std::string key = it->name.GetString();
    const rapidjson::Value& v = it->value;
    std::string path = base + "." + key;
    if (key == "mode") {
      std::string m = v.IsString() ? v.GetString() : "";
      if (m == "Auto")
        p.mode = Mode::kAuto;
      else if (m == "DryRun")
        p.mode = Mode::kDryRun;
      else if (m == "Off")
        p.mode = Mode::kOff;
      else
        return api::Error{path + ": must be Auto, DryRun or Off"};
    } else if (key == "strategy") {
      std::string m = v.IsString() ? v.GetString() : "";
      if (m == "Rollout")
        p.strategy = Strategy::kRollout;
      else if (m == "Evict")
        p.strategy = Strategy::kEvict;
      else if (v.IsString())
        return api::Error{path + ": must be Rollout or Evict, got \"" + m + "\""};
      else
        return api::Error{path + ": must be Rollout or Evict (a string)"};
    } else if (key == "maxConcurrent" || key == "maxConcurrentPerNamespace") {
      if (!v.IsInt()) return api::Error{path + ": expected an integer"};
      if (v.GetInt() < 1)
        return api::Error{path + ": must be at least 1, got " + std::to_string(v.GetInt())};
      if (key == "maxConcurrent")
        p.max_concurrent = v.GetInt();
      else
        p.max_concurrent_per_namespace = v.GetInt();
    } else if (key == "rolloutTimeout") {
      if (!v.IsString()) return api::Error{path + ": expected a duration string such as 10m"};
      auto d = parse_go_duration(v.GetString());
      if (!d) return api::Error{path + ": " + d.message()};
      if (*d < 1s) return api::Error{path + ": must be at least 1s"};
      p.rollout_timeout = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else if (key == "minInterval") {
      if (!v.IsString()) return api::Error{path + ": expected a duration string such as 10m"};
      auto d = parse_go_duration(v.GetString());
      if (!d) return api::Error{path + ": " + d.message()};
      p.min_interval = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else if (key == "maxVersionSkew") {
      std::string m = v.IsString() ? v.GetString() : "";
      if (m == "Patch")
        p.max_version_skew = VersionSkew::kPatch;
      else if (m == "Minor")
        p.max_version_skew = VersionSkew::kMinor;
      else if (m == "Any")
        p.max_version_skew = VersionSkew::kAny;
      else if (v.IsString())
        return api::Error{path + ": must be Patch, Minor or Any, got \"" + m + "\""};
      else
        return api::Error{path + ": must be Patch, Minor or Any (a string)"};
    } else if (key == "maxStaleness") {
      if (!v.IsString()) return api::Error{path + ": expected a duration string such as 72h"};
      auto d = parse_go_duration(v.GetString());
      if (!d) return api::Error{path + ": " + d.message()};
      if (*d < 1s) return api::Error{path + ": must be at least 1s"};
      p.max_staleness = std::chrono::duration_cast<std::chrono::seconds>(*d);
    } else if (key == "restartAfterDeadline") {
      if (!v.IsBool()) return api::Error{path + ": expected true or false"};
      p.restart_after_deadline = v.GetBool();
    } else if (key == "canary") {
      auto c = parse_canary(v, path);
      if (!c) return c.error();
      p.canary = std::move(*c);
    } else if (key == "failurePolicy") {
      std::string f = v.IsString() ? v.GetString() : "";
      if (f == "Pause")
        p.failure_policy = FailurePolicy::kPause;
      else if (f == "Continue")
        p.failure_policy = FailurePolicy::kContinue;
      else
        return api::Error{path + ": must be Pause or Continue"};
    } else if (key == "includeTemplateChanges") {
      if (!v.IsBool()) return api::Error{path + ": expected true or false"};
      p.include_template_changes = v.GetBool();
    } else if (key == "maintenanceWindow") {
      if (!v.IsObject()) return api::Error{path + ": expected an object"};
      MaintenanceWindow w;
      for (const char* field : {"start", "end"}) {
        std::string s = api::string_at(v, {field});
        auto minute = parse_hhmm(s);
        if (!minute)
          return api::Error{path + "." + field + ": expected HH:MM (UTC), got \"" + s + "\""};
        (std::string_view(field) == "start" ? w.start_minute : w.end_minute) = *minute;
      }
      if (const rapidjson::Value* days = api::find_member(v, "days"); days != nullptr) {
        if (!days->IsArray()) return api::Error{path + ".days: expected a list"};
        for (rapidjson::SizeType i = 0; i < days->Size(); ++i) {
          std::string d = (*days)[i].IsString() ? (*days)[i].GetString() : "";
          auto found = std::find(std::begin(kDays), std::end(kDays), d);
          if (found == std::end(kDays))
            return api::Error{path + ".days[" + std::to_string(i) + "]: expected Mon..Sun, got \"" +
                              d + "\""};
          w.days.push_back(static_cast<int>(found - std::begin(kDays)));
        }
      }
      p.maintenance_window = std::move(w);
    } else {
      return api::Error{path + ": unknown field"};
    }
  }
  return p;
}

std::string restart_cause(const WorkloadPlan& plan, std::string_view detail_key) {
  std::string cause = plan.reason ? std::string(reason_name(*plan.reason)) : "None";
  cause += "/" + (plan.target_revision.empty() ? std::string("none") : plan.target_revision);
  if (!detail_key.empty()) cause += "/" + std::string(detail_key);
  return cause;
}

bool already_restarted_for(const rapidjson::Value& workload, std::string_view cause) {
  const char* pointer = api::string_at(workload, {"kind"}) == "CronJob"
                            ? "/spec/jobTemplate/spec/template/metadata/annotations"
                            : "/spec/template/metadata/annotations";
  const rapidjson::Value* annotations = api::find(workload, pointer);
  return annotations != nullptr && api::string_at(*annotations, {kRestartCauseAnnotation}) == cause;
}

std::string go_duration(std::chrono::seconds d) {
  long long s = d.count();
  if (s == 0) return "0s";
  std::string out;
  if (s >= 3600) out += std::to_string(s / 3600) + "h";
  if (s % 3600 >= 60) out += std::to_string(s % 3600 / 60) + "m";
  if (s % 60 != 0) out += std::to_string(s % 60) + "s";
  return out;
}

std::optional<LastRestart> last_restart_of(const rapidjson::Value& workload) {
  const char* pointer = api::string_at(workload, {"kind"}) == "CronJob"
                            ? "/spec/jobTemplate/spec/template/metadata/annotations"
                            : "/spec/template/metadata/annotations";
  const rapidjson::Value* annotations = api::find(workload, pointer);
  if (annotations == nullptr) return std::nullopt;
  std::string cause = api::string_at(*annotations, {kRestartCauseAnnotation});
  if (cause.empty()) return std::nullopt;
  auto at = parse_rfc3339(api::string_at(*annotations, {kRestartedAtAnnotation}));
  if (!at) return std::nullopt;
  return LastRestart{*at, cause};
}

std::optional<std::string> flap_deferral(const std::optional<LastRestart>& last,
                                         const Policy& policy, SystemTime now) {
  if (!last || policy.min_interval <= std::chrono::seconds(0)) return std::nullopt;
  SystemTime next = last->at + policy.min_interval;
  if (now >= next) return std::nullopt;
  return "restarted at " + rfc3339(last->at) + " for " + last->cause + "; next at " +
         rfc3339(next) + " (minInterval " + go_duration(policy.min_interval) + ")";
}

std::string restart_patch(std::string_view cause, SystemTime now,
                          std::string_view resource_version) {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  rapidjson::Value annotations(rapidjson::kObjectType);
  annotations.AddMember(api::make_string(kRestartedAtAnnotation, a),
                        api::make_string(rfc3339(now), a), a);
  annotations.AddMember(api::make_string(kRestartCauseAnnotation, a), api::make_string(cause, a),
                        a);
  rapidjson::Value meta(rapidjson::kObjectType);
  meta.AddMember("annotations", annotations, a);
  rapidjson::Value tmpl(rapidjson::kObjectType);
  tmpl.AddMember("metadata", meta, a);
  rapidjson::Value spec(rapidjson::kObjectType);
  spec.AddMember("template", tmpl, a);
  if (!resource_version.empty()) {
    rapidjson::Value object_meta(rapidjson::kObjectType);
    object_meta.AddMember("resourceVersion", api::make_string(resource_version, a), a);
    d.AddMember("metadata", object_meta, a);
  }
  d.AddMember("spec", spec, a);
  return api::to_json(d);
}

bool opted_out(const rapidjson::Value& workload, const rapidjson::Value* namespace_object) {
  auto says_false = [](const rapidjson::Value& o) {
    return api::string_at(o, {"metadata", "annotations", kOptOutAnnotation}) == "false";
  };
  return says_false(workload) || (namespace_object != nullptr && says_false(*namespace_object));
}

std::string blocking_pdb(const std::vector<const rapidjson::Value*>& pdbs,
                         const rapidjson::Value* pod_labels) {
  for (const rapidjson::Value* pdb : pdbs) {
    const rapidjson::Value* sel = api::find(*pdb, "/spec/selector");
    if (sel == nullptr) continue;  // a PDB without selector selects nothing (policy/v1)
    auto selector = api::LabelSelector::from_json(*sel, "spec.selector");
    if (!selector || !selector->matches(pod_labels)) continue;
    const rapidjson::Value* allowed = api::find(*pdb, "/status/disruptionsAllowed");
    if (allowed == nullptr || !allowed->IsInt() || allowed->GetInt() <= 0)
      return api::string_at(*pdb, {"metadata", "name"});
  }
  return {};
}

std::vector<std::size_t> admit(const std::vector<std::string>& candidate_namespaces,
                               const std::vector<std::string>& in_progress_namespaces,
                               const Policy& policy) {
  std::vector<std::size_t> out;
  std::map<std::string, int> per_ns;
  for (const std::string& ns : in_progress_namespaces)
    ++per_ns[ns];
  int running = static_cast<int>(in_progress_namespaces.size());
  for (std::size_t i = 0; i < candidate_namespaces.size(); ++i) {
    if (running >= policy.max_concurrent) break;
    const std::string& ns = candidate_namespaces[i];
    if (policy.max_concurrent_per_namespace && per_ns[ns] >= *policy.max_concurrent_per_namespace)
      continue;
    out.push_back(i);
    ++per_ns[ns];
    ++running;
  }
  return out;
}

}  // namespace meshop::restart
