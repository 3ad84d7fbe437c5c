#!/usr/bin/env bash
# Install everything sch_arbtable needs on a Debian 12 (bookworm) host.
# Idempotent: a second run only checks. Facts from DESIGN.md §7 and §9.
set -euo pipefail

CACHE=${ARBTABLE_CACHE:-/var/cache/arbtable}
K612=${ARBTABLE_K612:-6.12.95+deb12-amd64}
STAMP=$CACHE/setup.v11.done

# Debian 12 only, checked before anything else: what follows writes
# bookworm, trixie and sid apt sources, which would damage another
# distribution.  ARBTABLE_SETUP_ANY_OS=1 goes on regardless (you know what
# the sources below do to your apt); ARBTABLE_OS_RELEASE is for
# tests/setup/refuse-check.sh only.
os_release=${ARBTABLE_OS_RELEASE:-/etc/os-release}
os_field() { sed -n "s/^$1=[\"']\{0,1\}\([^\"']*\).*/\1/p" "$os_release" 2>/dev/null | head -n1; }
os_id=$(os_field ID)
os_ver=$(os_field VERSION_ID)
if [ "$os_id/$os_ver" != debian/12 ] && [ "${ARBTABLE_SETUP_ANY_OS:-}" != 1 ]; then
	cat >&2 <<EOF
setup.sh: this host is ${os_id:-unknown} ${os_ver:-(no VERSION_ID)} ($os_release), not Debian 12:
setup.sh: nothing was changed.  setup writes Debian bookworm, trixie and sid
setup.sh: apt sources and installs the test kernels; on another system that
setup.sh: would damage its package manager.  To use sch_arbtable here:
setup.sh:   - install the Debian packages (make deb on a Debian 12 host), or
setup.sh:   - build it with your own kernel headers and tools:
setup.sh:       install the headers of the running kernel (Debian/Ubuntu:
setup.sh:       apt install linux-headers-\$(uname -r)), a compiler, make,
setup.sh:       libnl-3/libnl-route-3 and json-c development files, then
setup.sh:       make && sudo make install  (KDIR=<tree> for another kernel)
setup.sh: ARBTABLE_SETUP_ANY_OS=1 runs setup anyway (at your own risk).
EOF
	exit 1
fi

if [ "$(id -u)" != 0 ]; then
	echo "setup.sh: must run as root (apt-get)" >&2
	exit 1
fi
mkdir -p "$CACHE"
link_checkpatch() { # where review tooling looks for it
	if [ -x "$CACHE/checkpatch/checkpatch.pl" ] && [ -n "${HOME:-}" ]; then
		mkdir -p "$HOME/.cache/arbtable"
		ln -sfn "$CACHE/checkpatch" "$HOME/.cache/arbtable/checkpatch"
	fi
}
# arbtable-dra's Go modules (dra/go.sum pins them), fetched here and never
# at test time (make check-dra runs with GOPROXY=off); cheap when they are
# in the module cache, so a set-up machine runs it too.  The Go is
# scripts/go-toolchain.sh's: the machine's if new enough, else the pinned
# release that bookworm-backports' golang-1.23-go (installed below) takes
# from the Go module proxy.
dra_modules() {
	local d gobin
	d="$(cd "$(dirname "$0")/.." && pwd)/dra"
	[ -f "$d/go.mod" ] || return 0
	gobin=$(bash "$(dirname "$0")/go-toolchain.sh") || return 1
	(cd "$d" && GOTOOLCHAIN=local "$gobin/go" mod download) ||
		{ echo "setup: go mod download in $d failed" >&2; return 1; }
}
# a set-up machine: only the modules (a fresh one has no Go yet: below)
if command -v go >/dev/null || [ -x /usr/local/go/bin/go ] || [ -x /usr/lib/go-1.23/bin/go ]; then
	dra_modules || exit 1
