// SPDX-License-Identifier: Apache-2.0
package driver

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"arbtable.dev/dra/pkg/checkpoint"
	drslices "arbtable.dev/dra/pkg/slices"
)

// fakeAPI is the API server's pods and claims in namespace ns.
type fakeAPI struct {
	mu     sync.Mutex
	pods   map[string]*corev1.Pod
	claims map[string]*resourceapi.ResourceClaim
	err    error
	reads  int
}

func newAPI() *fakeAPI {
	return &fakeAPI{pods: map[string]*corev1.Pod{}, claims: map[string]*resourceapi.ResourceClaim{}}
}

func (a *fakeAPI) GetPod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	if a.err != nil {
		return nil, a.err
	}
	if p, ok := a.pods[ns+"/"+name]; ok {
		return p.DeepCopy(), nil
	}
	return nil, errors.New("pod not found")
}

func (a *fakeAPI) GetClaim(_ context.Context, ns, name string) (*resourceapi.ResourceClaim, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.reads++
	if a.err != nil {
		return nil, a.err
	}
	if c, ok := a.claims[ns+"/"+name]; ok {
		return c.DeepCopy(), nil
	}
	return nil, errors.New("claim not found")
}

// addPod adds pod "name" (UID name) using the named claims.
func (a *fakeAPI) addPod(name string, claims ...string) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name)}}
	for i, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, corev1.PodResourceClaim{
			Name: "c" + string(rune('0'+i)), ResourceClaimName: ptr.To(c)})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.pods["ns/"+name] = p
}

func (a *fakeAPI) addClaim(c *resourceapi.ResourceClaim) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.claims[c.Namespace+"/"+c.Name] = c.DeepCopy()
}

// withStatus is c with the device status the driver wrote for it.
func withStatus(t *testing.T, c *resourceapi.ResourceClaim, st DeviceStatus) *resourceapi.ResourceClaim {
	t.Helper()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	c = c.DeepCopy()
	r := c.Status.Allocation.Devices.Results[0]
	c.Status.Devices = []resourceapi.AllocatedDeviceStatus{{Driver: drslices.DriverName, Pool: r.Pool, Device: r.Device,
		Data: &runtime.RawExtension{Raw: raw}}}
	return c
}

// sandbox does what the NRI plugin's RunPodSandbox does for pod name.
func (e *env) sandbox(name, hostIf string) (bool, error) {
	ctx := context.Background()
	has, err := e.d.Resolve(ctx, name, "ns", name)
	if err != nil || !has {
		return has, err
	}
	return true, e.d.PodUp(ctx, name, hostIf, nil)
}

// classes counts the classes in the driver's minor range on nic.
func (e *env) classes(t *testing.T, nic string) int {
	t.Helper()
	q, err := e.k.Read(nic)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range q.Classes {
		if e.d.owned(c.ClassID & 0xffff) {
			n++
		}
	}
	return n
}

