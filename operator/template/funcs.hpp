// The function libraries behind default_functions(): sprig v3.3.0's TxtFuncMap
// (funcs_sprig.cpp and funcs_sprig_*.cpp: all of its names, the template differential checks
// that none is missing), meshop's Helm-style extras
// (`required`, `fromYaml`) and Istio's injection FuncMap (pkg/kube/inject/template.go), which
// overrides sprig's indent, contains, env and omit. Each add_* call adds (or replaces) entries, so
// the registration order is Go's `Funcs(sprig).Funcs(extras).Funcs(istio)`.
//
// Thread safety: the functions are pure, except `set`/`unset`/`merge`/`mergeOverwrite`,
// which mutate their map argument exactly as sprig does, `env`/`expandenv`, which read the
// process environment, the random functions (OpenSSL's CSPRNG), `now` and the date functions
// given no date (the clock, see go_time.hpp), and `getHostByName` (a blocking DNS lookup).
#pragma once

#include "operator/template/functions.hpp"

namespace meshop::template_engine {

void add_sprig_functions(FunctionMap& fm);
// sprig's regular-expression functions (funcs_regex.cpp), part of TxtFuncMap.
void add_regex_functions(FunctionMap& fm);
// All of sprig v3.3.0's TxtFuncMap that meshop defines: add_sprig_functions, the regex
// functions and the funcs_sprig_*.cpp families (what Helm starts its function map from).
void add_sprig_txt_func_map(FunctionMap& fm);
void add_extra_functions(FunctionMap& fm);
void add_istio_functions(FunctionMap& fm);

}  // namespace meshop::template_engine
