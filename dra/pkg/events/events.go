// SPDX-License-Identifier: Apache-2.0

// Package events tells users, as Kubernetes Events on their pods and
// claims, why the driver refused or failed them: what `kubectl describe`
// shows beside the kubelet's and the runtime's own messages.
package events

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Reasons of the driver's Events (Warning type).
const (
	// PrepareRefused: NodePrepareResources refused the claim (a second
	// arbtable device, a share above maxShare, a rate on a share, ...).
	PrepareRefused = "PrepareRefused"
	// ClassFailed: the pod's class could not be admitted or its traffic
	// marked when its sandbox started; the runtime fails the sandbox.
	ClassFailed = "ClassFailed"
	// ReleaseFailed: the pod's class or mark could not be released when
	// its sandbox stopped, or the claim's at Unprepare; it stays held
	// until a retry or the driver's next reconciliation.
	ReleaseFailed = "ReleaseFailed"
)

// Object names what an Event is about.
type Object struct {
	Kind      string // Pod or ResourceClaim
	Namespace string
	Name      string
	UID       string
}

// Pod and Claim return an Object of that kind.
func Pod(ns, name, uid string) Object {
	return Object{Kind: "Pod", Namespace: ns, Name: name, UID: uid}
}
func Claim(ns, name, uid string) Object {
	return Object{Kind: "ResourceClaim", Namespace: ns, Name: name, UID: uid}
}

func (o Object) ref() *corev1.ObjectReference {
	r := &corev1.ObjectReference{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, UID: types.UID(o.UID), APIVersion: "v1"}
	if o.Kind == "ResourceClaim" {
		r.APIVersion = "resource.k8s.io/v1"
	}
	return r
}

// Sink takes the driver's warnings.
type Sink interface {
	Warning(obj Object, reason, message string)
}

// Recorder is the Sink that writes core/v1 Events through the API server
// (client-go's EventRecorder: create, and patch for a repeated Event).
type Recorder struct {
	b record.EventBroadcaster
	r record.EventRecorder
}

// NewRecorder starts a broadcaster writing with client as component
// arbtable-dra on node.
func NewRecorder(client kubernetes.Interface, node string) *Recorder {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	return &Recorder{b: b, r: b.NewRecorder(runtime.NewScheme(), corev1.EventSource{Component: "arbtable-dra", Host: node})}
}

// Warning implements Sink.
func (r *Recorder) Warning(obj Object, reason, message string) {
	r.r.Event(obj.ref(), corev1.EventTypeWarning, reason, message)
}

// Shutdown stops the broadcaster (what it queued may be lost).
func (r *Recorder) Shutdown() { r.b.Shutdown() }

// Event is one warning a Fake took.
type Event struct {
	Object
	Reason, Message string
}

// Fake is a Sink for tests: it keeps what it is told.
type Fake struct {
	mu  sync.Mutex
	Got []Event
}

// Warning implements Sink.
func (f *Fake) Warning(obj Object, reason, message string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Got = append(f.Got, Event{obj, reason, message})
}

// Events returns a copy of what it took.
func (f *Fake) Events() []Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Event(nil), f.Got...)
}
