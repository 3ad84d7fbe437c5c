// SPDX-License-Identifier: Apache-2.0

// Package admission refuses, when it is created, a pod that would hold
// more than one arbtable class: a pod's traffic carries one mark, so one
// class. Which class a pod's claims ask for is in the ResourceClaims and
// ResourceClaimTemplates it names, which a ValidatingAdmissionPolicy on
// pods cannot read; this webhook reads them. The driver still refuses such
// a pod at sandbox start (ClassFailed) when the webhook was not asked (its
// failurePolicy is Ignore) or a claim did not exist yet.
package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	drslices "arbtable.dev/dra/pkg/slices"
)

// Source reads the objects a pod names.
type Source interface {
	GetClaim(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaim, error)
	GetClaimTemplate(ctx context.Context, namespace, name string) (*resourceapi.ResourceClaimTemplate, error)
}

// ArbtableClass says whether a DeviceClass is one of arbtable's:
// arbtable.dev and *.arbtable.dev, as the claim policy names them.
func ArbtableClass(name string) bool {
	return name == drslices.DriverName || strings.HasSuffix(name, "."+drslices.DriverName)
}

// heldRequests counts the requests of a claim's spec that would hold an
// arbtable class: those of an arbtable DeviceClass (any of a
// firstAvailable's subrequests) without adminAccess.
func heldRequests(spec *resourceapi.DeviceClaim) int {
	n := 0
	for _, r := range spec.Requests {
		switch {
		case r.Exactly != nil:
			if ArbtableClass(r.Exactly.DeviceClassName) && !ptr.Deref(r.Exactly.AdminAccess, false) {
				n++
			}
		default:
			for _, s := range r.FirstAvailable {
				if ArbtableClass(s.DeviceClassName) {
					n++
					break
				}
			}
		}
	}
	return n
}

// claimHolds says whether an existing claim holds (or would hold) an
// arbtable class: by its allocation once it has one, else by its spec.
func claimHolds(c *resourceapi.ResourceClaim) bool {
	if a := c.Status.Allocation; a != nil {
		for _, r := range a.Devices.Results {
			if r.Driver == drslices.DriverName && !ptr.Deref(r.AdminAccess, false) {
				return true
			}
		}
		return false
	}
	return heldRequests(&c.Spec.Devices) > 0
}

// Check returns why pod may not be created ("" when it may) and, apart,
// the claims it could not read (the pod is let through: the driver refuses
// it at sandbox start if it holds two classes then).
func Check(ctx context.Context, src Source, pod *corev1.Pod) (refusal string, unread []string) {
	var holding []string
	for _, pc := range pod.Spec.ResourceClaims {
		var holds bool
		switch {
		case pc.ResourceClaimName != nil:
			c, err := src.GetClaim(ctx, pod.Namespace, *pc.ResourceClaimName)
			if err != nil {
				unread = append(unread, fmt.Sprintf("ResourceClaim %s: %v", *pc.ResourceClaimName, err))
				continue
			}
			holds = claimHolds(c)
		case pc.ResourceClaimTemplateName != nil:
			t, err := src.GetClaimTemplate(ctx, pod.Namespace, *pc.ResourceClaimTemplateName)
			if err != nil {
				unread = append(unread, fmt.Sprintf("ResourceClaimTemplate %s: %v", *pc.ResourceClaimTemplateName, err))
				continue
			}
			holds = heldRequests(&t.Spec.Spec.Devices) > 0
		}
		if holds {
			holding = append(holding, pc.Name)
		}
	}
	if len(holding) > 1 {
		refusal = fmt.Sprintf("arbtable.dev: pod claims %s each hold an arbtable class; a pod's traffic carries one mark, so a pod may hold one (put the devices in one claim, or use one claim)",
			strings.Join(holding, ", "))
	}
	return refusal, unread
}

// Review answers one AdmissionReview request: pods only, others allowed.
func Review(ctx context.Context, src Source, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if req.Kind.Group != "" || req.Kind.Kind != "Pod" {
		return resp
	}
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		resp.Warnings = []string{"arbtable.dev: the pod could not be decoded, not checked: " + err.Error()}
		return resp
	}
	if pod.Namespace == "" {
		pod.Namespace = req.Namespace
	}
	refusal, unread := Check(ctx, src, &pod)
	if refusal != "" {
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Message: refusal,
			Reason: metav1.StatusReasonForbidden, Code: http.StatusForbidden}
		return resp
	}
	for _, u := range unread {
		resp.Warnings = append(resp.Warnings, "arbtable.dev: not checked for a second arbtable class: "+u)
	}
	return resp
}

// Handler serves AdmissionReview v1 at any path; each review's reads are
// bounded by timeout.
func Handler(src Source, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST an AdmissionReview", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		var ar admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &ar); err != nil || ar.Request == nil {
			http.Error(w, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		out := admissionv1.AdmissionReview{TypeMeta: ar.TypeMeta, Response: Review(ctx, src, ar.Request)}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(&out); err != nil {
			http.Error(w, "encoding the review: "+err.Error(), http.StatusInternalServerError)
		}
	})
}
