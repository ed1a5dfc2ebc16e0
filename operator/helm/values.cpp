// Helm's value coalescing (pkg/chart/common/util/coalesce.go, non-merge mode).
#include "operator/helm/render.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::helm {
namespace {

using template_engine::Kind;
using template_engine::Map;
using template_engine::Value;

bool is_table(const Value& v) {
  return v.kind() == Kind::kMap && v.as_map() != nullptr;
}

// coalesceTablesFullKey: fills `dst` (the override side) from `src` (the defaults); a key the
// override sets to null is deleted, maps merge recursively, anything else keeps the override.
void coalesce_tables(Map& dst, const Map& src) {
  for (const auto& [key, val] : src.entries()) {
    Value* dv = dst.find(key);
    if (dv != nullptr && dv->is_nil()) {
      dst.erase(key);
    } else if (dv == nullptr) {
      dst.set(key, template_engine::funcs::deep_copy(val));
    } else if (is_table(val) && is_table(*dv)) {
      coalesce_tables(*dv->as_map(), *val.as_map());
    }
  }
}

// coalesceGlobals: the parent's globals flow into the subchart's, the parent winning for
// scalars and merging into the subchart's maps.
void coalesce_globals(Map& sub, const Map& parent) {
  const Value* pg = parent.find("global");
  if (pg == nullptr || !is_table(*pg)) return;
  Value* sg = sub.find("global");
  if (sg == nullptr || !is_table(*sg)) {
    sub.set("global", Value::map(std::make_shared<Map>()));
    sg = sub.find("global");
  }
  Map& dg = *sg->as_map();
  for (const auto& [key, val] : pg->as_map()->entries()) {
    Value* dv = dg.find(key);
    if (dv != nullptr && is_table(*dv) && is_table(val)) {
      // The subchart's own global map keeps its keys; the parent's fill the rest.
      auto copy = template_engine::funcs::deep_copy(val);
      Map& merged = *copy.as_map();
      for (const auto& [k, v] : dv->as_map()->entries())
        if (merged.find(k) == nullptr) merged.set(k, v);
      dg.set(key, copy);
    } else {
      dg.set(key, template_engine::funcs::deep_copy(val));
    }
  }
}

void coalesce(const Chart& chart, Map& v) {
  // coalesceValues: the chart's values.yaml under the override.
  if (is_table(chart.values)) {
    for (const auto& [key, val] : chart.values.as_map()->entries()) {
      Value* cur = v.find(key);
      if (cur == nullptr) {
        v.set(key, template_engine::funcs::deep_copy(val));
      } else if (cur->is_nil()) {
        v.erase(key);
      } else if (is_table(*cur) && is_table(val)) {
        coalesce_tables(*cur->as_map(), *val.as_map());
      }
    }
  }
  // coalesceDeps.
  for (const Chart& sub : chart.dependencies) {
    Value* sv = v.find(sub.name);
    if (sv == nullptr || !is_table(*sv)) {
      v.set(sub.name, Value::map(std::make_shared<Map>()));
      sv = v.find(sub.name);
    }
    coalesce_globals(*sv->as_map(), v);
    coalesce(sub, *sv->as_map());
  }
}

}  // namespace

Value coalesce_values(const Chart& chart, const Value& overrides) {
  Value v = is_table(overrides) ? template_engine::funcs::deep_copy(overrides)
                                : Value::map(std::make_shared<Map>());
  coalesce(chart, *v.as_map());
  return v;
}

}  // namespace meshop::helm
