// SPDX-License-Identifier: Apache-2.0
package manifests

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	drcel "k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"

	"arbtable.dev/dra/pkg/arbcore"
	"arbtable.dev/dra/pkg/slices"
)

const dir = "../../../deploy/kubernetes/dra"

// webhookCAPlaceholder is webhook.yaml.in's caBundle, "CA_BUNDLE" in base64,
// which webhook-cert.sh replaces with its CA.
const webhookCAPlaceholder = "Q0FfQlVORExF"

func decodeAll(t *testing.T, path string) []runtime.Object {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeYAML(t, path, b)
}

// decodeYAML decodes each document of b strictly; name says whose in a
// failure.
func decodeYAML(t *testing.T, name string, b []byte) []runtime.Object {
	t.Helper()
	dec := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, doc)
		}
		out = append(out, obj)
	}
	return out
}

func TestManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	ex, _ := filepath.Glob(filepath.Join(dir, "examples", "*.yaml"))
	files = append(files, ex...)
	if len(files) < 7 {
		t.Fatalf("only %d manifests found in %s", len(files), dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if objs := decodeAll(t, f); len(objs) == 0 {
				t.Fatal("no objects")
			}
		})
	}
}

// The DaemonSet runs the image build-image.sh makes (localhost/arbtable-dra
// at the release in VERSION) by its binary: the image has no entrypoint,
// so args alone would be taken for the command.
func TestDaemonSetImage(t *testing.T) {
	v, err := os.ReadFile("../../../VERSION")
	if err != nil {
		t.Fatal(err)
	}
	want := "localhost/arbtable-dra:" + strings.TrimSpace(string(v))
	c := daemonSet(t).Spec.Template.Spec.Containers[0]
	if c.Image != want {
		t.Errorf("image %q, want %q (VERSION)", c.Image, want)
	}
	if len(c.Command) != 1 || c.Command[0] != "/usr/bin/arbtable-dra" {
		t.Errorf("command %q, want [/usr/bin/arbtable-dra]", c.Command)
	}
}

func boolOf(b *bool) string {
	if b == nil {
		return "unset"
	}
	return strconv.FormatBool(*b)
}

func daemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	for _, o := range decodeAll(t, filepath.Join(dir, "daemonset.yaml")) {
		if ds, ok := o.(*appsv1.DaemonSet); ok {
			return ds
		}
	}
	t.Fatal("no DaemonSet in daemonset.yaml")
	return nil
}

