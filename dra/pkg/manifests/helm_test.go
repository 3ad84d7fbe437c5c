// SPDX-License-Identifier: Apache-2.0
package manifests

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

const chart = "../../../deploy/helm/arbtable-dra"

// helmFuncs are the template functions the chart uses, with Helm's
// (Sprig's) meaning; a function the chart uses beyond these fails the
// parse, so the chart stays within what this test renders. helm itself
// is not run (not installed here).
var helmFuncs = template.FuncMap{
	"toYaml": func(v any) (string, error) {
		b, err := yaml.Marshal(v)
		return strings.TrimSuffix(string(b), "\n"), err
	},
	"nindent": func(n int, s string) string {
		p := strings.Repeat(" ", n)
		return "\n" + p + strings.ReplaceAll(s, "\n", "\n"+p)
	},
	"quote": func(v any) string { return fmt.Sprintf("%q", fmt.Sprint(v)) },
	"default": func(d, v any) any {
		if v == nil || v == "" {
			return d
		}
		return v
	},
}

// render renders the chart's templates with values.yaml overlaid by
// set (top-level keys) in namespace ns, and decodes the objects strictly.
func render(t *testing.T, ns string, set map[string]any) []runtime.Object {
	t.Helper()
	var values, meta map[string]any
	for f, into := range map[string]*map[string]any{"values.yaml": &values, "Chart.yaml": &meta} {
		b, err := os.ReadFile(filepath.Join(chart, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, into); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	for k, v := range set {
		if _, ok := values[k]; !ok {
			t.Fatalf("values.yaml has no %s", k)
		}
		values[k] = v
	}
	ctx := map[string]any{
		"Values":  values,
		"Release": map[string]any{"Namespace": ns, "Name": "arbtable-dra"},
		"Chart":   map[string]any{"Name": meta["name"], "Version": meta["version"], "AppVersion": meta["appVersion"]},
	}
	files, _ := filepath.Glob(filepath.Join(chart, "templates", "*.yaml"))
	if len(files) != 6 {
		t.Fatalf("%d templates, want 6 (daemonset, rbac, deviceclass, admission-policy, claim-policy, webhook)", len(files))
	}
	var out []runtime.Object
	for _, f := range files {
		tpl, err := template.New(filepath.Base(f)).Option("missingkey=error").Funcs(helmFuncs).ParseFiles(f)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := tpl.Execute(&buf, ctx); err != nil {
			t.Fatal(err)
		}
		out = append(out, decodeYAML(t, f+" rendered", buf.Bytes())...)
	}
	return out
}

func key(t *testing.T, o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%T %s/%s", o, m.GetNamespace(), m.GetName())
}

// With the default values the chart renders exactly the plain manifests'
// objects (the plain files are what check-k8s applies).
func TestHelmChartIsThePlainManifests(t *testing.T) {
	plain := map[string]runtime.Object{}
	for _, f := range []string{"daemonset.yaml", "rbac.yaml", "deviceclass.yaml", "admission-policy.yaml", "claim-policy.yaml"} {
		for _, o := range decodeAll(t, filepath.Join(dir, f)) {
			plain[key(t, o)] = o
		}
	}
	got := render(t, "kube-system", nil)
	if len(got) != len(plain) {
		t.Errorf("%d objects rendered, %d in the plain manifests", len(got), len(plain))
	}
	for _, o := range got {
		k := key(t, o)
		p, ok := plain[k]
		if !ok {
			t.Errorf("%s: not in the plain manifests", k)
			continue
		}
		if !equality.Semantic.DeepEqual(o, p) {
			a, _ := yaml.Marshal(o)
			b, _ := yaml.Marshal(p)
			t.Errorf("%s differs:\nchart:\n%s\nplain:\n%s", k, a, b)
		}
	}
}

// With webhookCABundle the chart also renders webhook.yaml.in's objects, as
// webhook-cert.sh applies them; without it, none of them (above).
func TestHelmWebhook(t *testing.T) {
	const ca = "Zm9v"
	raw, err := os.ReadFile(filepath.Join(dir, "webhook.yaml.in"))
	if err != nil {
		t.Fatal(err)
	}
	raw = bytes.ReplaceAll(raw, []byte(webhookCAPlaceholder), []byte(ca))
	plain := map[string]runtime.Object{}
	for _, o := range decodeYAML(t, "webhook.yaml.in", raw) {
		plain[key(t, o)] = o
	}
	n := 0
	for _, o := range render(t, "kube-system", map[string]any{"webhookCABundle": ca}) {
		p, ok := plain[key(t, o)]
		if !ok {
			continue
		}
		n++
		if !equality.Semantic.DeepEqual(o, p) {
			a, _ := yaml.Marshal(o)
			b, _ := yaml.Marshal(p)
			t.Errorf("%s differs:\nchart:\n%s\nplain:\n%s", key(t, o), a, b)
		}
	}
	if n != 2 || len(plain) != 2 {
		t.Errorf("%d of webhook.yaml.in's %d objects rendered, want the Service and the ValidatingWebhookConfiguration", n, len(plain))
	}
}

// The values reach the objects: image, namespace (the service account,
// its binding, the admission policy's user), NICs, mark mask, tolerations,
// the metrics port and extra flags.
func TestHelmChartValues(t *testing.T) {
	objs := render(t, "arbt", map[string]any{
		"image":       map[string]any{"repository": "registry.example/arbtable-dra", "tag": "9.9.9", "pullPolicy": "IfNotPresent"},
		"nics":        "eth1=10G,eth2",
		"markMask":    "0x1f80",
		"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "net", "effect": "NoSchedule"}},
		"metricsPort": 9999,
		"webhookPort": 9443,
		"extraArgs":   []any{"--system-rate=1250000"},
	})
	var ds *appsv1.DaemonSet
	var sa, binding, policy bool
	for _, o := range objs {
		switch x := o.(type) {
		case *appsv1.DaemonSet:
			ds = x
		case *corev1.ServiceAccount:
			sa = x.Namespace == "arbt"
		case *rbacv1.ClusterRoleBinding:
			binding = len(x.Subjects) == 1 && x.Subjects[0].Namespace == "arbt"
		default:
			if b, _ := yaml.Marshal(o); bytes.Contains(b, []byte("system:serviceaccount:")) {
				policy = bytes.Contains(b, []byte("system:serviceaccount:arbt:arbtable-dra"))
			}
		}
	}
	if ds == nil || ds.Namespace != "arbt" || !sa || !binding || !policy {
		t.Fatalf("namespace arbt: DaemonSet %v, service account %v, binding %v, admission policy %v", ds != nil, sa, binding, policy)
	}
	c := ds.Spec.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	tol := ds.Spec.Template.Spec.Tolerations
	for _, chk := range []struct {
		what string
		ok   bool
	}{
		{"image " + c.Image, c.Image == "registry.example/arbtable-dra:9.9.9" && c.ImagePullPolicy == corev1.PullIfNotPresent},
		{"ARBTABLE_NICS " + env["ARBTABLE_NICS"], env["ARBTABLE_NICS"] == "eth1=10G,eth2"},
		{"args " + args, strings.Contains(args, "--mark-mask=0x1f80") && strings.Contains(args, "--metrics-address=$(HOST_IP):9999") &&
			strings.HasSuffix(args, "--system-rate=1250000")},
		{fmt.Sprintf("port %+v", c.Ports), len(c.Ports) == 2 && c.Ports[0].Name == "metrics" && c.Ports[0].ContainerPort == 9999 &&
			c.Ports[1].Name == "webhook" && c.Ports[1].ContainerPort == 9443 && strings.Contains(args, "--webhook-address=$(HOST_IP):9443")},
		{fmt.Sprintf("tolerations %+v", tol), len(tol) == 1 && tol[0].Key == "dedicated" && tol[0].Effect == corev1.TaintEffectNoSchedule},
	} {
		if !chk.ok {
			t.Errorf("values not rendered: %s", chk.what)
		}
	}
}

// rootMode reaches --root-mode; with lockless the chart passes no
// --child, which the driver refuses beside --root-mode=lockless.
func TestHelmRootMode(t *testing.T) {
	tests := []struct {
		mode      string
		wantChild bool
	}{
		{mode: "auto", wantChild: true},
		{mode: "locked", wantChild: true},
		{mode: "lockless"},
	}
	for _, tt := range tests {
		var args []string
		for _, o := range render(t, "kube-system", map[string]any{"rootMode": tt.mode}) {
			if ds, ok := o.(*appsv1.DaemonSet); ok {
				args = ds.Spec.Template.Spec.Containers[0].Args
			}
		}
		all := strings.Join(args, " ")
		if !slices.Contains(args, "--root-mode="+tt.mode) || slices.Contains(args, "--child=fq_codel") != tt.wantChild {
			t.Errorf("rootMode %s: args %s; want --root-mode=%s, --child=fq_codel %v", tt.mode, all, tt.mode, tt.wantChild)
		}
	}
}
