// sprig v3.3.0's urlParse and urlJoin: Go's net/url Parse and URL.String as sprig uses them.
// urlParse returns the dict {scheme, host, hostname, path, query, opaque, fragment,
// userinfo} (path and fragment unescaped, userinfo re-escaped); a URL Go rejects fails
// with sprig's panic text "unable to parse url: parse \"...\": reason". urlJoin builds the
// URL from such a dict; a key whose value is not a string fails as sprig panics.
// Not modelled: IPv6 zone identifiers ("%25" inside brackets) are accepted as written.
#include "operator/template/funcs.hpp"
#include "operator/template/funcs_sprig_common.hpp"
#include "operator/template/funcs_support.hpp"

namespace meshop::template_engine::sprig {

namespace {

enum class Mode { kPath, kHost, kUserPassword, kFragment };

bool should_escape(unsigned char c, Mode mode) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
  if (mode == Mode::kHost &&
      std::string_view("!$&'()*+,;=:[]<>\"").find(static_cast<char>(c)) != std::string_view::npos)
    return false;
  switch (c) {
    case '-':
    case '_':
    case '.':
    case '~':
      return false;
    case '$':
    case '&':
    case '+':
    case ',':
    case '/':
    case ':':
    case ';':
    case '=':
    case '?':
    case '@':
      switch (mode) {
        case Mode::kPath:
          return c == '?';
        case Mode::kUserPassword:
          return c == '@' || c == '/' || c == '?' || c == ':';
        case Mode::kFragment:
          return false;
        case Mode::kHost:
          break;
      }
  }
  if (mode == Mode::kFragment && (c == '!' || c == '(' || c == ')' || c == '*')) return false;
  return true;
}

std::string escape(std::string_view s, Mode mode) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (should_escape(c, mode)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

int unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> unescape(std::string_view s, Mode mode) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() + 0 || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0) {
        std::string_view bad = s.substr(i, 3);
        return fail("invalid URL escape " + go_quote(bad));
      }
      if (mode == Mode::kHost && unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25")
        return fail("invalid URL escape " + go_quote(s.substr(i, 3)));
      out += static_cast<char>(unhex(s[i + 1]) << 4 | unhex(s[i + 2]));
      i += 2;
      continue;
    }
    if (mode == Mode::kHost && static_cast<unsigned char>(c) < 0x80 &&
        should_escape(static_cast<unsigned char>(c), mode))
      return fail("invalid character " + go_quote(s.substr(i, 1)) + " in host name");
    out += c;
  }
  return out;
}

bool valid_optional_port(std::string_view port) {
  if (port.empty()) return true;
  if (port[0] != ':') return false;
  for (char c : port.substr(1))
    if (c < '0' || c > '9') return false;
  return true;
}

bool valid_userinfo(std::string_view s) {
  for (unsigned char c : s) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) continue;
    if (std::string_view("-._:~!$&'()*+,;=%@").find(static_cast<char>(c)) == std::string_view::npos)
      return false;
  }
  return true;
}

struct Url {
  std::string scheme, opaque, host, path, raw_query, fragment;
  bool has_user = false, has_password = false, force_query = false, omit_host = false;
  std::string username, password;

  std::string userinfo() const {
    if (!has_user) return "";
    std::string s = escape(username, Mode::kUserPassword);
    if (has_password) s += ":" + escape(password, Mode::kUserPassword);
    return s;
  }
};

Result<std::string> parse_host(std::string_view host) {
  if (host.starts_with("[")) {
    std::size_t i = host.rfind(']');
    if (i == std::string_view::npos) return fail("missing ']' in host");
    std::string_view port = host.substr(i + 1);
    if (!valid_optional_port(port)) return fail("invalid port " + go_quote(port) + " after host");
  } else if (std::size_t i = host.rfind(':'); i != std::string_view::npos) {
    std::string_view port = host.substr(i);
    if (!valid_optional_port(port)) return fail("invalid port " + go_quote(port) + " after host");
  }
  return unescape(host, Mode::kHost);
}

Result<bool> parse_authority(Url& u, std::string_view authority) {
  std::size_t at = authority.rfind('@');
  auto host = parse_host(at == std::string_view::npos ? authority : authority.substr(at + 1));
  if (!host) return fail(host.error());
  u.host = *host;
  if (at == std::string_view::npos) return true;
  std::string_view info = authority.substr(0, at);
  if (!valid_userinfo(info)) return fail("net/url: invalid userinfo");
  u.has_user = true;
  std::size_t colon = info.find(':');
  auto name = unescape(info.substr(0, colon), Mode::kUserPassword);
  if (!name) return fail(name.error());
  u.username = *name;
  if (colon != std::string_view::npos) {
    auto pw = unescape(info.substr(colon + 1), Mode::kUserPassword);
    if (!pw) return fail(pw.error());
    u.password = *pw;
    u.has_password = true;
  }
  return true;
}

