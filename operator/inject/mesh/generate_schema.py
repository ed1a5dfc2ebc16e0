#!/usr/bin/env python3
"""Writes proto_schema_tables.cpp: the message and enum tables of MeshConfig, ProxyConfig and
every message reachable from them, read from the generated Go code of istio.io/api
(*.pb.go struct tags carry each field's Go name, proto name, JSON name, number, kind and
oneof; the enum name maps carry the value names).

Usage: generate_schema.py [ISTIO_API_DIR] > proto_schema_tables.cpp
ISTIO_API_DIR defaults to the istio.io/api module in the Go module cache.
Re-run after moving to a newer istio.io/api and commit the output.

       generate_schema.py --values OUT VERSION=ISTIO_MODULE_DIR...
writes OUT, the tables of istio.operator.v1alpha1.Values (an IstioOperator's spec.values, read
from each istio.io/istio module's operator/pkg/apis/values_types.pb.go) per bundled version, for
operator/manifest/values_schema.hpp. The build runs this (hack/values-schema.sh) from the Go
module cache; the output is never committed.
"""
import glob
import os
import re
import sys

ROOTS = ["istio.mesh.v1alpha1.MeshConfig", "istio.mesh.v1alpha1.ProxyConfig"]
PACKAGES = {  # Go import path suffix -> (proto package, Go package name)
    "mesh/v1alpha1": ("istio.mesh.v1alpha1", "v1alpha1"),
    "networking/v1alpha3": ("istio.networking.v1alpha3", "v1alpha3"),
    "networking/v1beta1": ("istio.networking.v1beta1", "v1beta1"),
}
WELL_KNOWN = {  # Go type (after import alias resolution) -> FieldKind
    "durationpb.Duration": "kDuration",
    "timestamppb.Timestamp": "kTimestamp",
    "wrapperspb.BoolValue": "kBoolValue",
    "wrapperspb.Int32Value": "kInt32Value",
    "wrapperspb.UInt32Value": "kUInt32Value",
    "wrapperspb.Int64Value": "kInt64Value",
    "wrapperspb.UInt64Value": "kUInt64Value",
    "wrapperspb.DoubleValue": "kDoubleValue",
    "wrapperspb.FloatValue": "kFloatValue",
    "wrapperspb.StringValue": "kStringValue",
    "wrapperspb.BytesValue": "kBytesValue",
    "structpb.Struct": "kStruct",
    "structpb.Value": "kValue",
    "structpb.ListValue": "kListValue",
    "anypb.Any": "kAny",
    "emptypb.Empty": "kEmpty",
}
IMPORT_PACKAGES = {  # Go import path -> the package that defines the types
    "github.com/golang/protobuf/ptypes/duration": "durationpb",
    "google.golang.org/protobuf/types/known/durationpb": "durationpb",
    "github.com/golang/protobuf/ptypes/timestamp": "timestamppb",
    "google.golang.org/protobuf/types/known/timestamppb": "timestamppb",
    "github.com/golang/protobuf/ptypes/wrappers": "wrapperspb",
    "google.golang.org/protobuf/types/known/wrapperspb": "wrapperspb",
    "github.com/golang/protobuf/ptypes/struct": "structpb",
    "google.golang.org/protobuf/types/known/structpb": "structpb",
    "github.com/golang/protobuf/ptypes/any": "anypb",
    "google.golang.org/protobuf/types/known/anypb": "anypb",
    "github.com/golang/protobuf/ptypes/empty": "emptypb",
    "google.golang.org/protobuf/types/known/emptypb": "emptypb",
}
SCALARS = {
    "string": "kString", "bool": "kBool", "int32": "kInt32", "int64": "kInt64",
    "uint32": "kUint32", "uint64": "kUint64", "float64": "kDouble", "float32": "kFloat",
    "[]byte": "kBytes",
}

messages = {}  # full proto name -> dict
enums = {}  # full proto name -> dict
wrappers = {}  # (pkg, Go wrapper type) -> (oneof interface, field dict)
oneof_ifaces = {}  # (pkg, wrapper type) -> interface name