// Least privilege (issue 45): CAP_NET_ADMIN and nothing else (podnet reads
// pods' interfaces by namespace id, no setns, no CAP_SYS_ADMIN), no
// escalation, the runtime's seccomp profile, a read-only root, and the
// host paths the driver uses, each read-only where it only reads.
func TestDaemonSetLeastPrivilege(t *testing.T) {
	ds := daemonSet(t)
	pod := ds.Spec.Template.Spec
	if pod.HostPID || pod.HostIPC {
		t.Errorf("hostPID %v, hostIPC %v", pod.HostPID, pod.HostIPC)
	}
	if sc := pod.SecurityContext; sc == nil || sc.SeccompProfile == nil ||
		sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod seccompProfile %+v, want RuntimeDefault", sc)
	}
	if len(pod.Containers) != 1 || len(pod.InitContainers) != 0 {
		t.Fatalf("%d containers, %d init containers", len(pod.Containers), len(pod.InitContainers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc == nil || sc.Capabilities == nil {
		t.Fatal("no container securityContext with capabilities")
	}
	if !reflect.DeepEqual(sc.Capabilities.Add, []corev1.Capability{"NET_ADMIN"}) ||
		!reflect.DeepEqual(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("capabilities add %v drop %v, want add [NET_ADMIN] drop [ALL]", sc.Capabilities.Add, sc.Capabilities.Drop)
	}
	if sc.Privileged == nil || *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("privileged %s, allowPrivilegeEscalation %s, readOnlyRootFilesystem %s: want false, false, true",
			boolOf(sc.Privileged), boolOf(sc.AllowPrivilegeEscalation), boolOf(sc.ReadOnlyRootFilesystem))
	}
	if sc.SeccompProfile != nil && sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("container seccompProfile %+v overrides the pod's RuntimeDefault", sc.SeccompProfile)
	}
	// host path -> written: the registration socket, and dra.sock and the
	// checkpoint in the driver's own plugin directory (main.go's defaults)
	want := map[string]bool{
		"/var/lib/kubelet/plugins_registry":     true,
		"/var/lib/kubelet/plugins/arbtable.dev": true,
		"/var/run/nri":                          false,
		"/run/netns":                            false,
	}
	main, err := os.ReadFile("../../cmd/arbtable-dra/main.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range []string{`"/var/lib/kubelet/plugins/arbtable.dev"`, `"/var/lib/kubelet/plugins/arbtable.dev/checkpoint.json"`,
		`"/var/lib/kubelet/plugins_registry"`, `"/var/run/nri/nri.sock"`} {
		if !strings.Contains(string(main), def) {
			t.Errorf("main.go's defaults no longer name %s: the host paths here follow them", def)
		}
	}
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--plugin-dir") || strings.HasPrefix(a, "--checkpoint") ||
			strings.HasPrefix(a, "--registrar-dir") || strings.HasPrefix(a, "--nri-socket") {
			t.Errorf("argument %s moves a path the host paths here assume", a)
		}
	}
	paths := map[string]string{}
	secrets := map[string]bool{}
	for _, v := range pod.Volumes {
		// the webhook's key pair, read-only and optional
		if v.Secret != nil && v.Secret.SecretName == "arbtable-dra-webhook" && ptr.Deref(v.Secret.Optional, false) {
			secrets[v.Name] = true
			continue
		}
		if v.HostPath == nil {
			t.Errorf("volume %s is neither a hostPath nor the webhook's Secret", v.Name)
			continue
		}
		paths[v.Name] = v.HostPath.Path
	}
	got := map[string]bool{}
	for _, m := range c.VolumeMounts {
		if secrets[m.Name] {
			if !m.ReadOnly || m.MountPath != "/etc/arbtable-dra/webhook" {
				t.Errorf("the webhook's Secret mounted at %s, read-only %v", m.MountPath, m.ReadOnly)
			}
			continue
		}
		p, ok := paths[m.Name]
		if !ok {
			t.Errorf("mount %s: no such volume", m.Name)
			continue
		}
		if p != m.MountPath {
			t.Errorf("host %s mounted at %s", p, m.MountPath)
		}
		got[p] = !m.ReadOnly
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host paths (path: read-write) %v, want %v", got, want)
	}
}

