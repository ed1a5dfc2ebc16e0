// Internal: Go text/template's builtin functions (funcs.go) on Values. Arguments arrive as
// the executor evaluated them for `reflect.Value` / `...any` parameters.
#pragma once

#include <string>

#include "operator/template/ast.hpp"
#include "operator/template/functions.hpp"

namespace meshop::template_engine::detail {

// All builtins except and/or (short-circuit, in the executor) and call.
Result<Value> call_builtin(Builtin b, Args args);
// `call`: our values never hold Go funcs, so this reports Go's errors for the callee.
Result<Value> builtin_call(const std::string& callee, Args args);

// The escapers, exposed for tests and the function libraries.
std::string html_escape(std::string_view s);
std::string js_escape(std::string_view s);
std::string url_query_escape(std::string_view s);

}  // namespace meshop::template_engine::detail
