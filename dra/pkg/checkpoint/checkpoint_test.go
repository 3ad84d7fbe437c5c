// SPDX-License-Identifier: Apache-2.0
package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		recs map[string]Record
	}{
		{"empty", map[string]Record{}},
		{"one prepared", map[string]Record{"a": {ClaimUID: "a", Namespace: "ns", Name: "c", PodUIDs: []string{"p"}, NIC: "eth0", Device: "eth0-s04-01", Slots: 4, RateBytes: 12345}}},
		{"admitted and prepared", map[string]Record{
			"a": {ClaimUID: "a", NIC: "eth0", Slots: 1, ClassID: 0x10101, Mark: 3, Ifaces: map[string]string{"p1": "veth1"}, PodUIDs: []string{"p1"}},
			"b": {ClaimUID: "b", NIC: "eth1", Slots: 64, PodUIDs: []string{"p2", "p3"}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "sub", "checkpoint.json")
			if err := Save(p, tc.recs); err != nil {
				t.Fatal(err)
			}
			got, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.recs) {
				t.Fatalf("got %+v, want %+v", got, tc.recs)
			}
			ents, _ := os.ReadDir(filepath.Dir(p))
			if len(ents) != 1 {
				t.Fatalf("temporary files left: %v", ents)
			}
		})
	}
}

func TestMissingIsEmpty(t *testing.T) {
	got, err := Load(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// A crash between writing the temporary file and the rename leaves the old
// file whole; a torn or edited file is refused, never half read.
func TestCrashSafety(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "checkpoint.json")
	old := map[string]Record{"a": {ClaimUID: "a", NIC: "eth0", Slots: 2}}
	if err := Save(p, old); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(p)
	// a crashed writer's leftover temporary file does not matter
	if err := os.WriteFile(filepath.Join(dir, "checkpoint.json.tmp123"), good[:len(good)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil || !reflect.DeepEqual(got, old) {
		t.Fatalf("after a crashed write: %v, %v", got, err)
	}
	tests := []struct {
		name string
		data string
		want string
	}{
		{"torn", string(good[:len(good)-20]), "parsing"},
		{"edited", strings.Replace(string(good), `"slots": 2`, `"slots": 4`, 1), "checksum"},
		{"future version", strings.Replace(string(good), `"version": 1`, `"version": 9`, 1), "version 9"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(tc.data), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Load: %v, want ErrCorrupt with %q", err, tc.want)
			}
		})
	}
}
