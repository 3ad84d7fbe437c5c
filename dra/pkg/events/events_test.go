// SPDX-License-Identifier: Apache-2.0
package events

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// The Recorder writes a core/v1 Warning Event on the object, through the
// verbs rbac.yaml grants (create; patch when an Event repeats), and
// nothing else.
func TestRecorderWrites(t *testing.T) {
	cs := fake.NewClientset()
	got := make(chan k8stesting.Action, 10)
	cs.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		got <- a
		return false, nil, nil
	})
	r := NewRecorder(cs, "node1")
	defer r.Shutdown()
	obj := Claim("ns", "c1", "u1")
	r.Warning(obj, PrepareRefused, "share 300 above eth0's maxShare 255")
	r.Warning(obj, PrepareRefused, "share 300 above eth0's maxShare 255")
	var verbs []string
	var ev *corev1.Event
	for len(verbs) < 2 {
		select {
		case a := <-got:
			if a.GetResource().Resource != "events" || a.GetResource().Group != "" {
				t.Fatalf("%s on %v: only core events", a.GetVerb(), a.GetResource())
			}
			verbs = append(verbs, a.GetVerb())
			if c, ok := a.(k8stesting.CreateAction); ok && ev == nil {
				ev = c.GetObject().(*corev1.Event)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("after %v, no more Events written", verbs)
		}
	}
	if verbs[0] != "create" || verbs[1] != "patch" {
		t.Errorf("verbs %v, want [create patch]", verbs)
	}
	if ev == nil || ev.Type != corev1.EventTypeWarning || ev.Reason != PrepareRefused ||
		ev.Message != "share 300 above eth0's maxShare 255" || ev.Source.Component != "arbtable-dra" || ev.Source.Host != "node1" ||
		ev.InvolvedObject.Kind != "ResourceClaim" || ev.InvolvedObject.Namespace != "ns" || ev.InvolvedObject.Name != "c1" ||
		ev.InvolvedObject.UID != "u1" || ev.InvolvedObject.APIVersion != "resource.k8s.io/v1" || ev.Namespace != "ns" {
		t.Errorf("Event %+v", ev)
	}
}
