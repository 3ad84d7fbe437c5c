// SPDX-License-Identifier: Apache-2.0
package nriplugin

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/checkpoint"
	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/kernel"
	"arbtable.dev/dra/pkg/podnet"
	drslices "arbtable.dev/dra/pkg/slices"
)

// finder answers from a table: netns path -> host interface or error.
type finder struct {
	ifs   map[string]string
	calls int
}

func (f *finder) HostInterface(ns string) (string, error) {
	f.calls++
	if h, ok := f.ifs[ns]; ok {
		return h, nil
	}
	return "", errors.New("eth0 in " + ns + " is a ipvlan: " + podnet.ErrUnclassifiable.Error())
}

type nopPub struct{}

func (nopPub) PublishResources(context.Context, resourceslice.DriverResources) error { return nil }

type nopStatus struct{}

func (nopStatus) WriteStatus(context.Context, checkpoint.Record, driver.DeviceStatus) error {
	return nil
}

func pod(uid, ns string) *api.PodSandbox {
	return &api.PodSandbox{Uid: uid, Name: "p-" + uid, Namespace: "default",
		Linux: &api.LinuxPodSandbox{Namespaces: []*api.LinuxNamespace{{Type: "ipc", Path: "/x"}, {Type: "network", Path: ns}}}}
}

func setup(t *testing.T) (*Plugin, *kernel.Fake, *finder) {
	t.Helper()
	k := kernel.NewFake(map[string]arbcore.Params{"eth0": {Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}})
	cfg := driver.Config{NodeName: "n", NICs: []string{"eth0"},
		Root:     kernel.RootConfig{Handle: 0x10000, SystemMinor: 0xfffe, SystemShare: 64},
		MarkMask: 0x7f, MarkPrio: 1, FwPrio: 1, MinorBase: 0x100,
		Checkpoint: filepath.Join(t.TempDir(), "cp.json")}
	d, err := driver.New(cfg, k, nopPub{}, nopStatus{})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "c", UID: "claim1"},
		Status: resourceapi.ResourceClaimStatus{
			Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{
				Request: "net", Driver: drslices.DriverName, Pool: drslices.PoolName("n", "eth0"), Device: drslices.DeviceName("eth0", 4, 0)}}}},
			ReservedFor: []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "p", UID: types.UID("withclaim")}},
		}}
	res, err := d.PrepareResourceClaims(context.Background(), []*resourceapi.ResourceClaim{c})
	if err != nil || res["claim1"].Err != nil {
		t.Fatal(err, res["claim1"].Err)
	}
	f := &finder{ifs: map[string]string{"/run/netns/a": "vethA"}}
	return &Plugin{D: d, Net: f}, k, f
}

func TestRunPodSandbox(t *testing.T) {
	tests := []struct {
		name      string
		pod       *api.PodSandbox
		wantErr   string
		wantFree  int
		wantLooks int // netns lookups
	}{
		{"pod without claim on ipvlan: untouched", pod("noclaim", "/run/netns/ipvlan"), "", 64, 0},
		{"pod without claim, host network: untouched", &api.PodSandbox{Uid: "hostnet"}, "", 64, 0},
		{"pod with claim on veth: admitted", pod("withclaim", "/run/netns/a"), "", 60, 1},
		{"pod with claim on ipvlan: fails clearly", pod("withclaim", "/run/netns/ipvlan"), "cannot be classified", 64, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, k, f := setup(t)
			err := p.RunPodSandbox(context.Background(), tc.pod)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if got := k.FreeSlots("eth0"); got != tc.wantFree {
				t.Fatalf("free %d, want %d", got, tc.wantFree)
			}
			if f.calls != tc.wantLooks {
				t.Fatalf("%d netns lookups, want %d", f.calls, tc.wantLooks)
			}
			// stop and remove unmark, twice is fine; the class stays
			// the claim's until Unprepare
			for _, fn := range []func(context.Context, *api.PodSandbox) error{p.StopPodSandbox, p.RemovePodSandbox} {
				if err := fn(context.Background(), tc.pod); err != nil {
					t.Fatal(err)
				}
			}
			if got := k.FreeSlots("eth0"); got != tc.wantFree || len(k.Marks) != 0 {
				t.Fatalf("after stop: free %d, marks %v", got, k.Marks)
			}
		})
	}
}

