// SPDX-License-Identifier: Apache-2.0
package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rr := httptest.NewRecorder()
	h.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rr.Result().Body)
	return rr.Code, string(b)
}

func TestReadiness(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nri     bool
		publish []error // SetPublished calls, in order
		code    int
		why     string
	}{
		{"start", false, nil, 503, "NRI not connected; resource slices not published"},
		{"nri only", true, nil, 503, "resource slices not published"},
		{"published only", false, []error{nil}, 503, "NRI not connected"},
		{"both", true, []error{nil}, 200, "ok"},
		{"publish failed", true, []error{errors.New("forbidden")}, 503, "publishing resource slices: forbidden"},
		{"publish failed then worked", true, []error{errors.New("x"), nil}, 200, "ok"},
		{"worked then failed", true, []error{nil, errors.New("x")}, 503, "publishing resource slices: x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var hl Health
			hl.SetNRI(tc.nri)
			for _, e := range tc.publish {
				hl.SetPublished(e)
			}
			h := Handler(prometheus.NewRegistry(), &hl)
			code, body := get(t, h, "/readyz")
			if code != tc.code || strings.TrimSpace(body) != tc.why {
				t.Errorf("/readyz = %d %q, want %d %q", code, body, tc.code, tc.why)
			}
			// liveness does not depend on readiness
			if code, _ := get(t, h, "/healthz"); code != 200 {
				t.Errorf("/healthz = %d", code)
			}
		})
	}
}

func TestMetricsServed(t *testing.T) {
	c, _ := fixture(t)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	code, body := get(t, Handler(reg, &Health{}), "/metrics")
	if code != 200 || !strings.Contains(body, `arbtable_dra_claim_dropped_packets_total{claim="fast",class="1:101",namespace="ns",nic="eth0"} 7`) {
		t.Fatalf("/metrics = %d:\n%s", code, body)
	}
}