// The kubelet prepares a claim once, for the pod it sees first: the
// claim's other pods (a shared claim, a workload's claim reserved for a
// non-pod consumer) are found from the pod at sandbox time and marked into
// the same class; a pod with no arbtable claim is untouched; a pod whose
// claims cannot be read while some may be prepared here fails. The driver
// is restarted between Prepare and the sandboxes (killed in between).
func TestSandboxTimeClaims(t *testing.T) {
	workload := func() *resourceapi.ResourceClaim {
		c := claim("w", "eth0", 4, 0)
		c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{APIGroup: "scheduling.k8s.io", Resource: "podgroups", Name: "g", UID: "g1"}}
		return c
	}
	admin := func() *resourceapi.ResourceClaim {
		c := claim("v", "eth0", 4, 0, "pod-1")
		c.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
		return c
	}
	type start struct {
		pod     string
		wantErr string
		shaped  bool
	}
	tests := []struct {
		name      string
		claim     *resourceapi.ResourceClaim // prepared (nil: none)
		pods      map[string][]string        // in the API: pod -> its claims' names
		apiErr    error
		starts    []start
		wantSlots int // slots the shaped pods' one class holds
		wantReads int // API reads; -1: any
	}{
		{name: "shared claim: the second pod joins the class", claim: claim("a", "eth0", 4, 0, "pod-1"),
			pods:   map[string][]string{"pod-1": {"claim-a"}, "pod-2": {"claim-a"}},
			starts: []start{{pod: "pod-1", shaped: true}, {pod: "pod-2", shaped: true}}, wantSlots: 4, wantReads: -1},
		{name: "workload claim: every pod shaped", claim: workload(),
			pods:   map[string][]string{"pod-1": {"claim-w"}, "pod-2": {"claim-w"}, "pod-3": {"claim-w"}},
			starts: []start{{pod: "pod-1", shaped: true}, {pod: "pod-2", shaped: true}, {pod: "pod-3", shaped: true}}, wantSlots: 4, wantReads: -1},
		{name: "a pod without claims beside a claim's pod is untouched", claim: claim("a", "eth0", 4, 0, "pod-1"),
			pods:   map[string][]string{"pod-1": {"claim-a"}, "pod-x": nil},
			starts: []start{{pod: "pod-x"}, {pod: "pod-1", shaped: true}}, wantSlots: 4, wantReads: -1},
		{name: "API unreachable: a pod the records do not name fails, a named one starts", claim: claim("a", "eth0", 4, 0, "pod-1"),
			pods: map[string][]string{"pod-1": {"claim-a"}, "pod-2": {"claim-a"}}, apiErr: errors.New("connection refused"),
			starts: []start{{pod: "pod-1", shaped: true}, {pod: "pod-2", wantErr: "connection refused"}}, wantSlots: 4, wantReads: 1},
		{name: "adminAccess claim only: nothing to shape", claim: admin(),
			pods:   map[string][]string{"pod-1": {"claim-v"}},
			starts: []start{{pod: "pod-1"}}, wantReads: -1},
		{name: "no claim prepared, trusted checkpoint: the API is not read", claim: nil,
			pods:   map[string][]string{"pod-x": nil},
			starts: []start{{pod: "pod-x"}}, wantReads: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			api := newAPI()
			if tc.claim != nil {
				if err := e.prepare(t, tc.claim); err != nil {
					t.Fatal(err)
				}
				api.addClaim(tc.claim)
			}
			for p, cs := range tc.pods {
				api.addPod(p, cs...)
			}
			// killed between Prepare and the sandboxes: a new instance
			// on the checkpoint
			e.start(t)
			e.d.SetPodSource(api)
			api.err = tc.apiErr
			free0 := e.k.FreeSlots("eth0")
			var mark uint32
			for _, s := range tc.starts {
				ifname := "veth-" + s.pod
				has, err := e.sandbox(s.pod, ifname)
				if s.wantErr != "" {
					if err == nil || !strings.Contains(err.Error(), s.wantErr) {
						t.Fatalf("%s: err %v, want %q", s.pod, err, s.wantErr)
					}
					continue
				}
				if err != nil || has != s.shaped {
					t.Fatalf("%s: shaped %v (err %v), want %v", s.pod, has, err, s.shaped)
				}
				m := e.k.Marks[ifname]
				if !s.shaped {
					if m != 0 {
						t.Fatalf("%s: marked %#x", s.pod, m)
					}
					continue
				}
				if m == 0 || mark != 0 && m != mark {
					t.Fatalf("%s: mark %#x, the claim's first pod's %#x", s.pod, m, mark)
				}
				mark = m
			}
			if got := free0 - e.k.FreeSlots("eth0"); got != tc.wantSlots || e.classes(t, "eth0") != min(tc.wantSlots, 1) {
				t.Fatalf("%d slots in %d classes, want %d in one", got, e.classes(t, "eth0"), tc.wantSlots)
			}
			if tc.wantSlots > 0 && e.k.Fws["eth0"][mark] == 0 {
				t.Fatalf("mark %#x has no fw filter: %v", mark, e.k.Fws)
			}
			if tc.wantReads >= 0 && api.reads != tc.wantReads {
				t.Fatalf("%d API reads, want %d", api.reads, tc.wantReads)
			}
			// one pod down leaves the others shaped; Unprepare releases
			if tc.wantSlots > 0 {
				if err := e.d.PodDown(context.Background(), tc.starts[0].pod); err != nil {
					t.Fatal(err)
				}
				for _, s := range tc.starts[1:] {
					if s.shaped && e.k.Marks["veth-"+s.pod] != mark {
						t.Fatalf("%s lost its mark when %s went down", s.pod, tc.starts[0].pod)
					}
				}
				e.unprepare(t, string(tc.claim.UID))
				if e.k.FreeSlots("eth0") != free0 || len(e.k.Marks) != 0 || len(e.k.Fws["eth0"]) != 0 {
					t.Fatalf("after Unprepare: free %d of %d, marks %v, fws %v", e.k.FreeSlots("eth0"), free0, e.k.Marks, e.k.Fws)
				}
			}
		})
	}
}

