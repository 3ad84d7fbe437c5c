// SPDX-License-Identifier: Apache-2.0

// Package nriplugin is arbtable-dra's NRI plugin: when a pod's network
// exists (RunPodSandbox) it has the driver admit and mark the pod's claim;
// when the sandbox stops or goes away it has it released; after a start,
// Synchronize reconciles the records with the sandboxes that run.
package nriplugin

import (
	"context"
	"fmt"
	"sync"

	"github.com/containerd/nri/pkg/api"
	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/podnet"
)

// Driver is what the plugin asks of the driver.
type Driver interface {
	Resolve(ctx context.Context, podUID, namespace, name string) (bool, error)
	PodUp(ctx context.Context, podUID, hostIf string, ifErr error) error
	PodDown(ctx context.Context, podUID string) error
	Synchronize(ctx context.Context, running []driver.Sandbox) <-chan struct{}
}

// Plugin handles the NRI events.
type Plugin struct {
	D   Driver
	Net podnet.Finder
	// Connected, if set, is closed at the first Synchronize: the runtime
	// has registered the plugin, so every later sandbox gets the hook
	// (main registers the kubelet plugin only then)
	Connected chan struct{}
	once      sync.Once
	// Failed, when set, is told of a pod PodUp (events.ClassFailed) or
	// PodDown (events.ReleaseFailed) failed
	Failed func(pod events.Object, reason string, err error)
}

// NetnsPath returns the sandbox's network namespace path.
func NetnsPath(pod *api.PodSandbox) string {
	if pod.GetLinux() == nil {
		return ""
	}
	for _, ns := range pod.GetLinux().GetNamespaces() {
		if ns.GetType() == "network" {
			return ns.GetPath()
		}
	}
	return ""
}

// Synchronize implements the NRI stub's SynchronizeInterface. It returns
// once pods that stopped are unmarked; the running pods' claims are read
// and shaped in the background, off the runtime's request timeout.
func (p *Plugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, _ []*api.Container) ([]*api.ContainerUpdate, error) {
	var run []driver.Sandbox
	for _, pod := range pods {
		ns := NetnsPath(pod)
		run = append(run, driver.Sandbox{PodUID: pod.GetUid(), Namespace: pod.GetNamespace(), Name: pod.GetName(),
			HostIf: func() (string, error) { return p.Net.HostInterface(ns) }})
	}
	// the stub's context ends with the request: the background work
	// keeps the logger only
	p.D.Synchronize(klog.NewContext(context.Background(), klog.FromContext(ctx)), run)
	if p.Connected != nil {
		p.once.Do(func() { close(p.Connected) })
	}
	return nil, nil
}

// RunPodSandbox implements the NRI stub's RunPodSandboxInterface. A pod
// without a claim is never touched; a pod with one (found from the pod
// and its claims: a shared claim's later pods too) fails here when its
// claims cannot be read, its class cannot be admitted or its interface
// cannot be classified.
func (p *Plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	has, err := p.D.Resolve(ctx, pod.GetUid(), pod.GetNamespace(), pod.GetName())
	if err != nil {
		if p.Failed != nil {
			p.Failed(events.Pod(pod.GetNamespace(), pod.GetName(), pod.GetUid()), events.ClassFailed, err)
		}
		return fmt.Errorf("arbtable-dra: pod %s/%s: %w", pod.GetNamespace(), pod.GetName(), err)
	}
	if !has {
		return nil
	}
	hostIf, ifErr := p.Net.HostInterface(NetnsPath(pod))
	if err := p.D.PodUp(ctx, pod.GetUid(), hostIf, ifErr); err != nil {
		if p.Failed != nil {
			p.Failed(events.Pod(pod.GetNamespace(), pod.GetName(), pod.GetUid()), events.ClassFailed, err)
		}
		return fmt.Errorf("arbtable-dra: pod %s/%s: %w", pod.GetNamespace(), pod.GetName(), err)
	}
	return nil
}

// StopPodSandbox implements the NRI stub's StopPodSandboxInterface.
func (p *Plugin) StopPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.down(ctx, pod)
}

// RemovePodSandbox implements the NRI stub's RemovePodSandboxInterface.
func (p *Plugin) RemovePodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	return p.down(ctx, pod)
}

func (p *Plugin) down(ctx context.Context, pod *api.PodSandbox) error {
	if err := p.D.PodDown(ctx, pod.GetUid()); err != nil {
		klog.FromContext(ctx).Error(err, "releasing a pod's arbtable class", "pod", pod.GetNamespace()+"/"+pod.GetName())
		if p.Failed != nil {
			p.Failed(events.Pod(pod.GetNamespace(), pod.GetName(), pod.GetUid()), events.ReleaseFailed, err)
		}
		return err
	}
	return nil
}
