// SPDX-License-Identifier: Apache-2.0
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
)

// An uninstall (helm uninstall, kubectl delete -f daemonset.yaml) deletes
// the driver's DaemonSet; a rollout, a drain, a pod deleted by hand or a
// DaemonSet replaced by one of the same name (a reinstall, whose driver
// takes the classes over) do not. helm deletes the ClusterRole and the
// ServiceAccount right after the DaemonSet, before the pod's SIGTERM, so
// the driver watches its own DaemonSet from the start and remembers.
type dsWatch struct {
	c         kubernetes.Interface
	ns, pod   string
	deleted   atomic.Bool
	watching  chan struct{} // closed once the first watch is open (tests)
	retry     time.Duration
	mu        sync.Mutex // the owner, learnt by run, read at SIGTERM
	ownerName string
	ownerUID  types.UID
}

func (w *dsWatch) setOwner(name string, uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ownerName, w.ownerUID = name, uid
}

func (w *dsWatch) getOwner() (string, types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ownerName, w.ownerUID
}

func newDSWatch(c kubernetes.Interface, ns, pod string) *dsWatch {
	return &dsWatch{c: c, ns: ns, pod: pod, watching: make(chan struct{}), retry: 5 * time.Second}
}

// owner reads the pod's controlling DaemonSet; "" when it has none.
func (w *dsWatch) owner(ctx context.Context) (string, types.UID, error) {
	pod, err := w.c.CoreV1().Pods(w.ns).Get(ctx, w.pod, metav1.GetOptions{})
	if err != nil {
		return "", "", fmt.Errorf("reading the driver's pod %s/%s: %w", w.ns, w.pod, err)
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.Kind != "DaemonSet" {
		return "", "", nil
	}
	return ref.Name, ref.UID, nil
}

// run watches the DaemonSet until ctx ends or it is deleted.
func (w *dsWatch) run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	for ctx.Err() == nil {
		done, err := w.once(ctx)
		if done || ctx.Err() != nil {
			return
		}
		logger.Error(err, "watching the driver's DaemonSet (to tell an uninstall from a restart); again", "in", w.retry)
		select {
		case <-ctx.Done():
		case <-time.After(w.retry):
		}
	}
}

var errWatchEnded = errors.New("the watch ended")

// once reads and watches the DaemonSet; done when it is deleted or when
// there is none to watch.
func (w *dsWatch) once(ctx context.Context) (bool, error) {
	name, uid := w.getOwner()
	if name == "" {
		var err error
		if name, uid, err = w.owner(ctx); err != nil {
			return false, err
		}
		if name == "" {
			return true, nil
		}
		w.setOwner(name, uid)
	}
	ds, err := w.c.AppsV1().DaemonSets(w.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		w.deleted.Store(true)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading DaemonSet %s/%s: %w", w.ns, name, err)
	}
	if ds.UID != uid {
		return true, nil // replaced: not this driver's uninstall
	}
	if ds.DeletionTimestamp != nil {
		w.deleted.Store(true)
		return true, nil
	}
	wi, err := w.c.AppsV1().DaemonSets(w.ns).Watch(ctx, metav1.ListOptions{
		FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
		ResourceVersion: ds.ResourceVersion,
	})
	if err != nil {
		return false, fmt.Errorf("watching DaemonSet %s/%s: %w", w.ns, name, err)
	}
	defer wi.Stop()
	select {
	case <-w.watching:
	default:
		close(w.watching)
	}
	for {
		var ev watch.Event
		var open bool
		select {
		case <-ctx.Done():
			return true, nil
		case ev, open = <-wi.ResultChan():
		}
		if !open {
			return false, errWatchEnded
		}
		d, ok := ev.Object.(*appsv1.DaemonSet)
		if ev.Type == watch.Error || !ok || d.UID != uid {
			continue
		}
		if ev.Type == watch.Deleted || d.DeletionTimestamp != nil {
			w.deleted.Store(true)
			return true, nil
		}
	}
}

// uninstalled says, at SIGTERM, whether the DaemonSet was deleted: seen
// by the watch, or read now. An error means it cannot tell: the caller
// keeps everything, as on a restart.
func (w *dsWatch) uninstalled(ctx context.Context) (bool, error) {
	if w.deleted.Load() {
		return true, nil
	}
	name, uid := w.getOwner()
	if name == "" {
		var err error
		if name, uid, err = w.owner(ctx); err != nil || name == "" {
			return false, err
		}
	}
	ds, err := w.c.AppsV1().DaemonSets(w.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading DaemonSet %s/%s: %w", w.ns, name, err)
	}
	return ds.UID == uid && ds.DeletionTimestamp != nil, nil
}