// The status queue keeps the newest status per claim while a write is
// under way, skips one equal to the last written, and retries a failed
// write.
func TestStatusQueue(t *testing.T) {
	rec := checkpoint.Record{ClaimUID: "a", Namespace: "ns", Name: "claim-a"}
	st := func(i int) DeviceStatus { return DeviceStatus{NIC: "eth0", Slots: i} }
	tests := []struct {
		name      string
		fail      int
		puts      []int // after the first put, while its write waits
		attempts  int   // the writes let through, one by one, for those
		then      []int // each once the queue is idle
		wantSlots []int // the statuses written, in order
	}{
		{name: "newest while a write is under way", puts: []int{2, 3, 4}, attempts: 2, wantSlots: []int{1, 4}},
		{name: "unchanged not rewritten", puts: []int{1}, attempts: 1, then: []int{1, 1}, wantSlots: []int{1}},
		{name: "changed back is rewritten", puts: []int{2}, attempts: 2, then: []int{1}, wantSlots: []int{1, 2, 1}},
		{name: "a failed write retried", fail: 1, attempts: 2, wantSlots: []int{1}},
		{name: "a failed write not retried over a newer status", fail: 1, puts: []int{5}, attempts: 2, wantSlots: []int{5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := &fakeStatus{got: map[string]DeviceStatus{}, fail: tc.fail, gate: make(chan struct{}), started: make(chan struct{}, 16)}
			q := newStatusQueue(fs)
			q.backoff = time.Millisecond
			q.put(rec, st(1))
			<-fs.started
			for _, i := range tc.puts {
				q.put(rec, st(i))
			}
			fs.gate <- struct{}{}
			for i := 1; i < tc.attempts; i++ {
				<-fs.started // a retry comes after its backoff
				fs.gate <- struct{}{}
			}
			// from here every write goes through: one not expected shows
			close(fs.gate)
			waitIdle(t, q)
			for _, i := range tc.then {
				q.put(rec, st(i))
				waitIdle(t, q)
			}
			fs.mu.Lock()
			defer fs.mu.Unlock()
			var got []int
			for _, w := range fs.writes {
				got = append(got, w.Slots)
			}
			if !slices.Equal(got, tc.wantSlots) {
				t.Fatalf("wrote %v, want %v", got, tc.wantSlots)
			}
		})
	}
}

// waitIdle waits for the queue, or fails the test after 10 s.
func waitIdle(t *testing.T, q *statusQueue) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		q.wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the status queue still busy after 10 s")
	}
}

