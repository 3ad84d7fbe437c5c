// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"arbtable.dev/dra/pkg/checkpoint"
)

// slowAPI is fakeAPI whose pod or claim reads ("pod", "claim") hang
// until their context ends; it records each read's deadline.
type slowAPI struct {
	*fakeAPI
	hang string

	mu        sync.Mutex
	deadlines []time.Time // zero: the read had none
}

func (s *slowAPI) read(ctx context.Context, what string) error {
	dl, _ := ctx.Deadline()
	s.mu.Lock()
	s.deadlines = append(s.deadlines, dl)
	s.mu.Unlock()
	if s.hang == what {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}

func (s *slowAPI) GetPod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	if err := s.read(ctx, "pod"); err != nil {
		return nil, err
	}
	return s.fakeAPI.GetPod(ctx, ns, name)
}

func (s *slowAPI) GetClaim(ctx context.Context, ns, name string) (*resourceapi.ResourceClaim, error) {
	if err := s.read(ctx, "claim"); err != nil {
		return nil, err
	}
	return s.fakeAPI.GetClaim(ctx, ns, name)
}

// The API reads that find a pod's claims at sandbox start share one
// deadline, APITimeout (DefaultAPITimeout when unset) or the caller's if
// earlier: an API server that does not answer fails that sandbox within
// it, before the runtime's NRI timeout would disconnect the plugin.
func TestResolveTimeout(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration // Config.APITimeout
		parent  time.Duration // the caller's deadline, 0 none
		hang    string
		wantErr string
	}{
		{name: "pod and claim answer, the default bound", timeout: 0},
		{name: "pod and claim answer, a bound of 3 s", timeout: 3 * time.Second},
		{name: "the pod read hangs", timeout: 20 * time.Millisecond, hang: "pod", wantErr: "reading pod ns/pod-2 for its arbtable claims: context deadline exceeded"},
		{name: "the claim read hangs", timeout: 20 * time.Millisecond, hang: "claim", wantErr: "claim claim-a of pod ns/pod-2: context deadline exceeded"},
		{name: "the caller's earlier deadline", timeout: time.Hour, parent: 20 * time.Millisecond, hang: "claim", wantErr: "context deadline exceeded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.d.cfg.APITimeout = tc.timeout
			c := claim("a", "eth0", 4, 0, "pod-1")
			if err := e.prepare(t, c); err != nil {
				t.Fatal(err)
			}
			api := &slowAPI{fakeAPI: newAPI(), hang: tc.hang}
			api.addClaim(c)
			api.addPod("pod-2", "claim-a")
			e.d.SetPodSource(api)
			ctx := context.Background()
			var parent time.Time
			if tc.parent > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.parent)
				defer cancel()
				parent, _ = ctx.Deadline()
			}
			type result struct {
				has bool
				err error
			}
			done := make(chan result, 1)
			before := time.Now()
			go func() {
				has, err := e.d.Resolve(ctx, "pod-2", "ns", "pod-2")
				done <- result{has, err}
			}()
			var r result
			select {
			case r = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Resolve still waiting for a hung API read after 10 s")
			}
			after := time.Now()
			if tc.wantErr == "" && (r.err != nil || !r.has) {
				t.Fatalf("Resolve: %v, %v; want the shared claim found", r.has, r.err)
			}
			if tc.wantErr != "" && (r.err == nil || !strings.Contains(r.err.Error(), tc.wantErr) || !errors.Is(r.err, context.DeadlineExceeded)) {
				t.Fatalf("Resolve: %v, want %q", r.err, tc.wantErr)
			}
			bound := tc.timeout
			if bound == 0 {
				bound = DefaultAPITimeout
			}
			api.mu.Lock()
			defer api.mu.Unlock()
			want := 2 // the pod, then its claim
			if tc.hang == "pod" {
				want = 1
			}
			if len(api.deadlines) != want {
				t.Fatalf("%d reads, want %d", len(api.deadlines), want)
			}
			for i, dl := range api.deadlines {
				switch {
				case dl.IsZero():
					t.Errorf("read %d without a deadline", i)
				case !parent.IsZero() && !dl.Equal(parent):
					t.Errorf("read %d: deadline %v, want the caller's %v", i, dl, parent)
				case parent.IsZero() && (dl.Before(before.Add(bound)) || dl.After(after.Add(bound))):
					t.Errorf("read %d: deadline %v after the call, want %v", i, dl.Sub(before), bound)
				case dl != api.deadlines[0]:
					t.Errorf("read %d: deadline %v, the pod read's %v: one budget for the lookup", i, dl, api.deadlines[0])
				}
			}
		})
	}
}

// A claim's failed status writes are retried after a backoff that
// doubles with each failure in a row, up to the cap, and starts again
// after a success. The retries are run by the test (no timers, no sleeps).
func TestStatusBackoff(t *testing.T) {
	tests := []struct {
		name  string
		fails []int // per status put in turn: its writes that fail first
		want  []time.Duration
	}{
		{name: "no failure, no retry", fails: []int{0}},
		{name: "one failure", fails: []int{1}, want: []time.Duration{1 * time.Second}},
		{name: "doubles up to the cap", fails: []int{7},
			want: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second}},
		{name: "a success starts again", fails: []int{3, 2},
			want: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 1 * time.Second, 2 * time.Second}},
	}
	rec := checkpoint.Record{ClaimUID: "a", Namespace: "ns", Name: "claim-a"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeStatus{got: map[string]DeviceStatus{}}
			q := newStatusQueue(fs)
			q.backoff, q.maxBackoff = time.Second, 10*time.Second
			var mu sync.Mutex
			var delays []time.Duration
			retries := make(chan func(), 64)
			q.after = func(d time.Duration, f func()) {
				mu.Lock()
				delays = append(delays, d)
				mu.Unlock()
				retries <- f
			}
			for i, n := range tc.fails {
				fs.mu.Lock()
				fs.fail = n
				fs.mu.Unlock()
				q.put(rec, DeviceStatus{NIC: "eth0", Slots: i + 1})
				for range n {
					select {
					case f := <-retries:
						f()
					case <-time.After(10 * time.Second):
						t.Fatal("no retry scheduled after a failed write")
					}
				}
				waitIdle(t, q)
			}
			select {
			case <-retries:
				t.Fatal("a retry scheduled after the last write succeeded")
			default:
			}
			mu.Lock()
			defer mu.Unlock()
			if !slices.Equal(delays, tc.want) {
				t.Errorf("retry delays %v, want %v", delays, tc.want)
			}
			fs.mu.Lock()
			defer fs.mu.Unlock()
			if len(fs.writes) != len(tc.fails) || fs.writes[len(fs.writes)-1].Slots != len(tc.fails) {
				t.Errorf("writes %+v: each status once, the last %d", fs.writes, len(tc.fails))
			}
		})
	}
}
