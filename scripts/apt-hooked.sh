# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts/setup.sh and tests/setup/dpkg-path-check.sh: the one
# way setup runs apt-get and dpkg.
#
# apt-get runs dpkg with its own PATH (apt's DPkg::Path, on Debian 12
# "/usr/sbin:/usr/bin:/sbin:/bin"), not the caller's, and dpkg hands that
# PATH to every maintainer script: a shim exported on PATH never reaches a
# package's hooks.  apt_hooked passes DPkg::Path with scripts/dpkg-hooks
# first, so the run-parts there is the one the 7.2 image's hooks call;
# dpkg_hooked runs dpkg directly with the same PATH.
ARBT_DPKG_HOOKS=$(cd "$(dirname "${BASH_SOURCE[0]}")/dpkg-hooks" && pwd)
arbt_dpkg_path() {
	local DPKG_PATH=
	eval "$(apt-config shell DPKG_PATH DPkg::Path)"
	echo "$ARBT_DPKG_HOOKS:${DPKG_PATH:-/usr/sbin:/usr/bin:/sbin:/bin}"
}
apt_hooked() { # apt-get arguments...
	apt-get -o "DPkg::Path=$(arbt_dpkg_path)" "$@"
}
dpkg_hooked() { # dpkg arguments...
	PATH=$(arbt_dpkg_path) dpkg "$@"
}
