// SPDX-License-Identifier: GPL-2.0
// arbt-cnitool: a libcni client for the VM tests.  It runs one verb of a
// network configuration list through Debian's libcni (the library
// containerd and CRI-O call), so a plugin is driven the way a runtime
// drives it: version negotiation, prevResult, the result cache, GC's
// cached-attachment pass and STATUS included.
//
//	arbt-cnitool add|check|del CONFLIST ID NETNS [IFNAME]
//	arbt-cnitool gc CONFLIST [ID/IFNAME...]   (the valid attachments)
//	arbt-cnitool status|version CONFLIST
//
// CNI_PATH: the plugin directories; CNI_ARGS: "K=V;K=V"; CNI_CACHE_DIR:
// libcni's cache (default /var/lib/cni).  Exit 0 on success; otherwise
// the error on stderr and the CNI error code as the exit status (1 when
// the error carries none).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
)

func die(err error) {
	fmt.Fprintln(os.Stderr, err)
	var e *types.Error
	if errors.As(err, &e) && e.Code > 0 && e.Code < 256 {
		os.Exit(int(e.Code))
	}
	os.Exit(1)
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: arbt-cnitool add|check|del CONFLIST ID NETNS [IFNAME] | gc CONFLIST [ID/IFNAME...] | status|version CONFLIST")
		os.Exit(2)
	}
	verb, a := os.Args[1], os.Args[3:]
	list, err := libcni.ConfListFromFile(os.Args[2])
	if err != nil {
		die(err)
	}
	cache := os.Getenv("CNI_CACHE_DIR")
	c := libcni.NewCNIConfigWithCacheDir(filepath.SplitList(os.Getenv("CNI_PATH")), cache, nil)
	ctx := context.Background()
	switch verb {
	case "add", "check", "del":
		if len(a) < 2 {
			die(fmt.Errorf("%s needs ID and NETNS", verb))
		}
		rt := &libcni.RuntimeConf{ContainerID: a[0], NetNS: a[1], IfName: "eth0", CacheDir: cache}
		if len(a) > 2 {
			rt.IfName = a[2]
		}
		for _, kv := range strings.Split(os.Getenv("CNI_ARGS"), ";") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				rt.Args = append(rt.Args, [2]string{k, v})
			}
		}
		switch verb {
		case "add":
			r, err := c.AddNetworkList(ctx, list, rt)
			if err != nil {
				die(err)
			}
			_ = r.Print()
		case "check":
			err = c.CheckNetworkList(ctx, list, rt)
		default:
			err = c.DelNetworkList(ctx, list, rt)
		}
	case "gc":
		args := &libcni.GCArgs{}
		for _, s := range a {
			id, ifn, _ := strings.Cut(s, "/")
			args.ValidAttachments = append(args.ValidAttachments, types.GCAttachment{ContainerID: id, IfName: ifn})
		}
		err = c.GCNetworkList(ctx, list, args)
	case "status":
		err = c.GetStatusNetworkList(ctx, list)
	case "version":
		// the version libcni settled on for the list (highest of
		// cniVersions it knows), then what each plugin answers
		out := map[string]interface{}{"list": list.CNIVersion}
		for _, p := range list.Plugins {
			info, verr := c.GetVersionInfo(ctx, p.Network.Type)
			if verr != nil {
				die(verr)
			}
			out[p.Network.Type] = info.SupportedVersions()
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	default:
		die(fmt.Errorf("unknown verb %q", verb))
	}
	if err != nil {
		die(err)
	}
}
