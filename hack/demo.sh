#!/usr/bin/env bash
# The demo: installs what is missing, builds meshop and the local control plane, brings
# the control plane up (left running; stop it with `hack/cluster.sh down`) and shows
# meshop beside it. Later milestones extend this into the full install / canary /
# restart walk-through.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing dependencies (Debian packages)"
bash hack/install-deps.sh
say "Building the control plane from Go modules (cached after the first run)"
bash hack/build-cluster.sh
say "Building meshop"
bash hack/build.sh release --target meshop >/dev/null
meshop=build/release/operator/meshop

say "Starting the local control plane"
kubeconfig=$(bash hack/cluster.sh up)
eval "$(bash hack/cluster.sh env)"
kubectl get nodes -o wide
kubectl get namespaces

say "meshop"
"$meshop" version
"$meshop" --help

say "The cluster is still running"
echo "  export KUBECONFIG=$kubeconfig"
echo "  hack/cluster.sh status | down"