fi
# the stamp records the tc it was made for: a tc upgrade re-runs setup
# (the plugin needs that tc's source); so does a missing backports tc
# (below: a setup that could not fetch it tries again)
if [ -f "$STAMP" ] && [ -z "${ARBTABLE_FORCE_SETUP:-}" ] &&
   [ -f "${ARBTABLE_BPO:-/var/lib/arbtable/iproute2-bpo}/version" ] &&
   bash "$(dirname "$0")/runtimes-setup.sh" --check &&
   bash "$(dirname "$0")/distro-kernel.sh" --check >/dev/null 2>&1 &&
   bash "$(dirname "$0")/pkg-root.sh" --check >/dev/null 2>&1 &&
   [ "$(cat "$STAMP")" = "$(dpkg-query -W -f='${Version}' iproute2 2>/dev/null)" ]; then
	link_checkpatch
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
key=/usr/share/keyrings/debian-archive-keyring.gpg

write_src() { # file types suites
	local f=/etc/apt/sources.list.d/$1.sources
	[ -f "$f" ] && return 0
	printf 'Types: %s\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
		"$2" "$mirror" "$3" "$key" >"$f"
}
write_src arbtable-bookworm-src deb-src bookworm
write_src arbtable-backports deb bookworm-backports
# the source of backports' iproute2 (the plugin is also built for its tc)
write_src arbtable-backports-src deb-src bookworm-backports
write_src arbtable-trixie deb trixie
pin=/etc/apt/preferences.d/arbtable-trixie
[ -f "$pin" ] || printf 'Package: *\nPin: release n=trixie\nPin-Priority: 50\n' >"$pin"
# trixie-backports, for linux-source-7.2 only (scripts/intree-check.sh
# compiles the module in its net/sched too); pinned as low as trixie, so
# nothing else comes from it unless asked for by name/release
write_src arbtable-trixie-backports deb trixie-backports
pin=/etc/apt/preferences.d/arbtable-trixie-backports
[ -f "$pin" ] || printf 'Package: *\nPin: release n=trixie-backports\nPin-Priority: 50\n' >"$pin"
# sid, for containerd 2.1, containernetworking-plugins 1.9 and libcni 1.3
# (scripts/runtimes-setup.sh unpacks them; nothing is installed from it)
write_src arbtable-sid deb sid
pin=/etc/apt/preferences.d/arbtable-sid
[ -f "$pin" ] || printf 'Package: *\nPin: release n=sid\nPin-Priority: 50\n' >"$pin"

echo "setup: apt-get update"
apt-get update -qq

# Debian's own 7.2 image (trixie-backports; issue 35), booted by make
# test with every VM test, Pre-Depends on trixie-backports' linux-base,
# whose hook runner passes run-parts two directories
# (/etc/kernel/postinst.d and /usr/share/kernel/postinst.d); bookworm's
# run-parts (debianutils 5.7) takes one, and the image's postinst fails
# ("run-parts: missing operand").  Every apt-get and dpkg here runs with
# scripts/dpkg-hooks first on the PATH dpkg gives maintainer scripts
# (apt_hooked: apt's DPkg::Path, which apt uses instead of ours; issue
# 43): its run-parts runs the scripts of all the directories in one
# order by name, as trixie's does, so the hooks (the legacy /boot copies,
# dkms, initramfs) run as on trixie and nothing on the system changes
# beyond the packages.  A configuration left half done by an earlier
# attempt is finished first.  tests/setup/dpkg-path-check.sh proves the
# path reaches a postinst.  scripts/distro-kernel.sh then prepares a tree
# to build the module for it.
K72=${ARBTABLE_K72:-7.2.12+deb13-amd64}
# shellcheck source=scripts/apt-hooked.sh
. "$(dirname "$0")/apt-hooked.sh"
dpkg_hooked --configure -a >/dev/null

# systemd-sysv: virtme-ng's init powers the guest off with poweroff(8)
# (without it the guest's init exits and the kernel panics: make
# check-fresh's minbase root)
echo "setup: installing packages (kernels 6.1 and $K612, linux-source 6.12 and 7.2, qemu, virtme-ng, libs)"
apt_hooked install -y -qq --no-install-recommends \
	build-essential pkg-config dpkg-dev kmod bc cpio flex bison \
	linux-image-amd64 linux-headers-amd64 \
	qemu-system-x86 busybox-static iperf3 ethtool procps iproute2 \
	libnl-3-dev libnl-route-3-dev libjson-c-dev libcmocka-dev libelf-dev \
	sparse python3 valgrind clang libclang-rt-14-dev udev \
	dkms python3-pyroute2 libssl-dev dwarves \
	nftables libbpf-dev bpftool abigail-tools jq python3-yaml python3-docutils shellcheck \
	curl openssl runc strace man-db groff-base systemd-sysv \
	debhelper dh-dkms lintian fakeroot debootstrap >/dev/null
