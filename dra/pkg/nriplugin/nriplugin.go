// SPDX-License-Identifier: Apache-2.0

// Package nriplugin is arbtable-dra's NRI plugin: when a pod's network
// exists (RunPodSandbox) it has the driver admit and mark the pod's claim;
// when the sandbox stops or goes away it has it released; after a start,
// Synchronize reconciles the records with the sandboxes that run.
package nriplugin

import (
	"context"
	"fmt"

	"github.com/containerd/nri/pkg/api"
	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/driver"
	"arbtable.dev/dra/pkg/events"
	"arbtable.dev/dra/pkg/podnet"
)

// Driver is what the plugin asks of the driver.
type Driver interface {
	HasClaims(podUID string) bool
	PodUp(ctx context.Context, podUID, hostIf string, ifErr error) error
	PodDown(ctx context.Context, podUID string) error
	Synchronize(ctx context.Context, running []driver.Sandbox) error
}

// Plugin handles the NRI events.
type Plugin struct {
	D   Driver
	Net podnet.Finder
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

func (p *Plugin) sandbox(pod *api.PodSandbox) driver.Sandbox {
	s := driver.Sandbox{PodUID: pod.GetUid()}
	if !p.D.HasClaims(s.PodUID) {
		return s
	}
	s.HostIf, s.IfErr = p.Net.HostInterface(NetnsPath(pod))
	return s
}

// Synchronize implements the NRI stub's SynchronizeInterface.
func (p *Plugin) Synchronize(ctx context.Context, pods []*api.PodSandbox, _ []*api.Container) ([]*api.ContainerUpdate, error) {
	var run []driver.Sandbox
	for _, pod := range pods {
		run = append(run, p.sandbox(pod))
	}
	if err := p.D.Synchronize(ctx, run); err != nil {
		// not fatal for the runtime: the pods run; the log says which
		klog.FromContext(ctx).Error(err, "synchronizing arbtable classes with the running sandboxes")
	}
	return nil, nil
}

// RunPodSandbox implements the NRI stub's RunPodSandboxInterface. A pod
// without a claim is never touched; a pod with one fails here when its
// class cannot be admitted or its interface cannot be classified.
func (p *Plugin) RunPodSandbox(ctx context.Context, pod *api.PodSandbox) error {
	s := p.sandbox(pod)
	if err := p.D.PodUp(ctx, s.PodUID, s.HostIf, s.IfErr); err != nil {
		if p.Failed != nil {
			p.Failed(events.Pod(pod.GetNamespace(), pod.GetName(), s.PodUID), events.ClassFailed, err)
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