// The ClusterRole grants exactly the calls the code makes (rbac.yaml's
// header says where each comes from); one more verb or resource fails.
func TestRBACExactlyCalled(t *testing.T) {
	want := []string{
		"/events create",
		"/events patch",
		"/nodes get",
		"/pods get",
		"apps/daemonsets[arbtable-dra] get",
		"apps/daemonsets[arbtable-dra] watch",
		"resource.k8s.io/resourceclaims get",
		"resource.k8s.io/resourceclaims/driver[arbtable.dev] associated-node:update",
		"resource.k8s.io/resourceclaims/status update",
		"resource.k8s.io/resourceclaimtemplates get",
		"resource.k8s.io/resourceslices create",
		"resource.k8s.io/resourceslices delete",
		"resource.k8s.io/resourceslices list",
		"resource.k8s.io/resourceslices update",
		"resource.k8s.io/resourceslices watch",
	}
	var got []string
	var roles int
	for _, o := range decodeAll(t, filepath.Join(dir, "rbac.yaml")) {
		switch r := o.(type) {
		case *rbacv1.ClusterRole:
			roles++
			for _, rule := range r.Rules {
				if len(rule.NonResourceURLs) != 0 {
					t.Errorf("non-resource URLs %v", rule.NonResourceURLs)
				}
				for _, g := range rule.APIGroups {
					for _, res := range rule.Resources {
						name := ""
						if len(rule.ResourceNames) != 0 {
							name = "[" + strings.Join(rule.ResourceNames, ",") + "]"
						}
						for _, v := range rule.Verbs {
							got = append(got, g+"/"+res+name+" "+v)
						}
					}
				}
			}
		case *rbacv1.Role, *rbacv1.RoleBinding:
			t.Errorf("a %T: the driver's rights are the one ClusterRole's", r)
		}
	}
	sort.Strings(got)
	if roles != 1 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d ClusterRoles granting\n%s\nwant\n%s", roles, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// classSelectors returns the CEL expressions of the DeviceClasses in
// deviceclass.yaml, by class name.
func classSelectors(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, o := range decodeAll(t, filepath.Join(dir, "deviceclass.yaml")) {
		dc, ok := o.(*resourceapi.DeviceClass)
		if !ok {
			t.Fatalf("deviceclass.yaml: a %T", o)
		}
		for _, s := range dc.Spec.Selectors {
			out[dc.Name] = append(out[dc.Name], s.CEL.Expression)
		}
	}
	return out
}

// matches evaluates exprs in order with the scheduler's own CEL code, as
// its allocator does (the class's selectors, then the request's, each
// only if all before matched).
func matches(t *testing.T, d resourceapi.Device, exprs []string) bool {
	t.Helper()
	for _, expr := range exprs {
		prog := drcel.GetCompiler(drcel.Features{}).CompileCELExpression(expr, drcel.Options{})
		if prog.Error != nil {
			t.Fatalf("%q: %v", expr, prog.Error)
		}
		ok, _, err := prog.DeviceMatches(context.Background(), drcel.Device{Driver: slices.DriverName, Attributes: d.Attributes})
		if err != nil {
			t.Fatalf("device %s: %q: %v", d.Name, expr, err)
		}
		if !ok {
			return false
		}
	}
	return true
}

var exampleNICs = []slices.NIC{
	{Name: "eth0", Params: arbcore.Params{Rate: 1250000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}, FreeSlots: 64, FreeLowSlots: 64, FreeClasses: 64},
	{Name: "eth1", Params: arbcore.Params{Rate: 125000000, MTU: 1514, MaxWeight: 255, HighLimit: 4}, FreeSlots: 64, FreeLowSlots: 63, FreeClasses: 63},
}

// The examples' selectors, evaluated by the scheduler's own CEL code
// after the DeviceClass's on the devices published for a 10gbit and a
// 1gbit NIC (share devices included), match exactly the blocks whose rate
// and bound meet the request.
func TestExampleSelectors(t *testing.T) {
	classes := classSelectors(t)
	if len(classes["arbtable.dev"]) == 0 || len(classes["share.arbtable.dev"]) == 0 {
		t.Fatalf("DeviceClasses %v: want arbtable.dev and share.arbtable.dev", classes)
	}
	for _, name := range []string{"claimtemplate.yaml", "claimtemplate-exact-rate.yaml"} {
		t.Run(name, func(t *testing.T) {
			objs := decodeAll(t, filepath.Join(dir, "examples", name))
			tpl := objs[0].(*resourceapi.ResourceClaimTemplate)
			req := tpl.Spec.Spec.Devices.Requests[0].Exactly
			expr := req.Selectors[0].CEL.Expression
			if !strings.Contains(expr, "rateBits >= 200000000") || !strings.Contains(expr, "boundNs <= 500000") {
				t.Fatalf("selector %q", expr)
			}
			exprs := append(append([]string(nil), classes[req.DeviceClassName]...), expr)
			matched := map[string]int{}
			for _, nic := range exampleNICs {
				blocks, err := slices.Blocks(nic.Params)
				if err != nil {
					t.Fatal(err)
				}
				want := map[int]bool{}
				for _, b := range blocks {
					want[b.Slots] = b.RateBytes*8 >= 200000000 && b.BoundNs <= 500000
				}
				for _, d := range slices.Devices(nic, blocks) {
					ok := matches(t, d, exprs)
					n := int(*d.Attributes[slices.AttrSlots].IntValue)
					w := want[n] && *d.Attributes[slices.AttrTable].StringValue == slices.TableHigh
					if ok != w {
						t.Fatalf("%s: device %s matched=%v, rate/bound say %v", nic.Name, d.Name, ok, w)
					}
					if ok {
						matched[nic.Name]++
					}
				}
			}
			t.Logf("devices matching 200 Mbit/s within 500 us: %v", matched)
			if matched["eth0"] == 0 {
				t.Fatal("the 10gbit NIC offers no block for the example")
			}
		})
	}
}

// The share example's class matches every share device and no block; its
// share is within maxShare.
func TestShareExample(t *testing.T) {
	classes := classSelectors(t)
	objs := decodeAll(t, filepath.Join(dir, "examples", "claimtemplate-share.yaml"))
	tpl := objs[0].(*resourceapi.ResourceClaimTemplate)
	req := tpl.Spec.Spec.Devices.Requests[0].Exactly
	if req.DeviceClassName != "share.arbtable.dev" || len(req.Selectors) != 0 {
		t.Fatalf("request %+v", req)
	}
	raw := string(tpl.Spec.Spec.Devices.Config[0].Opaque.Parameters.Raw)
	if !strings.Contains(raw, `"share":8`) || !strings.Contains(raw, `"kind":"ClassConfig"`) {
		t.Fatalf("parameters %s", raw)
	}
	for _, nic := range exampleNICs {
		blocks, _ := slices.Blocks(nic.Params)
		lows := 0
		for _, d := range slices.Devices(nic, blocks) {
			low := *d.Attributes[slices.AttrTable].StringValue == slices.TableLow
			if ok := matches(t, d, classes[req.DeviceClassName]); ok != low {
				t.Fatalf("%s: device %s matched=%v, a share device: %v", nic.Name, d.Name, ok, low)
			}
			if low {
				lows++
			}
		}
		if lows != 64 {
			t.Fatalf("%s: %d share devices", nic.Name, lows)
		}
	}
}

// The probes reach the server --metrics-address opens: a named port
// equal to the address's, liveness on /healthz, readiness on /readyz
// (metrics.Handler's paths), and the address on the node's own IP
// (hostNetwork: not every interface).
func TestDaemonSetProbes(t *testing.T) {
	c := daemonSet(t).Spec.Template.Spec.Containers[0]
	var addr string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--metrics-address="); ok {
			addr = v
		}
	}
	host, port, ok := strings.Cut(addr, ":")
	if !ok || host != "$(HOST_IP)" {
		t.Fatalf("--metrics-address %q, want $(HOST_IP):PORT", addr)
	}
	var hostIP bool
	for _, e := range c.Env {
		hostIP = hostIP || e.Name == "HOST_IP" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil &&
			e.ValueFrom.FieldRef.FieldPath == "status.hostIP"
	}
	if !hostIP {
		t.Error("no HOST_IP from status.hostIP")
	}
	var named bool
	for _, p := range c.Ports {
		if p.Name == "metrics" {
			named = true
			if strconv.Itoa(int(p.ContainerPort)) != port || p.Protocol != corev1.ProtocolTCP {
				t.Errorf("port metrics %d/%s, --metrics-address's %s/TCP", p.ContainerPort, p.Protocol, port)
			}
		}
	}
	if !named {
		t.Error("no port named metrics")
	}
	handler, err := os.ReadFile("../metrics/server.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}} {
		if tc.probe == nil || tc.probe.HTTPGet == nil {
			t.Errorf("no %s httpGet probe", tc.name)
			continue
		}
		g := tc.probe.HTTPGet
		if g.Path != tc.path || g.Port.String() != "metrics" || g.Host != "" {
			t.Errorf("%s probe %s on port %s host %q, want %s on metrics, the pod's address", tc.name, g.Path, g.Port.String(), g.Host, tc.path)
		}
		if !strings.Contains(string(handler), `"`+tc.path+`"`) {
			t.Errorf("metrics.Handler serves no %s", tc.path)
		}
	}
}
