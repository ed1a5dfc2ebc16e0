#!/usr/bin/env python3
"""Writes a Pod with N containers (a large-pod probe for the injector), as a Pod manifest or
as an admission.k8s.io/v1 AdmissionReview around it.

    hack/big-pod.py N [--review] [--rich] [--indent K] > out.json

Each container has a name and an image, like the pods of issue 17's probe (40k containers is
about 1.35 MB as a review, under the apiserver's request limit); --rich adds a port and an env
var to each. --indent pretty-prints (one value per line) instead of one line.
"""
import argparse
import json
import sys


def container(i, rich):
    c = {"name": f"c{i}", "image": "app:1"}
    if rich:
        c["ports"] = [{"containerPort": 8000 + i % 1000}]
        c["env"] = [{"name": "I", "value": str(i)}]
    return c


def pod(n, rich):
    containers = [container(i, rich) for i in range(n)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "default", "labels": {"app": "big"}},
        "spec": {"containers": containers},
    }


def review(p):
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "00000000-0000-0000-0000-000000000017",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "default",
            "operation": "CREATE",
            "object": p,
        },
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("--review", action="store_true", help="wrap the pod in an AdmissionReview")
    ap.add_argument("--rich", action="store_true", help="a port and an env var per container")
    ap.add_argument("--indent", type=int, default=None, help="pretty-print with this indent")
    args = ap.parse_args()
    p = pod(args.n, args.rich)
    doc = review(p) if args.review else p
    if args.indent is None:
        json.dump(doc, sys.stdout, separators=(",", ":"))
    else:
        json.dump(doc, sys.stdout, indent=args.indent)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