# the 7.2 source tarball (/usr/src/linux-source-7.2.tar.xz; Depends:
# binutils, xz-utils, both bookworm's): pkg/release, not -t, so only this
# one package comes from trixie-backports (checked with apt-get -s,
# 2026-11-25: one package installed, 7.2.12-1~bpo13+1)
apt_hooked install -y -qq --no-install-recommends linux-source-7.2/trixie-backports >/dev/null
# make test's sanitizer kernel (scripts/sanitizer-kernel.sh), when not
# cached, is built from here on in the background (ARBTABLE_SAN_BUILD_LOG,
# set by scripts/test.sh): its tools and source are in now, and the rest
# of setup mostly waits on the network and dpkg.  On a fresh machine that
# moves the build's start, the first lanes' critical path, ahead by the
# rest of setup; make test's own call then waits for it (the script's lock).
if [ -n "${ARBTABLE_SAN_BUILD_LOG:-}" ] &&
   ! bash "$(dirname "$0")/sanitizer-kernel.sh" --check >/dev/null 2>&1; then
	echo "setup: building the sanitizer kernel in the background from here (log: $ARBTABLE_SAN_BUILD_LOG)"
	mkdir -p "$(dirname "$ARBTABLE_SAN_BUILD_LOG")"
	: >"$ARBTABLE_SAN_BUILD_LOG"
	setsid bash "$(dirname "$0")/sanitizer-kernel.sh" --kernel-only \
		>>"$ARBTABLE_SAN_BUILD_LOG" 2>&1 </dev/null &
fi
apt_hooked install -y -qq --no-install-recommends -t bookworm-backports \
	"linux-image-$K612" "linux-headers-$K612" linux-source-6.12 golang-1.23-go >/dev/null
apt_hooked install -y -qq --no-install-recommends virtme-ng/trixie >/dev/null
# The newest kernel users run (issue 35): Debian's own 7.2 image
# (installed below, after the packages the suite needs)
if ! dpkg-query -W -f '${Status}' "linux-image-$K72" 2>/dev/null | grep -q 'ok installed' ||
   [ ! -r "/boot/vmlinuz-$K72" ]; then
	echo "setup: installing Debian's linux-image-$K72 (trixie-backports)"
	apt_hooked install -y -qq --no-install-recommends "linux-image-$K72/trixie-backports" >/dev/null
fi
bash "$(dirname "$0")/distro-kernel.sh" >/dev/null

# a real container engine for test_podman: podman 4.3 with its CNI
# backend and the reference plugins (bridge, host-local) arbtable-cni
# is chained after
apt_hooked install -y -qq --no-install-recommends podman crun conmon catatonit \
	golang-github-containers-common containernetworking-plugins >/dev/null

# iproute2 source of the installed tc, for the plugin's private headers:
# the very version tc was built from (its debian/changelog says which), so
# the plugin's view of tc's structs matches the binary that loads it.
tcver=$(dpkg-query -W -f='${Version}' iproute2)
have=$(sed -n '1s/^iproute2 (\(.*\)).*/\1/p' "$CACHE/iproute2/debian/changelog" 2>/dev/null || true)
if [ "$have" != "$tcver" ]; then
	echo "setup: fetching iproute2 $tcver source${have:+ (cached: $have)}"
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get source -qq "iproute2=$tcver" >/dev/null 2>&1)
	src=$(find "$tmp" -maxdepth 1 -type d -name 'iproute2-*' | head -n1)
	[ -n "$src" ] || { echo "setup: apt-get source iproute2 failed" >&2; exit 1; }
	rm -rf "$CACHE/iproute2.tmp"
	mv "$src" "$CACHE/iproute2.tmp"
	rm -rf "$CACHE/iproute2"
	mv "$CACHE/iproute2.tmp" "$CACHE/iproute2"
	rm -rf "$tmp"
