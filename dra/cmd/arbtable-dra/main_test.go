// SPDX-License-Identifier: Apache-2.0

package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseNICs(t *testing.T) {
	tests := []struct {
		spec    string
		names   []string
		rates   map[string]uint64
		wantErr bool
	}{
		{spec: "eth0", names: []string{"eth0"}, rates: map[string]uint64{}},
		{spec: "eth0,eth1=200M", names: []string{"eth0", "eth1"}, rates: map[string]uint64{"eth1": 25000000}},
		{spec: "enp0s9=10G, arbt-n2=100M", names: []string{"enp0s9", "arbt-n2"},
			rates: map[string]uint64{"enp0s9": 1250000000, "arbt-n2": 12500000}},
		{spec: "eth0=fast", wantErr: true},
		{spec: "eth0=1", wantErr: true},
		{spec: "eth0,,eth1", wantErr: true},
		{spec: "=10G", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			names, rates, err := parseNICs(tc.spec)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if !reflect.DeepEqual(names, tc.names) || !reflect.DeepEqual(rates, tc.rates) {
				t.Errorf("got %v %v, want %v %v", names, rates, tc.names, tc.rates)
			}
		})
	}
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"127.0.0.1:9877", "127.0.0.1:9877", ""},
		{"10.0.0.5:9877", "10.0.0.5:9877", ""},
		{":9877", ":9877", ""},
		{"[fd00::5]:9877", "[fd00::5]:9877", ""},
		{"fd00::5:9877", "[fd00::5]:9877", ""}, // $(HOST_IP):9877 on an IPv6 node
		{"9877", "", "not HOST:PORT"},
		{"host:x:9877", "", "not HOST:PORT"},
	} {
		got, err := listenAddr(tc.in)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("listenAddr(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// --root-mode's values, and --child by name with lockless refused at
// start; with auto the child applies to the locked roots.
func TestRootModeFlag(t *testing.T) {
	tests := []struct {
		mode, child string
		childSet    bool
		want, err   string
	}{
		{mode: "auto", child: "fq_codel", want: "auto"},
		{mode: "auto", child: "fq_codel", childSet: true, want: "auto"},
		{mode: "", child: "fq_codel", want: "auto"},
		{mode: "locked", child: "fq", childSet: true, want: "locked"},
		{mode: "lockless", child: "fq_codel", want: "lockless"}, // the default --child: none on lockless
		{mode: "lockless", child: "", childSet: true, want: "lockless"},
		{mode: "lockless", child: "fq_codel", childSet: true, err: "--child=fq_codel with --root-mode=lockless"},
		{mode: "lockless", child: "pfifo", childSet: true, err: "pass --root-mode=locked (or auto) for pfifo"},
		{mode: "lock-free", child: "fq_codel", err: `--root-mode: root mode "lock-free": auto, locked or lockless`},
		{mode: "LOCKED", child: "fq_codel", err: "auto, locked or lockless"},
	}
	for _, tt := range tests {
		got, err := rootMode(tt.mode, tt.child, tt.childSet)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("rootMode(%q, %q, %v): %v, want an error with %q", tt.mode, tt.child, tt.childSet, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("rootMode(%q, %q, %v) = %q, %v; want %q", tt.mode, tt.child, tt.childSet, got, err, tt.want)
		}
	}
}
