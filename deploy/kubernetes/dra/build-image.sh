#!/usr/bin/env bash
# build-image.sh BINARY OUT: the arbtable-dra image as an OCI archive for
# `ctr -n k8s.io images import OUT` (no registry): one layer with the
# binary (make dra) and the shared libraries it loads (libarbtable,
# libnl-3, libnl-route-3, libc and the loader), each at the path the
# host's loader found it, so the image's loader finds them in its default
# directories, and their licences in /usr/share/doc/arbtable-dra. Reference localhost/arbtable-dra:<VERSION> (the DaemonSet's
# image, imagePullPolicy Never).
set -euo pipefail
here=$(cd "$(dirname "$0")/../../.." && pwd)
bin=${1:-$here/build/dra/arbtable-dra}
out=${2:-$here/build/dra/arbtable-dra.oci.tar}
version=$(cat "$here/VERSION")
# shellcheck source=../../../scripts/oci-image.sh
. "$here/scripts/oci-image.sh"

[ -x "$bin" ] || { echo "build-image: $bin not built (make dra)" >&2; exit 1; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
install -D -m 0755 "$bin" "$root/usr/bin/arbtable-dra"
# the libraries as the host's loader resolves them (libarbtable through
# the binary's build-tree rpath; in the image it sits in the loader's
# default directory instead)
libs=$(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }')
for l in $libs; do
	case $l in
	*/libarbtable.so*) dst=/lib/x86_64-linux-gnu/$(basename "$l") ;;
	*) dst=$l ;;
	esac
	install -D -m 0644 "$(readlink -f "$l")" "$root$dst"
	case $l in */ld-linux*) chmod 0755 "$root$dst" ;; esac
done
# /lib64/ld-linux-x86-64.so.2 is the interpreter the binary names
if [ ! -e "$root/lib64/ld-linux-x86-64.so.2" ]; then
	install -D -m 0755 "$(readlink -f /lib64/ld-linux-x86-64.so.2)" "$root/lib64/ld-linux-x86-64.so.2"
fi
# the licences of what the image holds, as distributing it requires
# (Apache-2.0 section 4, the BSD, MIT and ISC notices, the LGPL's text):
# the driver's (Apache-2.0) and libarbtable's (LGPL-2.1-or-later, its core
# BSD-2-Clause), Go's and each Go module's LICENSE and NOTICE files, and
# the Debian copyright file of each other library
doc=$root/usr/share/doc/arbtable-dra
install -D -m 0644 "$here/COPYING.APACHE" "$doc/COPYING.APACHE"
install -m 0644 "$here/COPYING.LGPL" "$here/COPYING.BSD" "$doc/"
gobin=${GO:-$(bash "$here/scripts/go-toolchain.sh" --offline)/go}
mods=$(cd "$here/dra" && GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local "$gobin" list -deps \
	-f '{{with .Module}}{{.Path}}|{{.Dir}}{{end}}' ./cmd/arbtable-dra | sort -u | grep -v '^arbtable.dev/dra|')
# the Go runtime and standard library, linked into the binary
install -D -m 0644 "$("$gobin" env GOROOT)/LICENSE" "$doc/go/go/LICENSE"
for m in $mods; do
	n=0
	for f in "${m#*|}"/LICEN[CS]E* "${m#*|}"/COPYING* "${m#*|}"/NOTICE*; do
		[ -f "$f" ] || continue
		install -D -m 0644 "$f" "$doc/go/${m%%|*}/$(basename "$f")"
		n=$((n + 1))
	done
	[ $n -gt 0 ] || { echo "build-image: Go module ${m%%|*} has no licence file" >&2; exit 1; }
done
for l in $libs; do
	case $l in */libarbtable.so*) continue ;; esac
	pkg=$(dpkg -S "$l" 2>/dev/null || dpkg -S "$(readlink -f "$l")" 2>/dev/null || dpkg -S "/usr$l" 2>/dev/null) || {
		echo "build-image: $l: no Debian package (its licence unknown)" >&2; exit 1; }
	pkg=${pkg%%:*}
	install -D -m 0644 "/usr/share/doc/$pkg/copyright" "$doc/lib/$pkg/copyright"
done
mkdir -p "$root/tmp" "$root/etc" "$root/run" "$root/var"
# /var/run is /run, as on the hosts: NRI names pods' network namespaces
# /var/run/netns/..., the DaemonSet mounts the host's /run/netns
ln -s ../run "$root/var/run"
echo "arbtable-dra:x:0:0::/:/usr/bin/arbtable-dra" >"$root/etc/passwd"
# the binary runs with only these files: fail here, not on the node
if ! out_help=$(chroot "$root" /usr/bin/arbtable-dra --help 2>&1) &&
   ! printf '%s' "$out_help" | grep -q -- '-node-name'; then
	echo "build-image: the binary does not start in its image:" >&2
	printf '%s\n' "$out_help" >&2
	exit 1
fi
mkdir -p "$(dirname "$out")"
oci_archive "$root" "localhost/arbtable-dra:$version" '["/usr/bin/arbtable-dra"]' \
	"deploy/kubernetes/dra/build-image.sh" "$out"
echo "build-image: $out ($(du -h "$out" | cut -f1), localhost/arbtable-dra:$version; ctr -n k8s.io images import $out)"
