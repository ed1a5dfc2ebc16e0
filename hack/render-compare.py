#!/usr/bin/env python3
"""Report (not a test): meshop's `manifest generate` against upstream's (hack/renderoracle generate)
on every file of upstream's operator/cmd/mesh/testdata/manifest-generate/input and every profile
of the pinned istio.io/istio module. Objects are keyed by (group, kind, namespace, name) and
compared as parsed JSON. Prints per case and in total:
    N identical, M differ, K only-upstream, L only-meshop
Usage: hack/render-compare.sh [--meshop BIN] [--oracle BIN] [--istio DIR] [--manifests DIR]
                              [--verbose] [CASE...]
--manifests DIR is passed to `meshop manifest generate` (istioctl's pipeline over the chart set
DIR, e.g. <istio-module>/manifests, the charts and profiles the oracle embeds).
"""
import argparse, json, os, subprocess, sys
import yaml


def load_stream(text):
    objs = {}
    for doc in yaml.safe_load_all(text):
        if not isinstance(doc, dict) or not doc:
            continue
        group = doc.get("apiVersion", "").rpartition("/")[0]
        md = doc.get("metadata") or {}
        key = (group, doc.get("kind", ""), md.get("namespace", ""), md.get("name", ""))
        objs[key] = json.loads(json.dumps(doc))
    return objs


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    try:
        return load_stream(p.stdout), None
    except yaml.YAMLError as e:
        return None, "unparsable output: %s" % e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--meshop", required=True)
    ap.add_argument("--oracle", required=True)
    ap.add_argument("--istio", required=True)
    ap.add_argument("--manifests", default="",
                    help="chart set passed to meshop as --manifests (e.g. <istio>/manifests)")
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    inputs = os.path.join(a.istio, "operator/cmd/mesh/testdata/manifest-generate/input")
    cases = [("file:" + f, ["-f", os.path.join(inputs, f)]) for f in sorted(os.listdir(inputs))]
    profiles = sorted(p[:-5] for p in os.listdir(os.path.join(a.istio, "manifests/profiles"))
                      if p.endswith(".yaml"))
    cases += [("profile:" + p, ["--set", "profile=" + p]) for p in profiles]
    if a.cases:
        cases = [c for c in cases if c[0] in a.cases or c[0].split(":", 1)[1] in a.cases]
    tot = dict(identical=0, differ=0, only_upstream=0, only_meshop=0)
    errors = dict(both=0, only_upstream=0, only_meshop=0)
    for name, args in cases:
        up, uerr = run([a.oracle, "generate"] + args)
        extra = ["--manifests", a.manifests] if a.manifests else []
        me, merr = run([a.meshop, "manifest", "generate"] + extra + args)
        if uerr or merr:
            kind = "both" if uerr and merr else ("only_upstream" if uerr else "only_meshop")
            errors[kind] += 1
            print("%-60s error (%s): upstream=%s meshop=%s" % (name, kind, uerr, merr))
            if uerr or not up:
                continue
            me = me or {}
        c = dict(identical=0, differ=0, only_upstream=0, only_meshop=0)
        for k, v in up.items():
            if k not in me:
                c["only_upstream"] += 1
            elif me[k] == v:
                c["identical"] += 1
            else:
                c["differ"] += 1
                if a.verbose:
                    print("  differ: %s" % "/".join(k))
        c["only_meshop"] = sum(1 for k in me if k not in up)
        for k in tot:
            tot[k] += c[k]
        print("%-60s %d identical, %d differ, %d only-upstream, %d only-meshop" %
              (name, c["identical"], c["differ"], c["only_upstream"], c["only_meshop"]))
    print("TOTAL over %d cases: %d identical, %d differ, %d only-upstream, %d only-meshop" %
          (len(cases), tot["identical"], tot["differ"], tot["only_upstream"], tot["only_meshop"]))
    print("errors: %d both, %d only upstream, %d only meshop" %
          (errors["both"], errors["only_upstream"], errors["only_meshop"]))


if __name__ == "__main__":
    sys.exit(main())
