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
