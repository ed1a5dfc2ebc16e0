#!/usr/bin/env bash
# Builds meshop's runtime image without a registry or a container engine: a Debian 12 root
# file system made by mmdebstrap from Debian's packages (only what the binary links, found
# by ldd + dpkg -S, plus ca-certificates), the stripped binary in /usr/local/bin, packed as
# an OCI image layout by umoci (entrypoint meshop, command run, user 65532:65532, as the
# Dockerfile's runtime stage). Then, unless --no-check, unpacks the image again and starts
# `meshop version` and `meshop run --help` from its root file system (chroot, as 65532).
#   hack/image.sh BINARY OUT_DIR [--no-check]
# OUT_DIR/oci is the image layout (tag meshop:<version>), OUT_DIR/meshop-oci.tar its tar.
# Needs root (mmdebstrap, chroot) and the packages mmdebstrap and umoci.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: hack/image.sh BINARY OUT_DIR [--no-check]" >&2; exit 2; }
bin=$(readlink -f "$1")
out=$2
check=1
[ "${3:-}" = --no-check ] && check=0
[ -x "$bin" ] || { echo "image: $bin is not an executable" >&2; exit 1; }
for tool in mmdebstrap umoci dpkg ldd; do
  command -v "$tool" >/dev/null || { echo "image: $tool is not installed" >&2; exit 1; }
done
rm -rf "$out"
mkdir -p "$out"
out=$(readlink -f "$out")
t0=$(date +%s)

# The packages that hold the libraries the binary links (as this build machine has them).
pkgs=$(ldd "$bin" | awk '$3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | while read -r lib; do
  dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || {
    echo "image: no Debian package holds $lib" >&2
    exit 1
  }
done | cut -d: -f1 | sort -u | tr '\n' ',')
pkgs="${pkgs}ca-certificates"
echo "image: packages $pkgs" >&2

# Debian's mirror as this machine's apt sources name it.
mirror=$(grep -rhoE 'https?://deb\.debian\.org/debian/?' /etc/apt/sources.list /etc/apt/sources.list.d 2>/dev/null |
  head -n1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
rootfs=$out/rootfs
mmdebstrap --quiet --variant=essential --include="$pkgs" \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  bookworm "$rootfs" "$mirror" >&2
install -D -m 0755 "$bin" "$rootfs/usr/local/bin/meshop"
strip "$rootfs/usr/local/bin/meshop"
# The unprivileged identity the Deployment runs as, named.
echo "meshop:x:65532:65532:meshop:/nonexistent:/usr/sbin/nologin" >>"$rootfs/etc/passwd"
echo "meshop:x:65532:" >>"$rootfs/etc/group"
rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/*

version=$("$bin" version 2>/dev/null | awk 'NR == 1 {print $NF}' | sed 's/[^A-Za-z0-9.-]//g')
version=${version:-dev}
umoci init --layout "$out/oci"
umoci new --image "$out/oci:$version"
umoci unpack --image "$out/oci:$version" "$out/bundle" >/dev/null
rm -rf "$out/bundle/rootfs"
mv "$rootfs" "$out/bundle/rootfs"
umoci repack --image "$out/oci:$version" "$out/bundle"
umoci config --image "$out/oci:$version" --config.entrypoint /usr/local/bin/meshop \
  --config.cmd run --config.user 65532:65532 --config.workingdir / \
  --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
rm -rf "$out/bundle"
tar -C "$out/oci" -cf "$out/meshop-oci.tar" .
size=$(du -sm "$out/oci" | cut -f1)
echo "image: $out/oci:$version (${size} MiB) in $(($(date +%s) - t0)) s" >&2

[ "$check" = 1 ] || exit 0
# Start it from the image itself: unpack what the layout holds into a fresh bundle.
umoci unpack --image "$out/oci:$version" "$out/check" >/dev/null
root=$out/check/rootfs
entry=$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); print(" ".join(c["process"]["args"]), c["process"]["user"]["uid"])' "$out/check/config.json")
[ "$entry" = "/usr/local/bin/meshop run 65532" ] || { echo "image: entrypoint/user are '$entry'" >&2; exit 1; }
chroot --userspec=65532:65532 "$root" /usr/local/bin/meshop version
chroot --userspec=65532:65532 "$root" /usr/local/bin/meshop run --help >"$out/run-help.txt"
grep -q -- '--leader-elect' "$out/run-help.txt" || { echo "image: meshop run --help printed no flags" >&2; exit 1; }
# Nothing the binary needs is missing from the image (ldd inside the root file system).
if chroot "$root" /usr/bin/ldd /usr/local/bin/meshop 2>&1 | grep -q 'not found'; then
  chroot "$root" /usr/bin/ldd /usr/local/bin/meshop >&2
  echo "image: a library is missing" >&2
  exit 1
fi
rm -rf "$out/check"
echo "image: meshop version and meshop run --help ran from the image's root file system as 65532" >&2
