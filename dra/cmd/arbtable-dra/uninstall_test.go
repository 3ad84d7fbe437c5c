// SPDX-License-Identifier: Apache-2.0
package main

import (
	"context"
	"errors"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

func driverPod(owner string) *corev1.Pod {
	ctl := true
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "arbtable-dra-x"}}
	if owner != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: owner,
			Name: "arbtable-dra", UID: "ds-1", Controller: &ctl}}
	}
	return p
}

func driverDS(uid types.UID, deleting bool) *appsv1.DaemonSet {
	d := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "arbtable-dra", UID: uid}}
	if deleting {
		now := metav1.Now()
		d.DeletionTimestamp = &now
		d.Finalizers = []string{"foregroundDeletion"}
	}
	return d
}

// At SIGTERM, read now (the watch saw nothing).
func TestUninstalled(t *testing.T) {
	tests := []struct {
		name    string
		objs    []runtime.Object
		want    bool
		wantErr bool
	}{
		{name: "a restart or rollout: the DaemonSet is there", objs: []runtime.Object{driverPod("DaemonSet"), driverDS("ds-1", false)}},
		{name: "an uninstall: the DaemonSet is gone", objs: []runtime.Object{driverPod("DaemonSet")}, want: true},
		{name: "foreground deletion: the DaemonSet is being deleted", objs: []runtime.Object{driverPod("DaemonSet"), driverDS("ds-1", true)}, want: true},
		{name: "a reinstall: another DaemonSet of the name", objs: []runtime.Object{driverPod("DaemonSet"), driverDS("ds-2", false)}},
		{name: "not a DaemonSet's pod", objs: []runtime.Object{driverPod("")}},
		{name: "the pod cannot be read (RBAC gone)", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newDSWatch(fake.NewClientset(tc.objs...), "kube-system", "arbtable-dra-x")
			got, err := w.uninstalled(context.Background())
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("uninstalled: %v, %v; want %v, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// helm uninstall: the DaemonSet deleted, then the pod and the RBAC,
// before the SIGTERM: the watch remembers the deletion, and the answer
// at SIGTERM needs no API call.
func TestWatchSeesTheDeletion(t *testing.T) {
	c := fake.NewClientset(driverPod("DaemonSet"), driverDS("ds-1", false))
	w := newDSWatch(c, "kube-system", "arbtable-dra-x")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }()
	<-w.watching
	if w.deleted.Load() {
		t.Fatal("deleted before any deletion")
	}
	if err := c.AppsV1().DaemonSets("kube-system").Delete(ctx, "arbtable-dra", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the watch did not end at the deletion")
	}
	// the RBAC is gone too: every read is forbidden now
	c.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: a.GetResource().Resource}, "", errors.New("no RBAC"))
	})
	if got, err := w.uninstalled(ctx); !got || err != nil {
		t.Fatalf("uninstalled: %v, %v; want true from the watch", got, err)
	}
}

// A rollout: the DaemonSet changes, the watch keeps watching, and at
// SIGTERM it is no uninstall.
func TestWatchRollout(t *testing.T) {
	c := fake.NewClientset(driverPod("DaemonSet"), driverDS("ds-1", false))
	w := newDSWatch(c, "kube-system", "arbtable-dra-x")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }()
	<-w.watching
	ds := driverDS("ds-1", false)
	ds.Spec.Template.Annotations = map[string]string{"kubectl.kubernetes.io/restartedAt": "now"}
	if _, err := c.AppsV1().DaemonSets("kube-system").Update(ctx, ds, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done
	if got, err := w.uninstalled(context.Background()); got || err != nil {
		t.Fatalf("uninstalled after a rollout: %v, %v", got, err)
	}
}
