#!/usr/bin/env bash
# oci_archive ROOTFS NAME CMD_JSON HISTORY OUT: an OCI image layout archive
# OUT (for `ctr images import`, no registry behind it) of one
# uncompressed, reproducible layer (sorted, owned by root, mtime 0) made
# of the directory ROOTFS; NAME is its reference (io.containerd.image.name),
# CMD_JSON its config's Cmd (a JSON array), HISTORY its created_by.
# Sourced by scripts/runtimes-setup.sh (the tenant image),
# scripts/k8s-build.sh (the test cluster's pause image) and the
# arbtable-dra image build.
oci_archive() {
	local r=$1 name=$2 cmd=$3 hist=$4 out=$5 d l ld ls cd cs md ms
	d=$(mktemp -d)
	l=$d/layout
	mkdir -p "$l/blobs/sha256"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$r" -cf "$d/layer.tar" .
	_oci_blob() { # FILE: into the layout; prints "sha256:HEX SIZE"
		local h
		h=$(sha256sum "$1" | cut -d' ' -f1)
		cp "$1" "$l/blobs/sha256/$h"
		echo "sha256:$h $(stat -c %s "$1")"
	}
	read -r ld ls <<<"$(_oci_blob "$d/layer.tar")"
	printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/bin:/usr/bin:/bin"],"Cmd":%s},"rootfs":{"type":"layers","diff_ids":["%s"]},"history":[{"created_by":"%s"}]}' \
		"$cmd" "$ld" "$hist" >"$d/config.json"
	read -r cd cs <<<"$(_oci_blob "$d/config.json")"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"%s","size":%s}]}' \
		"$cd" "$cs" "$ld" "$ls" >"$d/manifest.json"
	read -r md ms <<<"$(_oci_blob "$d/manifest.json")"
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$md" "$ms" "$name" "${name##*:}" >"$l/index.json"
	printf '{"imageLayoutVersion":"1.0.0"}' >"$l/oci-layout"
	tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$l" -cf "$out" oci-layout index.json blobs
	rm -rf "$d"
}
