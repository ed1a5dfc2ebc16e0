#!/usr/bin/env python3
"""Writes the tables of operator/manifest/k8s_values.hpp: for every bundled Istio version, the
spec.values fields that istioctl decodes strictly as Kubernetes types, and those types.

Which fields, and as which type, is read from the version's own validation
(operator/pkg/apis/validation/validation.go, validateValues: each
runKube(values.GetA().GetB(), &corev1.T{}, ...) / runKubeList(...) call), the getters mapped to
the values field names through operator/pkg/apis/values_types.pb.go. The types themselves come
from the k8s.io/api and k8s.io/apimachinery modules that version's go.mod requires (Go module
cache): the messages of their generated.proto files give the fields and their types, types.go
gives each field's JSON name and the embedded (json:",inline") structs. Types with their own
UnmarshalJSON (Quantity, IntOrString, Time, ...) must be ones the C++ side knows (SPECIAL); any
other makes the build fail, so a new one is noticed.

Usage: k8s-values-schema.py OUT.cpp VERSION=ISTIO_MODULE_DIR:K8S_API_DIR:K8S_APIMACHINERY_DIR...
(hack/k8s-values-schema.sh finds the directories). The output is never committed.
"""
import os
import re
import sys

# Messages whose Go types decode themselves (UnmarshalJSON) -> Kind in k8s_values.hpp.
SPECIAL = {
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "kQuantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "kIntOrString",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "kTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "kMicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration": "kDuration",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1": "kRaw",
    "k8s.io.apimachinery.pkg.runtime.RawExtension": "kRaw",
}
SCALARS = {"string": "kString", "bool": "kBool", "int32": "kInt32", "int64": "kInt64",
           "uint32": "kUint32", "uint64": "kUint64", "double": "kDouble", "float": "kDouble",
           "bytes": "kBytes"}


