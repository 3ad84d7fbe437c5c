#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What a fresh machine's first setup met (issue 43): apt-get runs dpkg with
# apt's DPkg::Path, not the caller's PATH, so a run-parts shim exported on
# PATH never reached the 7.2 image's postinst, and its two-directory
# run-parts failed.  This installs a probe package, built here (no
# network), whose postinst calls run-parts with two directories as
# trixie-backports' linux-base does:
#  - through plain apt-get, with the shim on PATH only: the postinst must
#    fail as the image's did (the premise: otherwise this test proves
#    nothing on this host);
#  - through scripts/apt-hooked.sh's apt_hooked, as setup installs: the
#    postinst must succeed with the scripts of both directories run once
#    each, in one order by name, the first directory's hiding the
#    second's of the same name;
#  - scripts/setup.sh installs and configures packages only through
#    apt_hooked and dpkg_hooked.
# The probe is purged after each case.  Root only (it installs a package).
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
pass=0 fail=0
ok() { echo "ok - $*"; pass=$((pass + 1)); }
nok() { echo "not ok - $*"; fail=$((fail + 1)); }
done_() { echo "dpkg-path: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }
if [ "$(id -u)" != 0 ]; then
	nok "must run as root (it installs and purges a probe package)"
	done_
fi
pkg=arbtable-dpkg-path-probe
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'dpkg --purge "$pkg" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
mkdir -p "$tmp/deb/DEBIAN" "$tmp/a" "$tmp/b"
# the hooks: 10-x in both (a's wins), 20-y in b only, 05-z in a only
for h in a/10-x b/10-x b/20-y a/05-z; do
	printf '#!/bin/sh\necho %s >>%s/ran\n' "$h" "$tmp" >"$tmp/$h"
	chmod +x "$tmp/$h"
done
cat >"$tmp/deb/DEBIAN/control" <<CTL
Package: $pkg
Version: 1
Architecture: all
Maintainer: sch_arbtable tests <root@localhost>
Description: probe of the PATH dpkg gives maintainer scripts
 Installed and purged by tests/setup/dpkg-path-check.sh.
CTL
cat >"$tmp/deb/DEBIAN/postinst" <<PI
#!/bin/sh
set -e
[ "\$1" = configure ] || exit 0
echo "\$PATH" >$tmp/path
run-parts --report --exit-on-error $tmp/a $tmp/b
PI
chmod 755 "$tmp/deb/DEBIAN/postinst"
if ! dpkg-deb --root-owner-group -b "$tmp/deb" "$tmp/$pkg.deb" >/dev/null 2>&1; then
	nok "dpkg-deb could not build the probe package"
	done_
fi
# shellcheck source=scripts/apt-hooked.sh
. "$here/scripts/apt-hooked.sh"
inst() { # how: plain|hooked
	rm -f "$tmp/ran" "$tmp/path"
	dpkg --purge "$pkg" >/dev/null 2>&1
	local a=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=120 install "$tmp/$pkg.deb")
	if [ "$1" = hooked ]; then
		DEBIAN_FRONTEND=noninteractive apt_hooked "${a[@]}" >"$tmp/$1.log" 2>&1
	else
		DEBIAN_FRONTEND=noninteractive PATH=$ARBT_DPKG_HOOKS:$PATH apt-get "${a[@]}" >"$tmp/$1.log" 2>&1
	fi
}

if inst plain; then
	nok "premise: plain apt-get with the shim on PATH only configured the probe (PATH in postinst: $(cat "$tmp/path" 2>/dev/null)): this host's run-parts takes two directories, or apt passes PATH on; the check below proves nothing here"
else
	if grep -q 'missing operand' "$tmp/plain.log" && ! grep -q "$ARBT_DPKG_HOOKS" "$tmp/path" 2>/dev/null; then
		ok "premise: plain apt-get drops the PATH shim (postinst PATH $(cat "$tmp/path" 2>/dev/null)) and bookworm's run-parts refuses two directories"
	else
		nok "premise: plain apt-get failed for another reason: $(tail -n 3 "$tmp/plain.log" | tr '\n' ' ')"
	fi
fi

if inst hooked; then
	ran=$(tr '\n' ' ' <"$tmp/ran" 2>/dev/null)
	if [ "$ran" = "a/05-z a/10-x b/20-y " ]; then
		ok "apt_hooked: the postinst ran both directories' hooks in one order by name, the first directory's 10-x hiding the second's ($ran)"
	else
		nok "apt_hooked: the postinst ran '$ran', want 'a/05-z a/10-x b/20-y'"
	fi
	case $(cat "$tmp/path") in
	"$ARBT_DPKG_HOOKS":*) ok "apt_hooked: maintainer scripts get scripts/dpkg-hooks first on PATH" ;;
	*) nok "apt_hooked: postinst PATH is $(cat "$tmp/path")" ;;
	esac
else
	nok "apt_hooked: installing the probe failed: $(tail -n 5 "$tmp/hooked.log" | tr '\n' ' ')"
fi

# dpkg_hooked: a package left unconfigured (dpkg --unpack) configured
# as setup's "dpkg --configure -a" finishes an earlier attempt
dpkg --purge "$pkg" >/dev/null 2>&1
rm -f "$tmp/ran"
if dpkg --unpack "$tmp/$pkg.deb" >/dev/null 2>&1 && dpkg_hooked --configure "$pkg" >"$tmp/conf.log" 2>&1 &&
   [ "$(tr '\n' ' ' <"$tmp/ran")" = "a/05-z a/10-x b/20-y " ]; then
	ok "dpkg_hooked --configure: the postinst ran both directories"
else
	nok "dpkg_hooked --configure failed: $(tail -n 3 "$tmp/conf.log" | tr '\n' ' ')"
fi

# setup installs and configures only through the helpers
setup_sh=${ARBT_SETUP_SH:-$here/scripts/setup.sh}
bad=$(grep -nE '(^|[;&|(]|then|do)[[:space:]]*(apt-get|apt|dpkg)[[:space:]]+([^[:space:]]+[[:space:]]+)*(install|-i|--install|--configure)\b' "$setup_sh")
if [ -z "$bad" ]; then
	ok "scripts/setup.sh: every apt-get install and dpkg --configure goes through apt_hooked/dpkg_hooked"
else
	nok "scripts/setup.sh runs apt or dpkg without the hooks path: $(tr '\n' ' ' <<<"$bad")"
fi
done_
