// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/kernel"
)

// failingRelease is the fake kernel whose Release fails.
type failingRelease struct{ kernel.Kernel }

func (failingRelease) Release(nic string, classid uint32) error {
	return fmt.Errorf("deleting class %x on %s: device or resource busy", classid, nic)
}

// failingUnmark is a kernel whose Unmark fails: PodDown only unmarks (the
// class is the claim's until Unprepare).
type failingUnmark struct{ kernel.Kernel }

func (failingUnmark) Unmark(string, uint16) error { return errors.New("filter busy") }

// failRelease restarts the driver on a kernel whose Release fails (its
// records and the classes stay).
func (e *env) failRelease(t *testing.T) {
	t.Helper()
	d, err := New(e.cfg, failingRelease{e.k}, e.pub, e.status)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d.Events = e.d.Events
	e.d = d
}

// Every refusal and failure reaches the claim and its pods as a Warning
// with the error users need; a success tells nobody.
func TestEvents(t *testing.T) {
	bad := `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":256}`
	tests := []struct {
		name string
		run  func(t *testing.T, e *env) error
		want func(err error) []events.Event
	}{
		{"prepared: none", func(t *testing.T, e *env) error { return e.prepare(t, claim("a", "eth0", 4, 0, "pod-a")) },
			func(error) []events.Event { return nil }},
		{"prepare refused: the claim and each pod", func(t *testing.T, e *env) error {
			c := shareClaim("j", "eth1", 0, bad)
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: "pod-j2", UID: "pod-j2"},
				resourceapi.ResourceClaimConsumerReference{Resource: "podgroups", Name: "g", UID: "g"})
			return e.prepare(t, c)
		}, func(err error) []events.Event {
			return []events.Event{
				{Object: events.Claim("ns", "claim-j", "j"), Reason: events.PrepareRefused, Message: err.Error()},
				{Object: events.Pod("ns", "pod-j", "pod-j"), Reason: events.PrepareRefused, Message: err.Error()},
				{Object: events.Pod("ns", "pod-j2", "pod-j2"), Reason: events.PrepareRefused, Message: err.Error()},
			}
		}},
		{"pod up failed: the pod and its claim", func(t *testing.T, e *env) error {
			if err := e.prepare(t, claim("a", "eth0", 4, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			e.k.Missing["vethA"] = true
			err := e.d.PodUp(context.Background(), "pod-a", "vethA", nil)
			if err == nil {
				t.Fatal("PodUp marked a missing interface")
			}
			e.d.PodFailed(events.Pod("ns", "web", "pod-a"), events.ClassFailed, err)
			return err
		}, func(err error) []events.Event {
			return []events.Event{
				{Object: events.Pod("ns", "web", "pod-a"), Reason: events.ClassFailed, Message: err.Error()},
				{Object: events.Claim("ns", "claim-a", "a"), Reason: events.ClassFailed, Message: err.Error()},
			}
		}},
		{"pod up failed, pod without claims: the pod only", func(t *testing.T, e *env) error {
			err := errors.New("boom")
			e.d.PodFailed(events.Pod("ns", "web", "nobody"), events.ClassFailed, err)
			return err
		}, func(err error) []events.Event {
			return []events.Event{{Object: events.Pod("ns", "web", "nobody"), Reason: events.ClassFailed, Message: "boom"}}
		}},
		{"unprepare failed: the claim", func(t *testing.T, e *env) error {
			if err := e.prepare(t, claim("a", "eth0", 4, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(context.Background(), "pod-a", "vethA", nil); err != nil {
				t.Fatal(err)
			}
			e.failRelease(t)
			res, err := e.d.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: "a"}})
			if err != nil || res["a"] == nil {
				t.Fatalf("unprepare with a failing release: %v, %v", err, res["a"])
			}
			return res["a"]
		}, func(err error) []events.Event {
			return []events.Event{{Object: events.Claim("ns", "claim-a", "a"), Reason: events.ReleaseFailed, Message: err.Error()}}
		}},
		{"pod down failed: the pod and its claim", func(t *testing.T, e *env) error {
			if err := e.prepare(t, claim("a", "eth0", 4, 0, "pod-a")); err != nil {
				t.Fatal(err)
			}
			if err := e.d.PodUp(context.Background(), "pod-a", "vethA", nil); err != nil {
				t.Fatal(err)
			}
			d, err := New(e.cfg, failingUnmark{e.k}, e.pub, e.status)
			if err != nil {
				t.Fatal(err)
			}
			d.Events = e.d.Events
			e.d = d
			err = e.d.PodDown(context.Background(), "pod-a")
			if err == nil {
				t.Fatal("PodDown with a failing unmark")
			}
			e.d.PodFailed(events.Pod("ns", "web", "pod-a"), events.ReleaseFailed, err)
			return err
		}, func(err error) []events.Event {
			return []events.Event{
				{Object: events.Pod("ns", "web", "pod-a"), Reason: events.ReleaseFailed, Message: err.Error()},
				{Object: events.Claim("ns", "claim-a", "a"), Reason: events.ReleaseFailed, Message: err.Error()},
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			f := &events.Fake{}
			e.d.Events = f
			err := tc.run(t, e)
			if got, want := f.Events(), tc.want(err); !reflect.DeepEqual(got, want) {
				t.Errorf("events\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
