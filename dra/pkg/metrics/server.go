// SPDX-License-Identifier: Apache-2.0
package metrics

import (
	"net/http"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Health is what the probes answer: alive while the process serves;
// ready once NRI is connected and the resource slices are published.
type Health struct {
	mu        sync.Mutex
	nri       bool
	published error
	once      bool // published at least once
}

// SetNRI records whether the NRI connection is up.
func (h *Health) SetNRI(up bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nri = up
}

// SetPublished records the last publication's result.
func (h *Health) SetPublished(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.published, h.once = err, true
}

// Ready returns why the driver is not ready, "" when it is.
func (h *Health) Ready() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var why []string
	if !h.nri {
		why = append(why, "NRI not connected")
	}
	if !h.once {
		why = append(why, "resource slices not published")
	} else if h.published != nil {
		why = append(why, "publishing resource slices: "+h.published.Error())
	}
	return strings.Join(why, "; ")
}

// Handler serves /metrics from reg, /healthz (liveness) and /readyz
// (readiness: 503 with the reason until Ready).
func Handler(reg *prometheus.Registry, h *Health) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if why := h.Ready(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
}
