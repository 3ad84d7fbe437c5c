// SPDX-License-Identifier: Apache-2.0
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/containerd/nri/pkg/stub"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/metrics"
)

// serveMetrics serves /metrics, /healthz and /readyz on addr until ctx
// ends; addr "" serves nothing. The listener is opened before it returns,
// so a port in use fails the start; it returns the address listened on.
func serveMetrics(ctx context.Context, addr string, c *metrics.Collector, h *metrics.Health) (net.Addr, error) {
	if addr == "" {
		return nil, nil
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := &http.Server{Handler: metrics.Handler(reg, h), ReadHeaderTimeout: 10 * time.Second}
	return serveHTTP(ctx, addr, srv, "metrics server")
}

// serveHTTP serves srv on addr until ctx ends (TLS when srv has a
// TLSConfig) and returns the address it listens on. what names the server
// in the log when serving ends on an error.
func serveHTTP(ctx context.Context, addr string, srv *http.Server, what string) (net.Addr, error) {
	a, err := listenAddr(addr)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	go func() {
		serve := func() error { return srv.Serve(l) }
		if srv.TLSConfig != nil {
			serve = func() error { return srv.ServeTLS(l, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, what+" ended", "address", addr)
		}
	}()
	return l.Addr(), nil
}

// listenAddr returns addr as net.Listen takes it: the DaemonSet's
// $(HOST_IP):PORT is an IPv6 literal without brackets on an IPv6 node.
func listenAddr(addr string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err == nil {
		return addr, nil
	}
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return "", fmt.Errorf("%q: not HOST:PORT", addr)
	}
	host, port := addr[:i], addr[i+1:]
	if ip := net.ParseIP(host); ip == nil || ip.To4() != nil {
		return "", fmt.Errorf("%q: not HOST:PORT", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// runStub runs the NRI stub as stub.Run does, and tells health when the
// connection is up (Start returns once the runtime configured the plugin).
func runStub(ctx context.Context, s stub.Stub, health *metrics.Health) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	health.SetNRI(true)
	defer health.SetNRI(false)
	done := make(chan struct{})
	go func() {
		s.Wait()
		close(done)
	}()
	select {
	case <-done:
		return errors.New("NRI connection closed")
	case <-ctx.Done():
		s.Stop()
		return ctx.Err()
	}
}
