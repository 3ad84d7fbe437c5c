// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
)

// The opaque ClassConfig's schema. deploy/kubernetes/dra/claim-policy.yaml
// refuses at admission what DecodeClassConfig refuses at Prepare; the
// manifests tests run the policy's CEL against this decoder, case by case.
const (
	ConfigAPIVersion = "arbtable.dev/v1alpha1"
	ConfigKind       = "ClassConfig"
	// MaxShare is the largest share any NIC takes: the module's maxweight
	// is a u8. A NIC's own maxShare attribute (its root's maxweight) may
	// be lower; Prepare checks that one.
	MaxShare = 255
)

// configFields are ClassConfig's JSON keys, exactly (encoding/json would
// take "Share" for "share"; the API server's CEL would not).
var configFields = []string{"apiVersion", "kind", "rateBits", "share"}

// DecodeClassConfig decodes an opaque ClassConfig strictly: an object
// with exactly known keys, none null, apiVersion and kind checked,
// whole non-negative numbers, share at most MaxShare, and not both a
// rate and a share (each is for one kind of device).
func DecodeClassConfig(raw []byte) (ClassConfig, error) {
	var cc ClassConfig
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return cc, fmt.Errorf("not a %s object", ConfigKind)
	}
	var unknown []string
	for k, v := range fields {
		if !slices.Contains(configFields, k) {
			unknown = append(unknown, k)
		} else if string(bytes.TrimSpace(v)) == "null" {
			return cc, fmt.Errorf("%s: %s is null", ConfigKind, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return cc, fmt.Errorf("%s: unknown fields %q (known: apiVersion, kind, rateBits, share)", ConfigKind, unknown)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cc); err != nil {
		return cc, fmt.Errorf("%s: %w", ConfigKind, err)
	}
	if cc.APIVersion != ConfigAPIVersion || cc.Kind != ConfigKind {
		return cc, fmt.Errorf("kind %q, apiVersion %q: want %s, %s", cc.Kind, cc.APIVersion, ConfigKind, ConfigAPIVersion)
	}
	if cc.Share > MaxShare {
		return cc, fmt.Errorf("%s: share %d outside 0..%d", ConfigKind, cc.Share, MaxShare)
	}
	if cc.Share > 0 && cc.RateBits > 0 {
		return cc, fmt.Errorf("%s: rateBits and share together: a rate is for a block (arbtable.dev), a share for a share device (share.arbtable.dev)", ConfigKind)
	}
	return cc, nil
}
