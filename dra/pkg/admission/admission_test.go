// SPDX-License-Identifier: Apache-2.0
package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

type fakeSource struct {
	claims    map[string]*resourceapi.ResourceClaim
	templates map[string]*resourceapi.ResourceClaimTemplate
	err       error // every read fails with it
}

func (f fakeSource) GetClaim(_ context.Context, ns, name string) (*resourceapi.ResourceClaim, error) {
	if f.err != nil {
		return nil, f.err
	}
	if c, ok := f.claims[ns+"/"+name]; ok {
		return c, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaims"}, name)
}

func (f fakeSource) GetClaimTemplate(_ context.Context, ns, name string) (*resourceapi.ResourceClaimTemplate, error) {
	if f.err != nil {
		return nil, f.err
	}
	if t, ok := f.templates[ns+"/"+name]; ok {
		return t, nil
	}
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "resource.k8s.io", Resource: "resourceclaimtemplates"}, name)
}

func exactly(class string, admin bool) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: "r", Exactly: &resourceapi.ExactDeviceRequest{
		DeviceClassName: class, AdminAccess: ptr.To(admin)}}
}

func template(reqs ...resourceapi.DeviceRequest) *resourceapi.ResourceClaimTemplate {
	return &resourceapi.ResourceClaimTemplate{Spec: resourceapi.ResourceClaimTemplateSpec{
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: reqs}}}}
}

func claim(allocated []resourceapi.DeviceRequestAllocationResult, reqs ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: reqs}}}
	if allocated != nil {
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: allocated}}
	}
	return c
}

// pod names its claims: "t:NAME" a template, "c:NAME" a claim
func pod(refs ...string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}}
	for i, r := range refs {
		pc := corev1.PodResourceClaim{Name: fmt.Sprintf("c%d", i)}
		kind, name, _ := strings.Cut(r, ":")
		if kind == "t" {
			pc.ResourceClaimTemplateName = ptr.To(name)
		} else {
			pc.ResourceClaimName = ptr.To(name)
		}
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, pc)
	}
	return p
}

func TestCheck(t *testing.T) {
	src := fakeSource{
		templates: map[string]*resourceapi.ResourceClaimTemplate{
			"ns/rate":   template(exactly("arbtable.dev", false)),
			"ns/share":  template(exactly("share.arbtable.dev", false)),
			"ns/admin":  template(exactly("arbtable.dev", true)),
			"ns/gpu":    template(exactly("gpu.example.com", false)),
			"ns/arbish": template(exactly("notarbtable.dev", false)),
			"ns/first": template(resourceapi.DeviceRequest{Name: "f", FirstAvailable: []resourceapi.DeviceSubRequest{
				{Name: "gpu", DeviceClassName: "gpu.example.com"}, {Name: "net", DeviceClassName: "arbtable.dev"}}}),
		},
		claims: map[string]*resourceapi.ResourceClaim{
			"ns/shared": claim(nil, exactly("arbtable.dev", false)),
			// allocated: the allocation decides, not the spec
			"ns/alloc-arb": claim([]resourceapi.DeviceRequestAllocationResult{{Driver: "arbtable.dev", Request: "r"}},
				exactly("other.example.com", false)),
			"ns/alloc-admin": claim([]resourceapi.DeviceRequestAllocationResult{{Driver: "arbtable.dev", Request: "r", AdminAccess: ptr.To(true)}},
				exactly("arbtable.dev", true)),
			"ns/alloc-gpu": claim([]resourceapi.DeviceRequestAllocationResult{{Driver: "gpu.example.com", Request: "r"}},
				exactly("arbtable.dev", false)),
		},
	}
	for _, tc := range []struct {
		name    string
		pod     *corev1.Pod
		refused string // words of the refusal, "" allowed
		unread  int
	}{
		{"no claims", pod(), "", 0},
		{"one arbtable claim", pod("t:rate"), "", 0},
		{"one arbtable and a gpu", pod("t:rate", "t:gpu"), "", 0},
		{"rate and share templates", pod("t:rate", "t:share"), "claims c0, c1 each hold an arbtable class", 0},
		{"the same template twice", pod("t:rate", "t:rate"), "c0, c1", 0},
		{"adminAccess holds no class", pod("t:rate", "t:admin"), "", 0},
		{"a class name that only ends like ours", pod("t:rate", "t:arbish"), "", 0},
		{"firstAvailable with an arbtable subrequest", pod("t:first", "t:share"), "c0, c1", 0},
		{"a shared claim and a template", pod("c:shared", "t:share"), "c0, c1", 0},
		{"allocated to arbtable whatever the spec", pod("c:alloc-arb", "t:rate"), "c0, c1", 0},
		{"allocated adminAccess", pod("c:alloc-admin", "t:rate"), "", 0},
		{"allocated to another driver", pod("c:alloc-gpu", "t:rate"), "", 0},
		{"a claim not created yet", pod("c:later", "t:rate"), "", 1},
		{"three, one missing", pod("t:rate", "t:missing", "t:share"), "c0, c2", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refusal, unread := Check(context.Background(), src, tc.pod)
			if (tc.refused == "") != (refusal == "") || !strings.Contains(refusal, tc.refused) {
				t.Errorf("refusal %q, want one with %q", refusal, tc.refused)
			}
			if len(unread) != tc.unread {
				t.Errorf("unread %q, want %d", unread, tc.unread)
			}
		})
	}
}

func review(t *testing.T, srv *httptest.Server, obj any, kind string) (*admissionv1.AdmissionReview, int) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	in := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u-1", Namespace: "ns", Operation: admissionv1.Create,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: kind}, Object: runtime.RawExtension{Raw: raw}},
	}
	body, _ := json.Marshal(&in)
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out admissionv1.AdmissionReview
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
	}
	return &out, resp.StatusCode
}

func TestHandler(t *testing.T) {
	src := fakeSource{templates: map[string]*resourceapi.ResourceClaimTemplate{
		"ns/rate": template(exactly("arbtable.dev", false)), "ns/share": template(exactly("share.arbtable.dev", false))}}
	srv := httptest.NewServer(Handler(src, time.Second))
	defer srv.Close()

	out, code := review(t, srv, pod("t:rate", "t:share"), "Pod")
	if code != http.StatusOK || out.Response == nil || out.Response.Allowed || out.Response.UID != "u-1" ||
		out.Response.Result == nil || out.Response.Result.Code != http.StatusForbidden ||
		!strings.Contains(out.Response.Result.Message, "one mark") || out.Kind != "AdmissionReview" {
		t.Fatalf("two classes: %d %+v", code, out)
	}
	out, code = review(t, srv, pod("t:rate"), "Pod")
	if code != http.StatusOK || !out.Response.Allowed || out.Response.UID != "u-1" {
		t.Fatalf("one class: %d %+v", code, out.Response)
	}
	// not a pod: allowed unread
	out, _ = review(t, srv, map[string]string{"x": "y"}, "Service")
	if !out.Response.Allowed {
		t.Fatalf("a Service: %+v", out.Response)
	}
	// the API unreachable: allowed, with a warning naming what was not read
	srv2 := httptest.NewServer(Handler(fakeSource{err: fmt.Errorf("connection refused")}, time.Second))
	defer srv2.Close()
	out, _ = review(t, srv2, pod("t:rate", "t:share"), "Pod")
	if !out.Response.Allowed || len(out.Response.Warnings) != 2 || !strings.Contains(out.Response.Warnings[0], "connection refused") {
		t.Fatalf("unreadable: %+v", out.Response)
	}
	// not an AdmissionReview
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("empty review: %d", resp.StatusCode)
	}
	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}
