// SPDX-License-Identifier: Apache-2.0
package manifests

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	celgo "github.com/google/cel-go/cel"
	celtypes "github.com/google/cel-go/common/types"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	admcel "k8s.io/apiserver/pkg/admission/plugin/cel"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/utils/ptr"

	"arbtable.dev/dra/pkg/driver"
)

// expr is one of the policy's expressions for the API server's CEL
// compiler (k8s.io/apiserver/pkg/admission/plugin/cel): a variable, a
// validation (bool) or a message (string).
type expr struct {
	name, text string
	ret        []*celgo.Type
}

func (e expr) GetExpression() string      { return e.text }
func (e expr) GetName() string            { return e.name }
func (e expr) ReturnTypes() []*celgo.Type { return e.ret }

// varExpr is a variable: any type, as the API server's
func varExpr(v admissionregv1.Variable) expr {
	return expr{v.Name, v.Expression, []*celgo.Type{celgo.AnyType, celgo.DynType}}
}

// policy is a ValidatingAdmissionPolicy compiled as the API server
// compiles one (validating.compilePolicy, whose package needs modules
// outside go.sum): its variables stored in one composition, the
// validations and their message expressions compiled against them, in the
// 1.37 base environment with its cost limits.
type policy struct {
	p          *admissionregv1.ValidatingAdmissionPolicy
	match      admcel.ConditionEvaluator // nil without matchConditions
	checks     admcel.ConditionEvaluator
	messages   []admcel.ConditionEvaluator // nil where a validation has none
	compileErr []error
}

func compilePolicy(t *testing.T, p *admissionregv1.ValidatingAdmissionPolicy) *policy {
	t.Helper()
	comp, err := admcel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		t.Fatal(err)
	}
	decls := admcel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	out := &policy{p: p}
	for _, v := range p.Spec.Variables {
		if r := comp.CompileAndStoreVariable(varExpr(v), decls, environment.StoredExpressions); r.Error != nil {
			out.compileErr = append(out.compileErr, fmt.Errorf("variable %s: %w", v.Name, r.Error))
		}
	}
	var match []admcel.ExpressionAccessor
	for _, m := range p.Spec.MatchConditions {
		match = append(match, expr{text: m.Expression, ret: []*celgo.Type{celgo.BoolType}})
	}
	if len(match) > 0 {
		out.match = comp.CompileCondition(match, decls, environment.StoredExpressions)
	}
	var checks []admcel.ExpressionAccessor
	for _, v := range p.Spec.Validations {
		checks = append(checks, expr{text: v.Expression, ret: []*celgo.Type{celgo.BoolType}})
		var m admcel.ConditionEvaluator
		if v.MessageExpression != "" {
			m = comp.CompileCondition([]admcel.ExpressionAccessor{expr{text: v.MessageExpression, ret: []*celgo.Type{celgo.StringType}}},
				admcel.OptionalVariableDeclarations{HasParams: decls.HasParams}, environment.StoredExpressions)
		}
		out.messages = append(out.messages, m)
	}
	out.checks = comp.CompileCondition(checks, decls, environment.StoredExpressions)
	return out
}

// admit evaluates the policy on alice's CREATE of obj (resource, e.g.
// "resourceclaims"); see review.
func (p *policy) admit(t *testing.T, resource string, obj runtime.Object) string {
	t.Helper()
	return p.review(t, admission.Create, resource, obj, nil, &user.DefaultInfo{Name: "alice"})
}

