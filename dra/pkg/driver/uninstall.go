// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"fmt"
	"os"

	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/checkpoint"
)

// Uninstall releases what the driver made, for an uninstall (its
// DaemonSet deleted), never for a restart or a rollout, which withdraw
// nothing: each pod's mark, each class in the driver's minor range and
// its fw filter, then each NIC's root when only the system class is left
// on it (a root carrying an administrator's classes stays, with them);
// last the checkpoint, so that a later install starts clean. Pods that
// still run with claims run unshaped from here: the driver that served
// them is going away.
func (d *Driver) Uninstall(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	logger := klog.FromContext(ctx)
	var errs []error
	for _, r := range d.recs {
		for _, ifname := range r.Ifaces {
			if err := d.k.Unmark(ifname, d.cfg.MarkPrio); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, nic := range d.cfg.NICs {
		q, err := d.k.Read(nic)
		if err != nil {
			continue // no root (or none readable): nothing of ours
		}
		others := 0
		for _, c := range q.Classes {
			minor := c.ClassID & 0xffff
			switch {
			case d.owned(minor):
				_ = d.k.DelFw(nic, q.Handle, d.cfg.FwPrio, (minor-d.cfg.MinorBase)<<d.markShift())
				if err := d.k.Release(nic, c.ClassID); err != nil {
					errs = append(errs, err)
				}
			case minor != d.cfg.Root.SystemMinor:
				others++
			}
		}
		if others > 0 {
			logger.Info("uninstall: the root stays, it holds classes the driver did not make", "nic", nic, "classes", others)
			continue
		}
		if err := d.k.DeleteRoot(nic); err != nil {
			errs = append(errs, err)
			continue
		}
		logger.Info("uninstall: the root the driver made is deleted", "nic", nic)
	}
	if len(errs) > 0 {
		// the records stay for whoever looks next
		return fmt.Errorf("uninstall: %w", errors.Join(errs...))
	}
	d.recs = map[string]checkpoint.Record{}
	if err := os.Remove(d.cfg.Checkpoint); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("uninstall: removing the checkpoint: %w", err)
	}
	return nil
}