// url.Parse; the error is Go's *url.Error text.
Result<Url> parse_url(std::string_view raw) {
  auto wrap = [](std::string_view what, const std::string& err) -> Failure {
    return fail("parse " + go_quote(what) + ": " + err);
  };
  std::size_t hash = raw.find('#');
  std::string_view rest = raw.substr(0, hash);
  const std::string_view u_text = rest;
  Url u;
  for (unsigned char c : rest)
    if (c < 0x20 || c == 0x7f) return wrap(u_text, "net/url: invalid control character in URL");
  if (rest == "*") {
    u.path = "*";
  } else {
    // getScheme
    for (std::size_t i = 0; i < rest.size(); ++i) {
      char c = rest[i];
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
      if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
        if (i == 0) break;
        continue;
      }
      if (c == ':') {
        if (i == 0) return wrap(u_text, "missing protocol scheme");
        u.scheme = funcs::go_to_lower(rest.substr(0, i));
        rest = rest.substr(i + 1);
      }
      break;
    }
    std::size_t q = rest.find('?');
    if (rest.ends_with("?") && q == rest.size() - 1) {
      u.force_query = true;
      rest.remove_suffix(1);
    } else if (q != std::string_view::npos) {
      u.raw_query = std::string(rest.substr(q + 1));
      rest = rest.substr(0, q);
    }
    bool done = false;
    if (!rest.starts_with("/")) {
      if (!u.scheme.empty()) {
        u.opaque = std::string(rest);
        done = true;
      } else if (rest.substr(0, rest.find('/')).find(':') != std::string_view::npos) {
        return wrap(u_text, "first path segment in URL cannot contain colon");
      }
    }
    if (!done) {
      if ((!u.scheme.empty() || !rest.starts_with("///")) && rest.starts_with("//")) {
        std::string_view authority = rest.substr(2);
        rest = {};
        if (std::size_t i = authority.find('/'); i != std::string_view::npos) {
          rest = authority.substr(i);
          authority = authority.substr(0, i);
        }
        auto ok = parse_authority(u, authority);
        if (!ok) return wrap(u_text, ok.message());
      } else if (!u.scheme.empty() && rest.starts_with("/")) {
        u.omit_host = true;
      }
      auto p = unescape(rest, Mode::kPath);
      if (!p) return wrap(u_text, p.message());
      u.path = *p;
    }
  }
  if (hash != std::string_view::npos) {
    auto f = unescape(raw.substr(hash + 1), Mode::kFragment);
    if (!f) return wrap(raw, f.message());
    u.fragment = *f;
  }
  return u;
}

// URL.String.
std::string url_string(const Url& u) {
  std::string out;
  if (!u.scheme.empty()) out += u.scheme + ":";
  if (!u.opaque.empty()) {
    out += u.opaque;
  } else {
    if (!u.scheme.empty() || !u.host.empty() || u.has_user) {
      if (!(u.omit_host && u.host.empty() && !u.has_user)) {
        if (!u.host.empty() || !u.path.empty() || u.has_user) out += "//";
        if (u.has_user) out += u.userinfo() + "@";
        if (!u.host.empty()) out += escape(u.host, Mode::kHost);
      }
    }
    std::string path = escape(u.path, Mode::kPath);
    if (!path.empty() && path[0] != '/' && !u.host.empty()) out += '/';
    if (out.empty() && path.substr(0, path.find('/')).find(':') != std::string::npos) out += "./";
    out += path;
  }
  if (u.force_query || !u.raw_query.empty()) out += "?" + u.raw_query;
  if (!u.fragment.empty()) out += "#" + escape(u.fragment, Mode::kFragment);
  return out;
}

std::string hostname(std::string_view host) {
  std::size_t colon = host.rfind(':');
  if (colon != std::string_view::npos && valid_optional_port(host.substr(colon)))
    host = host.substr(0, colon);
  if (host.starts_with("[") && host.ends_with("]")) host = host.substr(1, host.size() - 2);
  return std::string(host);
}

}  // namespace

void add_sprig_url_functions(FunctionMap& fm) {
  fm.add("urlParse", fixed({kStr}), [](Args a) -> Result<Value> {
    auto u = parse_url(a[0].as_string());
    if (!u) return fail("unable to parse url: " + u.message());
    auto m = std::make_shared<Map>();
    m->set("scheme", str(u->scheme));
    m->set("host", str(u->host));
    m->set("hostname", str(hostname(u->host)));
    m->set("path", str(u->path));
    m->set("query", str(u->raw_query));
    m->set("opaque", str(u->opaque));
    m->set("fragment", str(u->fragment));
    m->set("userinfo", str(u->userinfo()));
    return Value::map(std::move(m));
  });
  fm.add("urlJoin", fixed({ParamType::map()}), [](Args a) -> Result<Value> {
    const Map* d = a[0].as_map();
    auto get = [&](std::string_view key) -> Result<std::string> {
      const Value* v = d ? d->find(key) : nullptr;
      if (v == nullptr) return std::string();
      if (v->is_nil_or_invalid())
        return fail("runtime error: invalid memory address or nil pointer dereference");
      if (v->kind() != Kind::kString)
        return fail("unable to parse " + std::string(key) + " key, must be of type string, but " +
                    std::string(go_kind_name(*v)) + " found");
      return std::string(v->as_string());
    };
    Url u;
    for (auto [key, field] : {std::pair<std::string_view, std::string*>{"scheme", &u.scheme},
                              {"host", &u.host},
                              {"path", &u.path},
                              {"query", &u.raw_query},
                              {"opaque", &u.opaque},
                              {"fragment", &u.fragment}}) {
      auto v = get(key);
      if (!v) return fail(v.error());
      *field = *v;
    }
    auto info = get("userinfo");
    if (!info) return fail(info.error());
    if (!info->empty()) {
      auto tmp = parse_url("proto://" + *info + "@host");
      if (!tmp) return fail("unable to parse userinfo in dict: " + tmp.message());
      u.has_user = tmp->has_user;
      u.has_password = tmp->has_password;
      u.username = tmp->username;
      u.password = tmp->password;
    }
    return str(url_string(u));
  });
}

}  // namespace meshop::template_engine::sprig
