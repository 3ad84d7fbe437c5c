// SPDX-License-Identifier: GPL-2.0
package manifests

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	drcel "k8s.io/dynamic-resource-allocation/cel"

	appsv1 "k8s.io/api/apps/v1"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/slices"
)

const dir = "../../../deploy/kubernetes/dra"

func decodeAll(t *testing.T, path string) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, obj)
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	ex, _ := filepath.Glob(filepath.Join(dir, "examples", "*.yaml"))
	files = append(files, ex...)
	if len(files) < 7 {
		t.Fatalf("only %d manifests found in %s", len(files), dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if objs := decodeAll(t, f); len(objs) == 0 {
				t.Fatal("no objects")
			}
		})
	}
}

// The DaemonSet runs the image build-image.sh makes (localhost/arbtable-dra
// at the release in VERSION) by its binary: the image has no entrypoint,
// so args alone would be taken for the command.
func TestDaemonSetImage(t *testing.T) {
	v, err := os.ReadFile("../../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := "localhost/arbtable-dra:" + strings.TrimSpace(string(v))
	var found bool
	for _, o := range decodeAll(t, filepath.Join(dir, "daemonset.yaml")) {
		ds, ok := o.(*appsv1.DaemonSet)
		if !ok {
			continue
		}
		found = true
		c := ds.Spec.Template.Spec.Containers[0]
		if c.Image != want {
			t.Errorf("image %q, want %q (VERSION)", c.Image, want)
		}
		if len(c.Command) != 1 || c.Command[0] != "/usr/bin/arbtable-dra" {
			t.Errorf("command %q, want [/usr/bin/arbtable-dra]", c.Command)
		}
	}
	if !found {
		t.Fatal("no DaemonSet in daemonset.yaml")
	}
}

// The examples' selectors, evaluated by the scheduler's own CEL code on
// the devices published for a 10gbit and a 1gbit NIC, match exactly the
// blocks whose rate and bound meet the request.
func TestExampleSelectors(t *testing.T) {
	nics := []slices.NIC{
		{Name: "eth0", Params: arbcore.Params{Rate: 1250000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}, FreeSlots: 64, FreeClasses: 64},
		{Name: "eth1", Params: arbcore.Params{Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}, FreeSlots: 64, FreeClasses: 64},
	}
	for _, name := range []string{"claimtemplate.yaml", "claimtemplate-exact-rate.yaml"} {
		t.Run(name, func(t *testing.T) {
			objs := decodeAll(t, filepath.Join(dir, "examples", name))
			tpl := objs[0].(*resourceapi.ResourceClaimTemplate)
			expr := tpl.Spec.Spec.Devices.Requests[0].Exactly.Selectors[0].CEL.Expression
			if !strings.Contains(expr, "rateBits >= 200000000") || !strings.Contains(expr, "boundNs <= 500000") {
				t.Fatalf("selector %q", expr)
			}
			prog := drcel.GetCompiler(drcel.Features{}).CompileCELExpression(expr, drcel.Options{})
			if prog.Error != nil {
				t.Fatal(prog.Error)
			}
			matched := map[string]int{}
			for _, nic := range nics {
				blocks, err := slices.Blocks(nic.Params)
				if err != nil {
					t.Fatal(err)
				}
				want := map[int]bool{}
				for _, b := range blocks {
					want[b.Slots] = b.RateBytes*8 >= 200000000 && b.BoundNs <= 500000
				}
				for _, d := range slices.Devices(nic, blocks) {
					ok, _, err := prog.DeviceMatches(context.Background(), drcel.Device{Driver: slices.DriverName, Attributes: d.Attributes})
					if err != nil {
						t.Fatal(err)
					}
					n := int(*d.Attributes[slices.AttrSlots].IntValue)
					if ok != want[n] {
						t.Fatalf("%s: device %s matched=%v, rate/bound say %v", nic.Name, d.Name, ok, want[n])
					}
					if ok {
						matched[nic.Name]++
					}
				}
			}
			t.Logf("devices matching 200 Mbit/s within 500 us: %v", matched)
			if matched["eth0"] == 0 {
				t.Fatal("the 10gbit NIC offers no block for the example")
			}
		})
	}
}
