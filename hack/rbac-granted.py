#!/usr/bin/env python3
"""Prints, as ClusterRole rules, the union of what every Role and ClusterRole meshop can install
grants: each profile of each bundled Istio version with every optional part on (the inputs of
test/unit/reconcilers/rbac_test.cpp). config/rbac.yaml's part 2 is this output; the unit test
checks it both ways.
  hack/rbac-granted.py build/relwithdebinfo/operator/meshop"""
import json, subprocess, sys
from collections import defaultdict

import yaml

meshop = sys.argv[1]
versions = json.loads(subprocess.check_output([meshop, "version", "-o", "json"]))["istioVersions"]
atoms = set()
for v in versions:
    for profile in subprocess.check_output([meshop, "profile", "list", "--version", v["version"]],
                                           text=True).split()[3:]:
        iop = f"""apiVersion: install.istio.io/v1alpha1
kind: IstioOperator
metadata: {{name: all, namespace: istio-system}}
spec:
  version: "{v['version']}"
  profile: {profile}
  components:
    cni: {{enabled: true}}
    ztunnel: {{enabled: true}}
    pilot: {{enabled: true, k8s: {{replicaCount: 2}}}}
    base: {{enabled: true}}
    ingressGateways: [{{name: istio-ingressgateway, enabled: true}}]
    egressGateways: [{{name: istio-egressgateway, enabled: true}}]
  values:
    cni: {{resourceQuotas: {{enabled: true}}}}
    global: {{networkPolicy: {{enabled: true}}, remotePilotAddress: 10.0.0.1,
             istiod: {{enableAnalysis: true}}}}
    pilot: {{autoscaleEnabled: false, taint: {{enabled: true}},
            env: {{ENABLE_CLUSTER_TRUST_BUNDLE_API: true}}}}
"""
        out = subprocess.run([meshop, "manifest", "generate", "-f", "/dev/stdin"], input=iop,
                             text=True, capture_output=True, check=True).stdout
        for doc in yaml.safe_load_all(out):
            if not doc or doc.get("kind") not in ("Role", "ClusterRole"):
                continue
            for rule in doc.get("rules") or []:
                for g in rule.get("apiGroups") or [""]:
                    for r in rule.get("resources") or []:
                        for verb in rule.get("verbs") or []:
                            for n in rule.get("resourceNames") or [""]:
                                atoms.add((g, r, verb, n))
# A verb held for any name makes the same verb by name redundant.
atoms = {a for a in atoms if not a[3] or (a[0], a[1], a[2], "") not in atoms}
by_group_res = defaultdict(set)
for g, r, verb, n in atoms:
    by_group_res[(g, r, n)].add(verb)
order = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]
rules = defaultdict(list)
for (g, r, n), verbs in by_group_res.items():
    vs = tuple(sorted(verbs, key=lambda x: (order.index(x) if x in order else 99, x)))
    rules[(g, n, vs)].append(r)
for (g, n, vs), res in sorted(rules.items()):
    print(f"- apiGroups: [{json.dumps(g) if g == '' else g}]")
    items = [json.dumps(x) if x == '*' else x for x in sorted(res)]
    line, out = "  resources: [", []
    for i, x in enumerate(items):  # wrapped at 100 columns, continued under the first item
        piece = x + (", " if i + 1 < len(items) else "]")
        if len(line) + len(piece.rstrip()) > 100 and line.strip() != "resources: [":
            out.append(line.rstrip())
            line = " " * len("  resources: [")
        line += piece
    print("\n".join(out + [line]))
    if n:
        print(f"  resourceNames: [{n}]")
    print(f"  verbs: [{', '.join(json.dumps(x) if x == '*' else x for x in vs)}]")