class Module:
    """The generated.proto messages and types.go JSON facts of the k8s packages used."""

    def __init__(self, api_dir, machinery_dir):
        self.roots = {"k8s.io.api.": api_dir, "k8s.io.apimachinery.": machinery_dir}
        self.messages = {}  # full proto name -> [(name, label, type, map_value_type)]
        self.json = {}  # (full proto name, proto field) -> json name or "" (inline)
        self.type_meta = set()  # messages whose Go struct embeds metav1.TypeMeta
        self.unmarshalers = set()  # messages whose Go type has UnmarshalJSON
        self.loaded = set()

    def package_dir(self, package):
        for prefix, root in self.roots.items():
            if package.startswith(prefix):
                rest = package[len(prefix):]
                return os.path.join(root, rest.replace(".", "/"))
        raise SystemExit("k8s-values-schema: no module for proto package " + package)

    def load(self, package):
        if package in self.loaded:
            return
        self.loaded.add(package)
        d = self.package_dir(package)
        proto = open(os.path.join(d, "generated.proto")).read()
        for name, body in re.findall(r"^message (\w+) \{\n(.*?)^\}", proto, re.M | re.S):
            fields = []
            for line in body.split("\n"):
                m = re.match(r"^  (optional|repeated) ([\w.]+) (\w+) = \d+;", line)
                if m:
                    fields.append((m.group(3), m.group(1), m.group(2), None))
                    continue
                m = re.match(r"^  map<string, ([\w.]+)> (\w+) = \d+;", line)
                if m:
                    fields.append((m.group(2), "map", m.group(1), None))
            self.messages[package + "." + name] = fields
        for path in sorted(os.listdir(d)):
            if not path.endswith(".go") or path.endswith("_test.go"):
                continue
            text = open(os.path.join(d, path)).read()
            for t in re.findall(r"^func \(\w+ \*?(\w+)\) UnmarshalJSON\(", text, re.M):
                self.unmarshalers.add(package + "." + t)
            for sname, body in re.findall(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
                full = package + "." + sname
                for line in body.split("\n"):
                    tag = re.search(r"`(.*)`", line)
                    if not tag:
                        continue
                    j = re.search(r'json:"([^"]*)"', tag.group(1))
                    p = re.search(r'protobuf:"[^"]*name=(\w+)', tag.group(1))
                    if j is None:
                        continue
                    jname = j.group(1).split(",")[0]
                    inline = ",inline" in j.group(1)
                    if p is not None:
                        self.json[(full, p.group(1))] = "" if inline else jname
                    elif inline and re.match(r"^\tmetav1\.TypeMeta\b", line):
                        self.type_meta.add(full)

    def resolve(self, package, t):
        """A field type of `package` -> (kind, full message name or None)."""
        if t in SCALARS:
            return SCALARS[t], None
        full = t.lstrip(".") if t.startswith(".") else package + "." + t
        if full in SPECIAL:
            return SPECIAL[full], None
        self.load(full.rsplit(".", 1)[0])
        if full in self.unmarshalers:
            raise SystemExit("k8s-values-schema: %s decodes itself (UnmarshalJSON) and is not "
                             "one of SPECIAL; teach k8s_values.cpp its decoding" % full)
        if full not in self.messages:
            raise SystemExit("k8s-values-schema: message %s not found" % full)
        return "kObject", full

    def fields_of(self, full):
        """The JSON fields of a message, inline ones flattened: [(json, kind, label, msg,
        embedded)], embedded when the field is one of an embedded (json:",inline") struct's."""
        package = full.rsplit(".", 1)[0]
        out = []
        if full in self.type_meta:
            out += [("apiVersion", "kString", "optional", None, True), ("kind", "kString", "optional", None, True)]
        for name, label, t, _ in self.messages[full]:
            kind, msg = self.resolve(package, t)
            jname = self.json.get((full, name), name)
            if jname == "" and kind == "kObject" and label == "optional":
                out += [f[:4] + (True,) for f in self.fields_of(msg)]
                continue
            out.append((jname or name, kind, label, msg, False))
        return out


def values_fields(pb_go):
    """Go struct name -> {Go field name: (proto name, json name, Go type)} of values_types.pb.go."""
    text = open(pb_go).read()
    structs = {}
    for name, body in re.findall(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
        fields = {}
        for line in body.split("\n"):
            m = re.match(r'^\t(\w+)\s+(\S+)\s+`protobuf:"([^"]+)"', line)
            if not m:
                continue
            tag = dict(p.split("=", 1) for p in m.group(3).split(",") if "=" in p)
            proto = tag["name"]
            fields[m.group(1)] = (proto, tag.get("json", proto), m.group(2).lstrip("*[]"))
        structs[name] = fields
    return structs


def strict_calls(validation_go):
    """[(getter chain, import alias, type, list)] of validateValues' runKube/runKubeList calls."""
    text = open(validation_go).read()
    body = re.search(r"^func validateValues\(.*?^\}", text, re.M | re.S)
    if body is None:
        raise SystemExit("k8s-values-schema: validateValues not found in " + validation_go)
    calls = re.findall(r"\b(runKube|runKubeList)\(\s*values\.((?:Get\w+\(\)\.?)+),\s*&(\w+)\.(\w+)\{\}",
                       body.group(0))
    if not calls:
        raise SystemExit("k8s-values-schema: no runKube calls in validateValues of " + validation_go)
    imports = dict((a, p) for a, p in re.findall(r'^\s+(\w+) "([^"]+)"$', text, re.M))
    out = []
    for fn, chain, alias, tname in calls:
        getters = re.findall(r"Get(\w+)\(\)", chain)
        ipath = imports.get(alias)
        if ipath is None:
            raise SystemExit("k8s-values-schema: import %s not found in %s" % (alias, validation_go))
        # k8s.io/api/core/v1 -> k8s.io.api.core.v1; k8s.io/apimachinery/pkg/apis/meta/v1 -> ...
        out.append((getters, ipath.replace("/", "."), tname, fn == "runKubeList"))
    return out


def ident(full):
    return "t_" + re.sub(r"[^0-9A-Za-z]", "_", full)


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    out_path = sys.argv[1]
    lines = []
    w = lines.append
    w("// Generated by hack/k8s-values-schema.py from the istio.io/istio, k8s.io/api and")
    w("// k8s.io/apimachinery modules of manifests/versions.yaml (Go module cache). Do not edit.")
    w("// clang-format off")
    w('#include "operator/manifest/k8s_values.hpp"')
    w("")
    w("namespace meshop::manifest::k8s_values {")
    w("")
    versions = []
    for arg in sys.argv[2:]:
        version, dirs = arg.split("=", 1)
        istio, api, machinery = dirs.split(":")
        mod = Module(api, machinery)
        structs = values_fields(os.path.join(istio, "operator/pkg/apis/values_types.pb.go"))
        paths = []
        for getters, package, tname, is_list in strict_calls(
                os.path.join(istio, "operator/pkg/apis/validation/validation.go")):
            struct, proto, json = "Values", [], []
            for g in getters:
                f = structs.get(struct, {}).get(g)
                if f is None:
                    raise SystemExit("k8s-values-schema: %s has no field %s (getter Get%s)" % (struct, g, g))
                proto.append(f[0])
                json.append(f[1])
                struct = f[2]
            full = package + "." + tname
            mod.load(package)
            paths.append((".".join(proto), ".".join(json), full, is_list))
        # Every message reachable from the roots, in a stable order.
        order, seen = [], set()

        def visit(full):
            if full in seen:
                return
            seen.add(full)
            order.append(full)
            for _, kind, _, msg, _ in mod.fields_of(full):
                if msg is not None:
                    visit(msg)

        for _, _, full, _ in paths:
            visit(full)
        ns = "v" + re.sub(r"[^0-9A-Za-z]", "_", version)
        w("namespace %s {  // %s: %s, %s, %s" % (ns, version, os.path.basename(istio),
                                                 os.path.basename(api), os.path.basename(machinery)))
        for full in order:
            w("extern const Type %s;" % ident(full))
        for full in order:
            fields = mod.fields_of(full)
            if not fields:
                w('const Type %s = {"%s", {}};' % (ident(full), full))
                continue
            w("const Field f%s[] = {" % ident(full)[1:])
            for jname, kind, label, msg, embedded in fields:
                shape = {"optional": "Shape::kOne", "repeated": "Shape::kList", "map": "Shape::kMap"}[label]
                w('  {"%s", Kind::%s, %s, %s, %s},' % (jname, kind, shape, "&" + ident(msg) if msg else "nullptr",
                                                     "true" if embedded else "false"))
            w("};")
            w('const Type %s = {"%s", f%s};' % (ident(full), full, ident(full)[1:]))
        w("const StrictPath kPaths[] = {")
        for proto, json, full, is_list in paths:
            w('  {"%s", "%s", &%s, %s},' % (proto, json, ident(full), "true" if is_list else "false"))
        w("};")
        w("}  // namespace " + ns)
        w("")
        versions.append((version, ns))
    w("const VersionPaths kVersions[] = {")
    for version, ns in versions:
        w('  {"%s", %s::kPaths},' % (version, ns))
    w("};")
    w("std::span<const VersionPaths> versions() {")
    w("  return kVersions;")
    w("}")
    w("")
    w("}  // namespace meshop::manifest::k8s_values")
    text = "\n".join(lines) + "\n"
    old = open(out_path).read() if os.path.exists(out_path) else None
    if old != text:
        with open(out_path + ".tmp", "w") as f:
            f.write(text)
        os.replace(out_path + ".tmp", out_path)


if __name__ == "__main__":
    main()