def parse_tag(tag):
    parts = tag.split(",")
    out = {"wire": parts[0], "number": int(parts[1]), "label": parts[2]}
    for p in parts[3:]:
        if "=" in p:
            k, v = p.split("=", 1)
            out[k] = v
        else:
            out[p] = True
    return out


def parse_file(path, proto_pkg, go_pkg):
    text = open(path).read()
    imports = {}
    for alias, ipath in re.findall(r'^\s+(\w+) "([^"]+)"$', text, re.M):
        for suffix, (_, gp) in PACKAGES.items():
            if ipath == "istio.io/api/" + suffix:
                imports[alias] = gp
        if ipath in IMPORT_PACKAGES:
            imports[alias] = IMPORT_PACKAGES[ipath]

    def resolve(go_type):
        ptr = go_type.startswith("*")
        t = go_type.lstrip("*")
        if "." in t:
            alias, name = t.split(".", 1)
            return imports.get(alias, alias) + "." + name, ptr
        return go_pkg + "." + t, ptr

    for name, body in re.findall(r"^type (\w+) struct \{\n(.*?)^\}", text, re.M | re.S):
        fields = []
        listed = []  # "Types that are valid to be assigned to X:" lists, in declaration order
        for line in body.split("\n"):
            m = re.match(r"^\t//\t\*(\w+)$", line)
            if m:
                listed.append(m.group(1))
                continue
            m = re.match(r'^\t(\w+)\s+(\S+)\s+`protobuf:"([^"]+)"', line)
            if m:
                fname, ftype, tag = m.groups()
                fields.append({"go": fname, "type": resolve_field_type(ftype, resolve), "tag": parse_tag(tag),
                               "map_val": "protobuf_val" in line})
                continue
            m = re.match(r'^\t(\w+)\s+(\w+)\s+`protobuf_oneof:"([^"]+)"`', line)
            if m:
                fields.append({"go": m.group(1), "oneof_iface": m.group(2), "oneof_name": m.group(3),
                               "members": listed})
                listed = []
        if any("oneof" in f.get("tag", {}) for f in fields) and len(fields) == 1 and \
                not re.search(r"state\s+protoimpl", body):
            wrappers[(go_pkg, name)] = fields[0]
            continue
        if not re.search(r"state\s+protoimpl\.MessageState", body):
            continue
        messages_by_go[(go_pkg, name)] = {"go": name, "pkg": go_pkg, "proto_pkg": proto_pkg, "fields": fields}
    for wrapper, iface in re.findall(r"^func \(\*(\w+)\) (is\w+)\(\) \{\s*\}", text, re.M):
        oneof_ifaces[(go_pkg, wrapper)] = iface
    for name, body in re.findall(r"^\t?(\w+)_name = map\[int32\]string\{\n(.*?)^\t?\}", text, re.M | re.S):
        values = [(v, int(n)) for n, v in re.findall(r'^\s+(-?\d+):\s+"(\w+)",', body, re.M)]
        enums_by_go[(go_pkg, name)] = {"go": name, "pkg": go_pkg, "values": values}
    # Full proto names: the descriptor's message names follow the Go name with '_' -> '.'
    # except where the proto name itself has '_'; the pb.go lists them in comments such as
    # "// 12: istio.mesh.v1alpha1.MeshConfig.ExtensionProvider" in goTypes.
    for go_name, full in re.findall(r"^\t\(\*?(\w+)\)\((?:nil|0)\),\s+// \d+: ([\w.]+)$", text, re.M):
        proto_names[(go_pkg, go_name)] = full


def resolve_field_type(ftype, resolve):
    if ftype.startswith("map["):
        m = re.match(r"map\[(\w+)\](\S+)", ftype)
        return {"map_key": m.group(1), "elem": resolve_field_type(m.group(2), resolve)}
    if ftype.startswith("[]") and ftype != "[]byte":
        return {"repeated": True, "elem": resolve_field_type(ftype[2:], resolve)}
    if ftype in SCALARS:
        return {"scalar": ftype}
    if ftype.startswith("*") and ftype[1:] in SCALARS:
        return {"scalar": ftype[1:], "optional": True}
    t, ptr = resolve(ftype)
    return {"named": t, "ptr": ptr}


messages_by_go = {}
enums_by_go = {}
proto_names = {}