// The claim status is written off the hook's path: a status writer that
// hangs (an API server that does not answer) delays neither the sandbox's
// shaping nor a second pod's; the status follows once it answers, once
// per change.
func TestSlowStatusDoesNotDelaySandbox(t *testing.T) {
	e := newEnv(t)
	e.status.gate, e.status.started = make(chan struct{}), make(chan struct{}, 8)
	api := newAPI()
	c := claim("a", "eth0", 4, 0, "pod-1")
	if err := e.prepare(t, c); err != nil {
		t.Fatal(err)
	}
	api.addClaim(c)
	api.addPod("pod-1", "claim-a")
	api.addPod("pod-2", "claim-a")
	e.d.SetPodSource(api)
	for _, p := range []string{"pod-1", "pod-2", "pod-1"} {
		done := make(chan error, 1)
		go func() {
			_, err := e.sandbox(p, "veth-"+p)
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the sandbox waited 10 s for a status writer that does not answer", p)
		}
		if e.k.Marks["veth-"+p] == 0 {
			t.Fatalf("%s not marked", p)
		}
	}
	<-e.status.started // the first write is under way, and waits
	close(e.status.gate)
	st, ok := e.statusOf("a")
	if !ok || st.Slots != 4 || st.Interface != "" {
		t.Fatalf("status %+v (written %v): 4 slots, no one interface for two pods", st, ok)
	}
	e.status.mu.Lock()
	n := len(e.status.writes)
	e.status.mu.Unlock()
	// pod-1's status (one interface), then the claim's with two pods;
	// pod-1 again changes nothing: at most those two writes
	if n < 1 || n > 2 {
		t.Fatalf("%d status writes for two distinct statuses", n)
	}
}

