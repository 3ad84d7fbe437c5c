// SPDX-License-Identifier: Apache-2.0
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

type noSource struct{}

func (noSource) GetClaim(context.Context, string, string) (*resourceapi.ResourceClaim, error) {
	return &resourceapi.ResourceClaim{}, nil
}

func (noSource) GetClaimTemplate(context.Context, string, string) (*resourceapi.ResourceClaimTemplate, error) {
	return &resourceapi.ResourceClaimTemplate{}, nil
}

// writePair writes a self-signed key pair for 127.0.0.1 named cn into dir
// and returns its certificate.
func writePair(t *testing.T, dir, cn string) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServeWebhook(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if a, err := serveWebhook(ctx, "", t.TempDir(), noSource{}, time.Second); a != nil || err != nil {
		t.Fatalf("no address: %v %v", a, err)
	}
	// no pair yet (the Secret not made): it listens, handshakes fail
	dir := t.TempDir()
	addr, err := serveWebhook(ctx, "127.0.0.1:0", dir, noSource{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := tls.Dial("tcp", addr.String(), &tls.Config{InsecureSkipVerify: true}); err == nil { //nolint:gosec // a handshake that must fail
		c.Close()
		t.Fatal("a handshake without a key pair")
	}
	first := writePair(t, dir, "first")
	ask := func(want *x509.Certificate) {
		t.Helper()
		pool := x509.NewCertPool()
		pool.AddCert(want)
		cl := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		in := admissionv1.AdmissionReview{
			TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
			Request: &admissionv1.AdmissionRequest{UID: "u", Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
				Object: runtime.RawExtension{Raw: []byte(`{"metadata":{"name":"p"}}`)}}}
		body, _ := json.Marshal(&in)
		resp, err := cl.Post("https://"+addr.String()+"/validate-pods", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%s: %v", want.Subject.CommonName, err)
		}
		defer resp.Body.Close()
		var out admissionv1.AdmissionReview
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Response == nil || !out.Response.Allowed {
			t.Fatalf("%s: %v %+v", want.Subject.CommonName, err, out.Response)
		}
	}
	ask(first)
	// a renewed Secret: the next connection gets the new pair
	time.Sleep(20 * time.Millisecond)
	second := writePair(t, dir, "second")
	future := time.Now().Add(time.Second)
	for _, f := range []string{"tls.crt", "tls.key"} {
		if err := os.Chtimes(filepath.Join(dir, f), future, future); err != nil {
			t.Fatal(err)
		}
	}
	ask(second)
}