fi

# bookworm-backports' iproute2 (6.15), never installed: its package
# unpacked into /var/lib/arbtable/iproute2-bpo/root (root/sbin/tc runs from
# there with TC_LIB_DIR; /var/lib, as the VM guest sees /var/cache as an
# empty tmpfs) and, where the archive still serves it, its source into
# src/, so the plugin is built against that tc's own headers
# (mk/plugin.mk). The archive here served the package but no longer its
# source (404 for the .dsc and orig tarball, 2026-11-25): the plugin for
# it is then built from the installed tc's source, whose declarations of
# every tc symbol the plugin imports are 6.15's (mk/plugin.mk checks the
# symbols against root/sbin/tc at build time). Without the package,
# plugin-check fails.
bpo=${ARBTABLE_BPO:-/var/lib/arbtable/iproute2-bpo}
bpover=$(apt-cache madison iproute2 | awk -F'|' '$3 ~ /bookworm-backports/ && $3 ~ /Packages/ { gsub(/ /, "", $2); print $2; exit }')
if [ -n "$bpover" ] && { [ "$(cat "$bpo/version" 2>/dev/null)" != "$bpover" ] || [ ! -d "$bpo/src" ]; }; then
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	if [ "$(cat "$bpo/version" 2>/dev/null)" != "$bpover" ]; then
		echo "setup: unpacking iproute2 $bpover (bookworm-backports) into $bpo"
		if (cd "$tmp" && apt-get download -qq "iproute2=$bpover" >/dev/null 2>&1 &&
		    dpkg-deb -x iproute2_*.deb root); then
			rm -rf "$bpo"
			mkdir -p "$bpo"
			mv "$tmp/root" "$bpo/root"
			echo "$bpover" >"$bpo/version"
		else
			echo "setup: WARNING: could not fetch iproute2 $bpover from bookworm-backports;" \
			     "the plugin is not built for it and make plugin-check fails" >&2
		fi
	fi
	# its source, tried again on every setup while it is missing
	if [ -d "$bpo/root" ]; then
		if (cd "$tmp" && apt-get source -qq "iproute2=$bpover" >/dev/null 2>&1); then
			mv "$(find "$tmp" -maxdepth 1 -type d -name 'iproute2-*' | head -n1)" "$bpo/src"
		else
			echo "setup: note: the archive does not serve iproute2 $bpover's source;" \
			     "the plugin for that tc is built from the installed tc's source (mk/plugin.mk)"
		fi
	fi
	rm -rf "$tmp"
fi

# checkpatch.pl (+ spelling data) from linux-source, for `make lint`.
if [ ! -x "$CACHE/checkpatch/checkpatch.pl" ]; then
	tarball=$(ls /usr/src/linux-source-6.12.tar.* 2>/dev/null | head -n1)
	if [ -n "$tarball" ]; then
		mkdir -p "$CACHE/checkpatch"
		tar -xaf "$tarball" -C "$CACHE/checkpatch" --strip-components=2 --wildcards \
			'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' 2>/dev/null || true
		chmod +x "$CACHE/checkpatch/checkpatch.pl" 2>/dev/null || true
	fi
fi

link_checkpatch

# containerd 2.1, plugins 1.9, the libcni client and the tenant image
# for test_containerd and test_libcni (unpacked/built under
# /var/lib/arbtable/containerd-2; bookworm's runc above runs the
# containers)
bash "$(dirname "$0")/runtimes-setup.sh"
# Go for arbtable-dra, now that golang-1.23-go is installed (a fresh machine)
dra_modules || exit 1

# A fresh Debian 12 root for the package test (make packages-check):
# debootstrap bookworm with what the packages depend on, cached
bash "$(dirname "$0")/pkg-root.sh" >/dev/null

# Upstream tc-testing (tdc.py) for the VM suite's tdc cases.
bash "$(dirname "$0")/../selftests/tdc/prepare.sh"

dpkg-query -W -f='${Version}' iproute2 >"$STAMP"
echo "setup: done"