def kind_of(t):
    """(FieldKind, message key, enum key) of a resolved element type."""
    if "scalar" in t:
        return SCALARS[t["scalar"]], None, None
    named = t["named"]
    if named in WELL_KNOWN:
        return WELL_KNOWN[named], None, None
    pkg, name = named.split(".", 1)
    if (pkg, name) in messages_by_go:
        return "kMessage", (pkg, name), None
    if (pkg, name) in enums_by_go:
        return "kEnum", None, (pkg, name)
    raise SystemExit("unknown type " + named)


def reachable(roots):
    """The message keys reachable from `roots` ((Go package, Go name) keys), in visiting order."""
    order = []
    seen = set()

    def visit(key):
        if key in seen:
            return
        seen.add(key)
        order.append(key)
        for f in messages_by_go[key]["fields"]:
            types = []
            if "oneof_iface" in f:
                for (pkg, w), iface in oneof_ifaces.items():
                    if pkg == key[0] and iface == f["oneof_iface"]:
                        types.append(wrappers[(pkg, w)]["type"])
            else:
                types.append(f["type"])
            for t in types:
                e = t.get("elem", t)
                k, mkey, _ = kind_of(e)
                if mkey:
                    visit(mkey)

    for root in roots:
        visit(root)
    return order


def emit_tables(order, w):
    """Writes the extern declarations, enums and messages of `order` through `w`."""
    for key in order:
        w("extern const MessageDescriptor " + cname(key) + ";")
    w("")
    used_enums = []
    body = []
    for key in order:
        msg = messages_by_go[key]
        fields = []
        oneofs = []
        for f in msg["fields"]:
            if "oneof_iface" in f:
                idx = len(oneofs)
                oneofs.append((f["go"], f["oneof_name"]))
                members = [(wrappers[(key[0], wname)], wname) for wname in f["members"]]
                if sorted(f["members"]) != sorted(wname for (pkg, wname), iface in oneof_ifaces.items()
                                                  if pkg == key[0] and iface == f["oneof_iface"]):
                    raise SystemExit("oneof member list mismatch in " + key[1])
                for wf, wname in members:
                    fields.append((wf, idx, wname))
            else:
                fields.append((f, -1, ""))
        # Oneof members in declaration order (the generated comment lists them so); the oneof
        # sits where its first member is declared, as in the Go struct and the descriptor.
        rows = []
        for f, oneof, wname in fields:
            t = f["type"]
            card = "kSingular"
            elem = t
            if "map_key" in t:
                card = "kMap"
                elem = t["elem"]
                if t["map_key"] != "string":
                    raise SystemExit("non-string map key in " + key[1])
            elif t.get("repeated"):
                card = "kRepeated"
                elem = t["elem"]
            kind, mkey, ekey = kind_of(elem)
            if ekey and ekey not in used_enums:
                used_enums.append(ekey)
            tag = f["tag"]
            json_name = tag.get("json", tag["name"])
            presence = "true" if elem.get("optional") else "false"
            rows.append('  {"%s", "%s", "%s", %d, FieldKind::%s, Cardinality::%s, %s, %s, %d, %s, "%s"},' % (
                f["go"], tag["name"], json_name, tag["number"], kind, card,
                "&" + cname(mkey) if mkey else "nullptr",
                "&" + ename(ekey) if ekey else "nullptr", oneof, presence, wname))
        full = proto_names.get(key, msg["proto_pkg"] + "." + key[1])
        body.append("const FieldDescriptor %s_fields[] = {" % cname(key))
        body.extend(rows or ['  {"", "", "", 0, FieldKind::kString, Cardinality::kSingular, nullptr, nullptr, -1, false, ""},'])
        body.append("};")
        if oneofs:
            body.append("const OneofDescriptor %s_oneofs[] = {" % cname(key))
            for go, name in oneofs:
                body.append('  {"%s", "%s"},' % (go, name))
            body.append("};")
        body.append('const MessageDescriptor %s{"%s", "*%s.%s", {%s_fields, %d}, %s};' % (
            cname(key), full, key[0], key[1], cname(key), len(rows),
            "{%s_oneofs, %d}" % (cname(key), len(oneofs)) if oneofs else "{}"))
        body.append("")
    for ekey in used_enums:
        e = enums_by_go[ekey]
        full = proto_names.get(ekey, ekey[1])
        w("const EnumValue %s_values[] = {" % ename(ekey))
        for name, num in e["values"]:
            w('  {"%s", %d},' % (name, num))
        w("};")
        w('const EnumDescriptor %s{"%s", "%s.%s", %s_values};' % (ename(ekey), full, ekey[0], ekey[1], ename(ekey)))
        w("")
    for line in body:
        w(line)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--values":
        return main_values(sys.argv[2], sys.argv[3:])
    api_dir = sys.argv[1] if len(sys.argv) > 1 else sorted(glob.glob(
        os.path.expanduser("~/go/pkg/mod/istio.io/api@*")))[-1]
    for suffix, (proto_pkg, go_pkg) in PACKAGES.items():
        for path in sorted(glob.glob(os.path.join(api_dir, suffix, "*.pb.go"))):
            parse_file(path, proto_pkg, go_pkg)
    order = reachable([([gp for (pp, gp) in PACKAGES.values() if root.startswith(pp + ".")][0],
                        root.rsplit(".", 1)[1]) for root in ROOTS])
    out = []
    w = out.append
    w("// Generated by generate_schema.py from istio.io/api " + os.path.basename(api_dir).split("@")[-1] + ".")
    w("// Field facts (names, numbers, kinds) of the messages reachable from MeshConfig and")
    w("// ProxyConfig. Do not edit; re-run the generator.")
    w("// clang-format off")
    w('#include "operator/inject/mesh/proto_schema.hpp"')
    w("")
    w("namespace meshop::inject::proto {")
    w("")
    emit_tables(order, w)
    w("const MessageDescriptor* const kAllMessages[] = {")
    for key in order:
        w("  &%s," % cname(key))
    w("};")
    w("std::span<const MessageDescriptor* const> all_messages() {")
    w("  return kAllMessages;")
    w("}")
    w("")
    w("}  // namespace meshop::inject::proto")
    print("\n".join(out))


