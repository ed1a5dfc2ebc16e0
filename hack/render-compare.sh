#!/usr/bin/env bash
# Measures meshop's `manifest generate` against upstream's renderer (hack/renderoracle.sh
# generate) on upstream's manifest-generate inputs and every profile; prints
#   N identical, M differ, K only-upstream, L only-meshop
# per case and in total. A report, not a test (exit 0 whatever the counts).
#   hack/render-compare.sh [--meshop BIN] [--manifests DIR|--istio-manifests] [--verbose] [CASE...]
# BIN defaults to build/relwithdebinfo/operator/meshop of this checkout. --manifests DIR makes
# meshop render the chart set DIR with istioctl's pipeline (`manifest generate --manifests`);
# --istio-manifests is --manifests <pinned istio module>/manifests, what the oracle embeds.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
meshop="$here/../build/relwithdebinfo/operator/meshop"
if [ "${1:-}" = "--meshop" ]; then meshop=$2; shift 2; fi
oracle=$(bash "$here/renderoracle.sh" --build)
istio=$(bash "$here/istio-module.sh")
manifests=()
if [ "${1:-}" = "--manifests" ]; then manifests=(--manifests "$2"); shift 2; fi
if [ "${1:-}" = "--istio-manifests" ]; then manifests=(--manifests "$istio/manifests"); shift; fi
exec python3 "$here/render-compare.py" --meshop "$meshop" --oracle "$oracle" --istio "$istio" \
  "${manifests[@]}" "$@"