// A corrupt or deleted checkpoint: the driver starts; the classes the
// kernel holds are adopted by the claims the API server has, by the
// status the driver wrote or, without one, by their shape; a class no
// claim holds is released; a claim prepared whose pod had not started
// yet is shaped when it starts; Unprepare leaves nothing behind.
func TestCheckpointLost(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		damage  func(t *testing.T, path string)
		corrupt bool // renamed .corrupt
		running bool // pods a, b, s ran before the damage
	}{
		{name: "corrupt", corrupt: true, running: true, damage: func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(`{"version":1,"checksum":"00","records":[`), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "checksum mismatch", corrupt: true, running: true, damage: func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			// a bit flipped in b's record: the checksum no longer matches
			bad := strings.Replace(string(b), `"slots": 8`, `"slots": 9`, 1)
			if bad == string(b) {
				t.Fatal("no 8-slot record in the checkpoint")
			}
			if err := os.WriteFile(p, []byte(bad), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted", running: true, damage: func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted before any class was admitted", damage: func(t *testing.T, p string) {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			api := newAPI()
			e.d.SetPodSource(api)
			free0 := map[string]int{"eth0": e.k.FreeSlots("eth0"), "eth1": e.k.FreeSlots("eth1")}
			low0 := e.k.FreeLowSlots("eth1")
			// a, z: the same shape, status written (z's pod reported
			// first: each must get its own class back, by its status);
			// b: status never written; s: a share; c: prepared, its pod
			// not started
			cs := map[string]*resourceapi.ResourceClaim{
				"a": claim("a", "eth0", 4, 0, "pod-a"), "z": claim("z", "eth0", 4, 1, "pod-z"), "b": claim("b", "eth0", 8, 0, "pod-b"),
				"s": shareClaim("s", "eth1", 2, `{"apiVersion":"arbtable.dev/v1alpha1","kind":"ClassConfig","share":7}`),
				"c": claim("c", "eth1", 2, 0, "pod-c"),
			}
			cs["s"].Status.ReservedFor[0] = resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: "pod-s", UID: "pod-s"}
			for uid, c := range cs {
				if err := e.prepare(t, c); err != nil {
					t.Fatal(err)
				}
				api.addClaim(c)
				api.addPod("pod-"+uid, c.Name)
			}
			before := map[string]uint32{}
			var run []Sandbox
			if tc.running {
				for _, uid := range []string{"a", "z", "b", "s"} {
					if _, err := e.sandbox("pod-"+uid, "veth-"+uid); err != nil {
						t.Fatal(err)
					}
					before[uid] = e.d.Records()[uid].ClassID
					run = append(run, Sandbox{PodUID: "pod-" + uid, Namespace: "ns", Name: "pod-" + uid, HostIf: hostIf("veth-" + uid)})
				}
				slices.Reverse(run)
				for _, uid := range []string{"a", "z", "s"} {
					st, ok := e.statusOf(uid)
					if !ok {
						t.Fatalf("no status for %s", uid)
					}
					api.addClaim(withStatus(t, cs[uid], st))
				}
				// a class in the driver's range no claim holds (1 slot:
				// no claim's shape)
				if _, err := e.k.Admit("eth0", 0x10000|0x100+0x60, 1000, 64, ""); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := os.ReadFile(e.cfg.Checkpoint)
			tc.damage(t, e.cfg.Checkpoint)
			damaged, _ := os.ReadFile(e.cfg.Checkpoint)

			e.start(t) // must not fail
			e.d.SetPodSource(api)
			if tc.corrupt {
				if got, err := os.ReadFile(e.cfg.Checkpoint + ".corrupt"); err != nil || string(got) != string(damaged) || string(got) == string(b) {
					t.Fatalf("the corrupt checkpoint not kept aside: %v", err)
				}
			}
			admits := e.k.Calls
			<-e.d.Synchronize(ctx, run)
			// adopted, not released and admitted again (the same
			// classid would come back: the lowest free mark)
			if e.k.Calls != admits {
				t.Fatalf("%d admissions after the restart: a running pod's class was not adopted", e.k.Calls-admits)
			}
			for uid, cid := range before {
				r := e.d.Records()[uid]
				if r.ClassID != cid || e.k.Marks["veth-"+uid] != r.Mark || e.k.Fws[r.NIC][r.Mark] != cid {
					t.Fatalf("%s: class %x mark %#x (veth %#x, fw %x), had class %x: not adopted",
						uid, r.ClassID, r.Mark, e.k.Marks["veth-"+uid], e.k.Fws[r.NIC][r.Mark], cid)
				}
			}
			want0 := free0["eth0"]
			if tc.running {
				want0 -= 4 + 4 + 8
			}
			wantClasses := 0
			if tc.running {
				wantClasses = 3
			}
			if e.k.FreeSlots("eth0") != want0 || e.classes(t, "eth0") != wantClasses {
				t.Fatalf("eth0: %d slots free in %d classes, want %d in %d (a leak, or a class dropped)",
					e.k.FreeSlots("eth0"), e.classes(t, "eth0"), want0, wantClasses)
			}
			// c's pod starts now: shaped, from a record rebuilt from its
			// claim
			if has, err := e.sandbox("pod-c", "veth-c"); err != nil || !has {
				t.Fatalf("pod-c: shaped %v, err %v", has, err)
			}
			if got := free0["eth1"] - e.k.FreeSlots("eth1"); got != 2 || e.k.Marks["veth-c"] == 0 {
				t.Fatalf("pod-c: %d slots on eth1, mark %#x", got, e.k.Marks["veth-c"])
			}
			for uid := range cs {
				e.unprepare(t, uid)
			}
			if e.k.FreeSlots("eth0") != free0["eth0"] || e.k.FreeSlots("eth1") != free0["eth1"] || e.k.FreeLowSlots("eth1") != low0 ||
				len(e.k.Marks) != 0 || len(e.k.Fws["eth0"])+len(e.k.Fws["eth1"]) != 0 {
				t.Fatalf("left behind: free eth0 %d eth1 %d LOW %d, marks %v, fws %v",
					e.k.FreeSlots("eth0"), e.k.FreeSlots("eth1"), e.k.FreeLowSlots("eth1"), e.k.Marks, e.k.Fws)
			}
		})
	}
}