def main_values(out_path, pairs):
    """Values tables per version, each in namespace meshop::manifest::values_schema::v<x>_<y>."""
    out = []
    w = out.append
    w("// Generated by operator/inject/mesh/generate_schema.py --values from the istio.io/istio")
    w("// modules of manifests/versions.yaml (operator/pkg/apis/values_types.pb.go). Do not edit.")
    w("// clang-format off")
    w('#include "operator/manifest/values_schema.hpp"')
    w("")
    w("namespace meshop::manifest::values_schema {")
    w("using namespace meshop::inject::proto;")
    w("")
    versions = []
    for pair in pairs:
        version, module_dir = pair.split("=", 1)
        for d in (messages_by_go, enums_by_go, proto_names, wrappers, oneof_ifaces):
            d.clear()
        parse_file(os.path.join(module_dir, "operator/pkg/apis/values_types.pb.go"),
                   "istio.operator.v1alpha1", "apis")
        order = reachable([("apis", "Values")])
        ns = "v" + re.sub(r"[^0-9A-Za-z]", "_", version)
        w("namespace %s {  // %s: istio.io/istio@%s" % (ns, version, os.path.basename(module_dir).split("@")[-1]))
        w("")
        emit_tables(order, w)
        w("}  // namespace " + ns)
        w("")
        versions.append((version, os.path.basename(module_dir).split("@")[-1], ns))
    w("const VersionSchema kVersions[] = {")
    for version, module, ns in versions:
        w('  {"%s", "%s", &%s::%s},' % (version, module, ns, cname(("apis", "Values"))))
    w("};")
    w("std::span<const VersionSchema> versions() {")
    w("  return kVersions;")
    w("}")
    w("")
    w("}  // namespace meshop::manifest::values_schema")
    text = "\n".join(out) + "\n"
    old = open(out_path).read() if os.path.exists(out_path) else None
    if old != text:
        with open(out_path + ".tmp", "w") as f:
            f.write(text)
        os.replace(out_path + ".tmp", out_path)


def cname(key):
    return "k_" + key[0] + "_" + key[1]


def ename(key):
    return "ke_" + key[0] + "_" + key[1]


if __name__ == "__main__":
    main()
