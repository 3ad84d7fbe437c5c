// SPDX-License-Identifier: Apache-2.0
package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/admission"
)

// certFiles serves the key pair in dir (tls.crt, tls.key), read again
// when either file changes: a renewed Secret reaches the mounted volume
// without a restart.
type certFiles struct {
	dir  string
	mu   sync.Mutex
	mod  [2]time.Time
	cert *tls.Certificate
}

func (c *certFiles) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	crt, key := filepath.Join(c.dir, "tls.crt"), filepath.Join(c.dir, "tls.key")
	var mod [2]time.Time
	for i, f := range []string{crt, key} {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		mod[i] = st.ModTime()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cert != nil && mod == c.mod {
		return c.cert, nil
	}
	pair, err := tls.LoadX509KeyPair(crt, key)
	if err != nil {
		return nil, err
	}
	c.cert, c.mod = &pair, mod
	return c.cert, nil
}

// serveWebhook serves the pod admission webhook (pkg/admission) over TLS
// at addr with the key pair in certDir; nothing when addr is "".
func serveWebhook(ctx context.Context, addr, certDir string, src admission.Source, timeout time.Duration) (net.Addr, error) {
	if addr == "" {
		return nil, nil
	}
	// the Secret's volume is optional: a pair made after the pod started
	// is served once the kubelet writes it; until then handshakes fail
	// and the API server, under failurePolicy Ignore, admits unchecked
	certs := &certFiles{dir: certDir}
	if _, err := certs.get(nil); err != nil {
		klog.FromContext(ctx).Error(err, "no key pair for the admission webhook yet: pods with two arbtable claims are refused only at sandbox start until there is one (deploy/kubernetes/dra/webhook-cert.sh)", "dir", certDir)
	}
	srv := &http.Server{
		Handler:           admission.Handler(src, timeout),
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: certs.get},
	}
	return serveHTTP(ctx, addr, srv, "admission webhook")
}