// review evaluates the policy on an operation on obj (old for UPDATE
// and DELETE) by u as the API server's validator decides: "" when the
// match conditions leave it out or every validation is true, else the
// first refusal's message (its message expression's value, else its
// message), or the evaluation error (the policy fails closed:
// failurePolicy Fail).
func (p *policy) review(t *testing.T, op admission.Operation, resource string, obj, old runtime.Object, u user.Info) string {
	t.Helper()
	some := obj
	if some == nil {
		some = old
	}
	gvk := some.GetObjectKind().GroupVersionKind()
	gvr := schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: resource}
	attr := admission.NewAttributesRecord(obj, old, gvk, "ns", "x", gvr, "", op, nil, false, u)
	va := &admission.VersionedAttributes{Attributes: attr, VersionedKind: gvk,
		VersionedObject: admission.NewLazyObject(obj), VersionedOldObject: admission.NewLazyObject(old)}
	req := admcel.CreateAdmissionRequest(attr, metav1.GroupVersionResource(gvr), metav1.GroupVersionKind(gvk))
	ns := admcel.CreateNamespaceObject(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}})
	ctx := context.Background()
	if p.match != nil {
		res, _, err := p.match.ForInput(ctx, va, req, admcel.OptionalVariableBindings{}, ns, celconfig.RuntimeCELCostBudget)
		if err != nil {
			return "match conditions: evaluation error: " + err.Error()
		}
		for i, r := range res {
			if r.Error != nil {
				return fmt.Sprintf("match condition %d: evaluation error: %v", i, r.Error)
			}
			if r.EvalResult != celtypes.True {
				return ""
			}
		}
	}
	res, _, err := p.checks.ForInput(ctx, va, req, admcel.OptionalVariableBindings{}, ns, celconfig.RuntimeCELCostBudget)
	if err != nil {
		return "evaluation error: " + err.Error()
	}
	for i, r := range res {
		if r.Error != nil {
			return fmt.Sprintf("validation %d: evaluation error: %v", i, r.Error)
		}
		if r.EvalResult == celtypes.True {
			continue
		}
		v := p.p.Spec.Validations[i]
		if p.messages[i] != nil {
			mr, _, err := p.messages[i].ForInput(ctx, va, req, admcel.OptionalVariableBindings{}, ns, celconfig.RuntimeCELCostBudget)
			if err == nil && len(mr) == 1 && mr[0].Error == nil {
				if s, ok := mr[0].EvalResult.Value().(string); ok && strings.TrimSpace(s) != "" {
					return strings.TrimSpace(s)
				}
			}
			t.Errorf("validation %d: its message expression gave no message", i)
		}
		return v.Message
	}
	return ""
}

func loadPolicy(t *testing.T, path string) (*policy, *admissionregv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	var p *admissionregv1.ValidatingAdmissionPolicy
	var b *admissionregv1.ValidatingAdmissionPolicyBinding
	for _, o := range decodeAll(t, path) {
		switch x := o.(type) {
		case *admissionregv1.ValidatingAdmissionPolicy:
			p = x
		case *admissionregv1.ValidatingAdmissionPolicyBinding:
			b = x
		}
	}
	if p == nil || b == nil {
		t.Fatalf("%s: want a policy and its binding", path)
	}
	cp := compilePolicy(t, p)
	if len(cp.compileErr) > 0 || cp.checks == nil {
		t.Fatalf("%s does not compile: %v", path, cp.compileErr)
	}
	return cp, b
}

type request struct {
	class string
	count int64
	all   bool
	admin bool
	first []string // firstAvailable: these classes, count 1 (class "" for exactly)
}

// claimOf builds a claim with requests r0, r1, ... and, when params is
// not "", one opaque config for driver with those parameters.
func claimOf(driverName, params string, reqs ...request) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaim"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}}
	for i, r := range reqs {
		dr := resourceapi.DeviceRequest{Name: fmt.Sprintf("r%d", i)}
		if r.first != nil {
			for j, cl := range r.first {
				dr.FirstAvailable = append(dr.FirstAvailable, resourceapi.DeviceSubRequest{Name: fmt.Sprintf("s%d", j),
					DeviceClassName: cl, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: max(r.count, 1)})
			}
		} else {
			e := &resourceapi.ExactDeviceRequest{DeviceClassName: r.class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: max(r.count, 1)}
			if r.all {
				e.AllocationMode, e.Count = resourceapi.DeviceAllocationModeAll, 0
			}
			if r.admin {
				e.AdminAccess = ptr.To(true)
			}
			dr.Exactly = e
		}
		c.Spec.Devices.Requests = append(c.Spec.Devices.Requests, dr)
	}
	if params != "" {
		c.Spec.Devices.Config = []resourceapi.DeviceClaimConfiguration{{DeviceConfiguration: resourceapi.DeviceConfiguration{
			Opaque: &resourceapi.OpaqueDeviceConfiguration{Driver: driverName, Parameters: runtime.RawExtension{Raw: []byte(params)}}}}}
	}
	return c
}

