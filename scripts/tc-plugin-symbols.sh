#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# tc-plugin-symbols.sh PLUGIN TC: every symbol PLUGIN (a tc q_*.so) takes
# from tc at load time is exported by the TC binary; prints the ones that
# are not and exits 1. The plugin for a tc built from another tc's
# headers (mk/plugin.mk) is checked with it: a missing symbol would
# otherwise only show as a dlopen failure when tc first loads it.
set -euo pipefail
plugin=$1 tc=$2
imports=$(nm -D --undefined-only "$plugin" | awk '$1 == "U" && $2 !~ /@/ { print $2 }' | sort -u)
exports=$(nm -D --defined-only "$tc" | awk '{ sub(/@.*/, "", $3); print $3 }' | sort -u)
missing=$(comm -23 <(echo "$imports") <(echo "$exports"))
if [ -n "$missing" ]; then
	echo "$plugin imports symbols $tc does not export:" $missing >&2
	exit 1
fi
echo "$plugin: all $(echo "$imports" | wc -l) symbols it takes from tc are exported by $tc"
