#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The files the VM suite's process starts read, one path per line, for
# scripts/vm.sh to copy into the guest's memory before the tests run.
#
# The guest's root is the host's over 9p; vng mounts an overlay with a
# tmpfs upper layer on /usr and /etc.  Every exec of a dynamically linked
# program opens its binary, /etc/ld.so.cache and each library it needs,
# and each open is a 9p request the TCG guest waits for, page cache or
# not.  A file copied up into the overlay's tmpfs (an attribute change:
# `touch -a` does it) is opened without one.  In a 7.2 guest beside
# another (2026-11-30, 30 starts each) `tc -V` took 227 ms without and
# 197 ms with, `ip -V` 179 and 158, mawk 129 and 110, sed 180 and 123,
# /bin/true 112 and 83; two guests side by side ran test_capacity in
# 118 s without and 96 s with, test_cni in 187 and 161.
#
# Computed here on the host, where it costs nothing: the guest sees the
# same files.  Only paths under /usr and /etc (the overlays) are listed.
set -u
# the system's commands, as the guest finds them (not a user's own python)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# Go programs (podman, containerd, ctr, runc) are left out: static, one
# open per start, and 50 MB to copy
CMDS="bash sh tc ip bridge ss ping ethtool sysctl nft iptables modprobe modinfo insmod
dmesg ps kill pkill awk mawk gawk sed grep cat head tail tr cut sort uniq wc seq env
dirname basename readlink mktemp rm cp mv ln mkdir rmdir touch ls stat find xargs
sleep date timeout nproc taskset mount umount file diff cmp od jq nc
python3 iperf3 crun"

bins=()
for c in $CMDS; do
	p=$(command -v "$c" 2>/dev/null) || continue
	case $p in /*) bins+=("$(readlink -f "$p")") ;; esac
done
{
	printf '%s\n' "${bins[@]}" /etc/ld.so.cache /etc/nsswitch.conf /etc/passwd /etc/group
	# the shared objects they load (ldd: the dynamic loader's own answer)
	# and the project's own programs' (libnl, json-c; the programs
	# themselves are in the tree, not in an overlay)
	ROOT=$(cd "$(dirname "$0")/.." && pwd)
	ldd "${bins[@]}" "$ROOT"/build/tools/arbtablectl "$ROOT"/build/cni/arbtable-cni 2>/dev/null |
		grep -oE '/[^ ]+\.so[^ ]*' | xargs -r readlink -f
	# what a python3 start imports, and what the suite's python imports
	/usr/bin/python3 -c '
import sys, os, socket, json, struct, subprocess, select, time, re, random, errno, signal, argparse, ipaddress, hashlib
for m in list(sys.modules.values()):
    for a in ("__file__", "__cached__"):
        f = getattr(m, a, None)
        if f and os.path.isfile(f):
            print(os.path.realpath(f))' 2>/dev/null
	ls -d /etc/iproute2/* /usr/share/iproute2/* /usr/lib/tc/* 2>/dev/null
} | grep -E '^/(usr|etc)/' | sort -u | while read -r f; do
	[ -f "$f" ] && printf '%s\n' "$f"
done
