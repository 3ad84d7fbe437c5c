#!/usr/bin/env bash
# Today's container runtimes for the VM tests (issue 28), beside the
# host's own packages and never installed over them:
#  - containerd 2.1 (ctr, containerd-shim-runc-v2) and
#    containernetworking-plugins 1.9 (bridge, host-local, loopback) from
#    Debian sid, unpacked with dpkg-deb -x into $RT/root (the host keeps
#    bookworm's plugins 1.1.1, which podman uses; containerd runs runc,
#    bookworm's, installed by setup.sh);
#  - arbt-cnitool (tools/cnitool/main.go), a libcni client built with
#    bookworm-backports' Go 1.23 in GOPATH mode against sid's
#    golang-github-appc-cni-dev (libcni 1.3, unpacked likewise), offline
#    (GOPROXY=off: nothing is fetched);
#  - an OCI image archive with no registry behind it: busybox-static and
#    iperf3 with the libraries it links, one layer, the layout written
#    here with tar and sha256sum, for `ctr images import`.
# Everything lives under $RT (/var/lib: the VM guest sees it; /var/cache
# is an empty tmpfs there).  Each part is remade when what it is made of
# changed (package versions, the client's source), recorded in its .key.
#
#   scripts/runtimes-setup.sh          fetch/build what is missing or stale
#   scripts/runtimes-setup.sh --check  exit 0 when everything is current
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/oci-image.sh
. "$ROOT/scripts/oci-image.sh"
RT=${ARBTABLE_RUNTIMES:-/var/lib/arbtable/containerd-2}
GO=${ARBTABLE_GO:-/usr/lib/go-1.23/bin/go}
SUITE=sid
PKGS="containerd containernetworking-plugins golang-github-appc-cni-dev"
# the image's contents: files of these packages
IMG_PKGS="busybox-static iperf3 libiperf0 libc6 libssl3 libsctp1"
IMAGE_NAME=localhost/arbtable/tenant:1

hostver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo none; }
client_key() {
	echo "go $("$GO" version 2>/dev/null | awk '{ print $3 }')"
	echo "cni $(sed -n 's/^golang-github-appc-cni-dev=//p' "$RT/versions" 2>/dev/null)"
	echo "src $(sha256sum "$ROOT/tools/cnitool/main.go" | cut -d' ' -f1)"
}
image_key() {
	local p
	for p in $IMG_PKGS; do echo "$p $(hostver "$p")"; done
	echo "src $(sed -n '/^build_image()/,/^}/p' "$0" | cat - "$ROOT/scripts/oci-image.sh" | sha256sum | cut -d' ' -f1)"
}
current() {
	local p
	for p in $PKGS; do grep -q "^$p=" "$RT/versions" 2>/dev/null || return 1; done
	[ -x "$RT/root/usr/bin/containerd" ] && [ -x "$RT/root/usr/lib/cni/bridge" ] &&
		[ -x "$RT/bin/arbt-cnitool" ] && [ -f "$RT/image/tenant.oci.tar" ] &&
		[ "$(client_key)" = "$(cat "$RT/bin/.key" 2>/dev/null)" ] &&
		[ "$(image_key)" = "$(cat "$RT/image/.key" 2>/dev/null)" ]
}
if [ "${1:-}" = --check ]; then
	current
	exit
fi
mkdir -p "$RT"

# ---- the sid packages, unpacked
missing=
for p in $PKGS; do grep -q "^$p=" "$RT/versions" 2>/dev/null || missing=1; done
if [ -n "$missing" ] || [ ! -x "$RT/root/usr/bin/containerd" ]; then
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	: >"$tmp/versions"
	for p in $PKGS; do
		v=$(apt-cache madison "$p" | awk -F'|' -v s="$SUITE/" '$3 ~ s && $3 ~ /Packages/ { gsub(/ /, "", $2); print $2; exit }')
		[ -n "$v" ] || { echo "runtimes-setup: $p is not in $SUITE's index (apt-get update?)" >&2; exit 1; }
		echo "runtimes-setup: unpacking $p $v ($SUITE) into $RT/root"
		(cd "$tmp" && apt-get download -qq "$p=$v" >/dev/null 2>&1) ||
			{ echo "runtimes-setup: apt-get download $p=$v failed" >&2; exit 1; }
		dpkg-deb -x "$tmp/${p}_"*.deb "$tmp/root"
		echo "$p=$v" >>"$tmp/versions"
	done
	rm -rf "${RT:?}/root" "${RT:?}/bin" "${RT:?}/image"
	mv "$tmp/root" "$RT/root"
	mv "$tmp/versions" "$RT/versions"
	rm -rf "$tmp"
fi

# ---- the libcni client
if [ "$(client_key)" != "$(cat "$RT/bin/.key" 2>/dev/null)" ] || [ ! -x "$RT/bin/arbt-cnitool" ]; then
	[ -x "$GO" ] || { echo "runtimes-setup: no Go toolchain at $GO (golang-1.23-go, bookworm-backports)" >&2; exit 1; }
	echo "runtimes-setup: building arbt-cnitool (libcni $(sed -n 's/^golang-github-appc-cni-dev=//p' "$RT/versions"), $("$GO" version | awk '{ print $3 }'))"
	mkdir -p "$RT/bin"
	tmp=$(mktemp -d)
	# GOPATH mode: the packaged source tree is a GOPATH (Debian's own
	# builds use it the same way); nothing is fetched
	(cd "$tmp" && GO111MODULE=off GOPATH="$RT/root/usr/share/gocode" GOCACHE="$tmp/cache" \
		GOPROXY=off GOFLAGS="" CGO_ENABLED=0 \
		"$GO" build -trimpath -o "$RT/bin/arbt-cnitool" "$ROOT/tools/cnitool/main.go")
	rm -rf "$tmp"
	client_key >"$RT/bin/.key"
fi

# ---- the image
build_image() { # DIR: an OCI image layout archive at DIR/tenant.oci.tar
	local d=$1 r=$1/rootfs lib a
	mkdir -p "$r"/{bin,etc,tmp,proc,sys,dev,run,usr/bin}
	chmod 1777 "$r/tmp"
	cp /bin/busybox "$r/bin/busybox"
	for a in sh sleep true false cat ls ip echo test kill wc; do ln -s busybox "$r/bin/$a"; done
	cp /usr/bin/iperf3 "$r/usr/bin/iperf3"
	for lib in $(ldd /usr/bin/iperf3 | awk '$2 == "=>" { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }'); do
		mkdir -p "$r$(dirname "$lib")"
		cp -L "$lib" "$r$lib"
	done
	printf 'root:x:0:0:root:/:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	oci_archive "$r" "$IMAGE_NAME" '["/bin/sh"]' \
		"sch_arbtable scripts/runtimes-setup.sh: busybox-static, iperf3" "$d/tenant.oci.tar"
}
if [ "$(image_key)" != "$(cat "$RT/image/.key" 2>/dev/null)" ] || [ ! -f "$RT/image/tenant.oci.tar" ]; then
	echo "runtimes-setup: building the tenant image $IMAGE_NAME (busybox-static $(hostver busybox-static), iperf3 $(hostver iperf3))"
	tmp=$(mktemp -d)
	build_image "$tmp"
	mkdir -p "$RT/image"
	mv "$tmp/tenant.oci.tar" "$RT/image/tenant.oci.tar"
	echo "$IMAGE_NAME" >"$RT/image/name"
	rm -rf "$tmp"
	image_key >"$RT/image/.key"
fi
current || { echo "runtimes-setup: the cache under $RT is still incomplete" >&2; exit 1; }