// syncWait remembers the channel of the driver's background Synchronize.
type syncWait struct {
	*driver.Driver
	done <-chan struct{}
}

func (s *syncWait) Synchronize(ctx context.Context, running []driver.Sandbox) <-chan struct{} {
	s.done = s.Driver.Synchronize(ctx, running)
	return s.done
}

func TestSynchronize(t *testing.T) {
	p, k, f := setup(t)
	sw := &syncWait{Driver: p.D.(*driver.Driver)}
	p.D = sw
	p.Connected = make(chan struct{})
	// the runtime reports the pod running after a driver restart: the
	// class is admitted; a pod without a claim is not looked at
	if _, err := p.Synchronize(context.Background(), []*api.PodSandbox{pod("withclaim", "/run/netns/a"), pod("other", "/run/netns/ipvlan")}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Connected:
	default:
		t.Fatal("Connected not closed at the first Synchronize")
	}
	<-sw.done
	if k.FreeSlots("eth0") != 60 || k.Marks["vethA"] == 0 || f.calls != 1 {
		t.Fatalf("free %d marks %v, %d netns lookups", k.FreeSlots("eth0"), k.Marks, f.calls)
	}
	// then it is gone: unmarked before Synchronize returns (before a
	// new sandbox can start), the class the claim's until Unprepare; a
	// second Synchronize (a runtime reconnect) does not close Connected
	// again
	if _, err := p.Synchronize(context.Background(), nil, nil); err != nil {
		t.Fatal(err)
	}
	if k.FreeSlots("eth0") != 60 || len(k.Marks) != 0 {
		t.Fatalf("free %d marks %v", k.FreeSlots("eth0"), k.Marks)
	}
	<-sw.done
}

// A failed pod is told by its name (what kubectl describe finds), once;
// a pod that came up is not.
func TestRunPodSandboxFailedHook(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  *api.PodSandbox
		want []events.Object
	}{
		{"up", pod("withclaim", "/run/netns/a"), nil},
		{"failed", pod("withclaim", "/run/netns/ipvlan"), []events.Object{events.Pod("default", "p-withclaim", "withclaim")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _, _ := setup(t)
			var got []events.Object
			p.Failed = func(o events.Object, reason string, err error) {
				if err == nil || reason != events.ClassFailed {
					t.Errorf("told %q, %v", reason, err)
				}
				got = append(got, o)
			}
			_ = p.RunPodSandbox(context.Background(), tc.pod)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("told %v, want %v", got, tc.want)
			}
		})
	}
}

// downFails is a driver whose PodDown fails.
type downFails struct{ Driver }

func (downFails) PodDown(context.Context, string) error { return errors.New("class busy") }

// A release that fails at sandbox stop or removal is told, with the pod's
// name, as ReleaseFailed.
func TestDownFailedHook(t *testing.T) {
	p, _, _ := setup(t)
	p.D = downFails{p.D}
	type told struct {
		o      events.Object
		reason string
		msg    string
	}
	var got []told
	p.Failed = func(o events.Object, reason string, err error) { got = append(got, told{o, reason, err.Error()}) }
	for _, fn := range []func(context.Context, *api.PodSandbox) error{p.StopPodSandbox, p.RemovePodSandbox} {
		if err := fn(context.Background(), pod("withclaim", "/run/netns/a")); err == nil {
			t.Fatal("a failed release returned nil")
		}
	}
	w := told{events.Pod("default", "p-withclaim", "withclaim"), events.ReleaseFailed, "class busy"}
	if !reflect.DeepEqual(got, []told{w, w}) {
		t.Errorf("told %+v, want %+v twice", got, w)
	}
}