func templateOf(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaimTemplate {
	return &resourceapi.ResourceClaimTemplate{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceClaimTemplate"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x"}, Spec: resourceapi.ResourceClaimTemplateSpec{Spec: c.Spec}}
}

func cfg(fields string) string {
	return fmt.Sprintf(`{"apiVersion":%q,"kind":%q%s}`, driver.ConfigAPIVersion, driver.ConfigKind, fields)
}

// The claim policy, as the API server evaluates it, on claims and
// templates: what the driver would refuse at Prepare is refused, with its
// reason; what it serves is admitted.
func TestClaimPolicy(t *testing.T) {
	for _, path := range []string{filepath.Join(dir, "claim-policy.yaml"), filepath.Join(chart, "templates", "claim-policy.yaml")} {
		p, b := loadPolicy(t, path)
		rules := p.p.Spec.MatchConstraints.ResourceRules
		if len(rules) != 1 || !slices.Contains(rules[0].Resources, "resourceclaims") || !slices.Contains(rules[0].Resources, "resourceclaimtemplates") ||
			!slices.Contains(rules[0].Operations, admissionregv1.Create) || ptr.Deref(p.p.Spec.FailurePolicy, "") != admissionregv1.Fail {
			t.Errorf("%s: the policy must match CREATE of resourceclaims and resourceclaimtemplates, failing closed: %+v", path, rules)
		}
		if b.Spec.PolicyName != p.p.Name || !slices.Equal(b.Spec.ValidationActions, []admissionregv1.ValidationAction{admissionregv1.Deny}) {
			t.Errorf("%s: the binding must deny with policy %s: %+v", path, p.p.Name, b.Spec)
		}
	}
	p, _ := loadPolicy(t, filepath.Join(dir, "claim-policy.yaml"))
	block, share, small := request{class: "arbtable.dev"}, request{class: "share.arbtable.dev"}, request{class: "small.arbtable.dev"}
	gpu := request{class: "gpu.example.com", count: 2}
	for _, tc := range []struct {
		name  string
		claim *resourceapi.ResourceClaim
		want  string // "" admitted, else a part of the refusal
	}{
		{"one block", claimOf("", "", block), ""},
		{"one share with its share", claimOf("arbtable.dev", cfg(`,"share":8`), share), ""},
		{"a block beside another driver's two devices", claimOf("gpu.example.com", `{"anything":[1,"x"]}`, block, gpu), ""},
		{"adminAccess, all devices, beside a block", claimOf("", "", request{class: "arbtable.dev", admin: true, all: true}, block), ""},
		{"firstAvailable: a block, else a share", claimOf("", "", request{first: []string{"arbtable.dev", "share.arbtable.dev"}}), ""},
		{"no requests", claimOf("", ""), ""},
		{"a block and a share", claimOf("", "", block, share),
			"arbtable.dev: one arbtable device per claim (a pod's traffic carries one mark, one class); requests r0, r1 each ask for one"},
		{"a block and a small block (*.arbtable.dev)", claimOf("", "", small, block), "requests r0, r1 each ask for one"},
		{"a block and a firstAvailable share", claimOf("", "", block, request{first: []string{"gpu.example.com", "share.arbtable.dev"}}), "requests r0, r1 each ask for one"},
		{"two blocks in one request", claimOf("", "", request{class: "arbtable.dev", count: 2}),
			"arbtable.dev: request r0 asks for more than one arbtable device (count above 1 or allocationMode All): a claim holds one"},
		{"every share device", claimOf("", "", request{class: "share.arbtable.dev", all: true}), "request r0 asks for more than one"},
		{"a firstAvailable subrequest for two", claimOf("", "", request{first: []string{"share.arbtable.dev"}, count: 2}), "request r0 asks for more than one"},
		{"a share above 255", claimOf("arbtable.dev", cfg(`,"share":256`), share), "ClassConfig share is a whole number 0..255"},
		{"unknown field", claimOf("arbtable.dev", cfg(`,"rate":"200M"`), block),
			"arbtable.dev: ClassConfig has unknown fields rate; it takes apiVersion, kind, rateBits and share"},
		{"parameters not an object", claimOf("arbtable.dev", `"share=8"`, share), "arbtable.dev: opaque parameters must be a ClassConfig object"},
		{"rate as a quantity", claimOf("arbtable.dev", cfg(`,"rateBits":"200M"`), block), "ClassConfig rateBits is a whole number of bits/s"},
	} {
		for _, res := range []string{"resourceclaims", "resourceclaimtemplates"} {
			t.Run(res+"/"+tc.name, func(t *testing.T) {
				var obj runtime.Object = tc.claim
				if res == "resourceclaimtemplates" {
					obj = templateOf(tc.claim)
				}
				got := p.admit(t, res, obj)
				if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
					t.Errorf("refusal %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// The policy and the driver's decoder (DecodeClassConfig, Prepare's)
// agree on every ClassConfig: what one refuses the other refuses, with
// the range and schema constants taken from the driver.
func TestClaimPolicyIsTheDecoder(t *testing.T) {
	p, _ := loadPolicy(t, filepath.Join(dir, "claim-policy.yaml"))
	for _, tc := range []struct {
		params string
		ok     bool
	}{
		{cfg(""), true},
		{cfg(`,"share":0`), true},
		{cfg(`,"share":1`), true},
		{cfg(fmt.Sprintf(`,"share":%d`, driver.MaxShare)), true},
		{cfg(fmt.Sprintf(`,"share":%d`, driver.MaxShare+1)), false},
		{cfg(`,"share":-1`), false},
		{cfg(`,"share":8.5`), false},
		{cfg(`,"share":8.0`), false},
		{cfg(`,"share":"8"`), false},
		{cfg(`,"share":null`), false},
		{cfg(`,"Share":8`), false},
		{cfg(`,"rateBits":0`), true},
		{cfg(`,"rateBits":200000000`), true},
		{cfg(`,"rateBits":1099511627776`), true},
		{cfg(`,"rateBits":-1`), false},
		{cfg(`,"rateBits":2.5e8`), false},
		{cfg(`,"rateBits":"200M"`), false},
		{cfg(`,"rateBits":"200000000"`), false},
		{cfg(`,"rateBits":200000000,"share":8`), false},
		{cfg(`,"rateBits":0,"share":8`), true},
		{cfg(`,"latency":"500us"`), false},
		{cfg(`,"boundNs":500000`), false},
		{`{"kind":"ClassConfig","share":8}`, false},
		{`{"apiVersion":"arbtable.dev/v1","kind":"ClassConfig"}`, false},
		{fmt.Sprintf(`{"apiVersion":%q,"kind":"classconfig"}`, driver.ConfigAPIVersion), false},
		{fmt.Sprintf(`{"apiVersion":%q}`, driver.ConfigAPIVersion), false},
		{fmt.Sprintf(`{"apiVersion":%q,"kind":null}`, driver.ConfigAPIVersion), false},
		{fmt.Sprintf(`{"apiVersion":%q,"kind":7}`, driver.ConfigAPIVersion), false},
		{`[1,2]`, false},
		{`8`, false},
		{`"ClassConfig"`, false},
		{`null`, false},
	} {
		t.Run(tc.params, func(t *testing.T) {
			got := p.admit(t, "resourceclaims", claimOf("arbtable.dev", tc.params, request{class: "share.arbtable.dev"}))
			_, err := driver.DecodeClassConfig([]byte(tc.params))
			if (got == "") != tc.ok || (err == nil) != tc.ok {
				t.Errorf("policy %q, decoder %v; want admitted %v by both", got, err, tc.ok)
			}
		})
	}
}

// Every example claim template users copy passes the policy.
func TestExamplesPassClaimPolicy(t *testing.T) {
	p, _ := loadPolicy(t, filepath.Join(dir, "claim-policy.yaml"))
	ex, _ := filepath.Glob(filepath.Join(dir, "examples", "*.yaml"))
	n := 0
	for _, f := range ex {
		for _, o := range decodeAll(t, f) {
			var res, kind string
			switch o.(type) {
			case *resourceapi.ResourceClaim:
				res, kind = "resourceclaims", "ResourceClaim"
			case *resourceapi.ResourceClaimTemplate:
				res, kind = "resourceclaimtemplates", "ResourceClaimTemplate"
			default:
				continue
			}
			// the decoder drops the kind of a typed object
			o.GetObjectKind().SetGroupVersionKind(resourceapi.SchemeGroupVersion.WithKind(kind))
			n++
			if got := p.admit(t, res, o); got != "" {
				t.Errorf("%s: %s refused: %s", filepath.Base(f), key(t, o), got)
			}
		}
	}
	if n < 3 {
		t.Fatalf("only %d example claims and templates", n)
	}
}

// The slice policy (admission-policy.yaml), as the API server evaluates
// it: the driver's service account writes only its own node's slices of
// driver arbtable.dev; another user is not its concern.
func TestSlicePolicy(t *testing.T) {
	// the chart's is a template (its namespace): the plain one is its
	// rendering (TestHelmChartIsThePlainManifests)
	for _, path := range []string{filepath.Join(dir, "admission-policy.yaml")} {
		p, b := loadPolicy(t, path)
		if b.Spec.PolicyName != p.p.Name {
			t.Errorf("%s: binding for %q", path, b.Spec.PolicyName)
		}
		slice := func(node, drv string) *resourceapi.ResourceSlice {
			s := &resourceapi.ResourceSlice{TypeMeta: metav1.TypeMeta{APIVersion: "resource.k8s.io/v1", Kind: "ResourceSlice"},
				ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourceapi.ResourceSliceSpec{Driver: drv,
					Pool: resourceapi.ResourcePool{Name: "p", ResourceSliceCount: 1}}}
			if node != "" {
				s.Spec.NodeName = ptr.To(node)
			} else {
				s.Spec.AllNodes = ptr.To(true)
			}
			return s
		}
		driverOn := func(node string) user.Info {
			u := &user.DefaultInfo{Name: "system:serviceaccount:kube-system:arbtable-dra"}
			if node != "" {
				u.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
			}
			return u
		}
		for _, tc := range []struct {
			name     string
			op       admission.Operation
			obj, old *resourceapi.ResourceSlice
			u        user.Info
			want     string
		}{
			{"its node's slice", admission.Create, slice("n1", "arbtable.dev"), nil, driverOn("n1"), ""},
			{"its node's slice updated", admission.Update, slice("n1", "arbtable.dev"), slice("n1", "arbtable.dev"), driverOn("n1"), ""},
			{"its node's slice deleted", admission.Delete, nil, slice("n1", "arbtable.dev"), driverOn("n1"), ""},
			{"another node's slice", admission.Create, slice("n2", "arbtable.dev"), nil, driverOn("n1"),
				"arbtable-dra on node 'n1' may write only that node's ResourceSlices"},
			{"another node's slice deleted", admission.Delete, nil, slice("n2", "arbtable.dev"), driverOn("n1"), "may write only that node's"},
			{"a slice for all nodes", admission.Create, slice("", "arbtable.dev"), nil, driverOn("n1"), "may write only that node's"},
			{"a token without a node", admission.Create, slice("n1", "arbtable.dev"), nil, driverOn(""), "may write only that node's"},
			{"another driver's slice", admission.Create, slice("n1", "gpu.example.com"), nil, driverOn("n1"),
				"arbtable-dra writes only ResourceSlices of driver arbtable.dev"},
			{"another user", admission.Create, slice("n2", "gpu.example.com"), nil, &user.DefaultInfo{Name: "system:node:n1"}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var obj, old runtime.Object
				if tc.obj != nil {
					obj = tc.obj
				}
				if tc.old != nil {
					old = tc.old
				}
				got := p.review(t, tc.op, "resourceslices", obj, old, tc.u)
				if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
					t.Errorf("refusal %q, want %q", got, tc.want)
				}
			})
		}
	}
}
