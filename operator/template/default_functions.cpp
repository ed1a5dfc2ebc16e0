// default_functions(): what Istio's injector registers, in Go's order:
// Funcs(sprig.TxtFuncMap()) then meshop's Helm-style extras, then Funcs(InjectionFuncmap),
// so Istio's indent, contains, env and omit replace sprig's.
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/functions.hpp"

namespace meshop::template_engine {

void add_sprig_txt_func_map(FunctionMap& fm) {
  add_sprig_functions(fm);
  add_regex_functions(fm);
  // The rest of sprig's TxtFuncMap (funcs_sprig_*.cpp).
  sprig::add_sprig_string_functions(fm);
  sprig::add_sprig_numeric_functions(fm);
  sprig::add_sprig_url_functions(fm);
  sprig::add_sprig_crypto_functions(fm);
  sprig::add_sprig_random_functions(fm);
  sprig::add_sprig_cert_functions(fm);
  sprig::add_sprig_date_functions(fm);
}

const FunctionMap& default_functions() {
  static const FunctionMap functions = [] {
    FunctionMap fm;
    add_sprig_txt_func_map(fm);
    add_extra_functions(fm);
    add_istio_functions(fm);
    return fm;
  }();
  return functions;
}

}  // namespace meshop::template_engine
