// SPDX-License-Identifier: Apache-2.0

package driver

import (
	"context"
	"sync"
	"time"

	"k8s.io/klog/v2"

	"arbtable.dev/dra/pkg/checkpoint"
)

// statusQueue writes claim status off the NRI hook's path: the runtime
// times a plugin's request out and disconnects it, and an API server
// round trip (or its retries) must not decide whether a pod starts. It
// keeps the newest status per claim (coalescing), skips one equal to the
// last written, and retries a failed write after a backoff unless a newer
// status replaced it. The backoff doubles with each failure of a claim's
// writes, up to maxBackoff, and starts again after a success: an API
// server that is down is not asked once a second per claim.
type statusQueue struct {
	w          StatusWriter
	backoff    time.Duration
	maxBackoff time.Duration
	// after runs f once d has passed (time.AfterFunc; tests run the
	// retries themselves)
	after func(d time.Duration, f func())

	mu      sync.Mutex
	pending map[string]statusItem // by claim UID
	written map[string]statusItem
	writing map[string]statusItem // under way
	latest  map[string]statusItem // the last put: a retry older than it is dropped
	fails   map[string]int        // failed writes in a row
	running bool
	idle    *sync.Cond
}

type statusItem struct {
	rec checkpoint.Record
	st  DeviceStatus
}

// same says whether two items write the same claim status.
func (a statusItem) same(b statusItem) bool {
	return a.st == b.st && a.rec.Namespace == b.rec.Namespace && a.rec.Name == b.rec.Name &&
		a.rec.Pool == b.rec.Pool && a.rec.Device == b.rec.Device
}

func newStatusQueue(w StatusWriter) *statusQueue {
	q := &statusQueue{w: w, backoff: time.Second, maxBackoff: 2 * time.Minute,
		after:   func(d time.Duration, f func()) { time.AfterFunc(d, f) },
		pending: map[string]statusItem{}, written: map[string]statusItem{},
		writing: map[string]statusItem{}, latest: map[string]statusItem{}, fails: map[string]int{}}
	q.idle = sync.NewCond(&q.mu)
	return q
}

// put queues rec's status and returns at once.
func (q *statusQueue) put(rec checkpoint.Record, st DeviceStatus) {
	q.mu.Lock()
	defer q.mu.Unlock()
	it := statusItem{rec: rec, st: st}
	q.latest[rec.ClaimUID] = it
	// the same as written, or as the write under way (whose failure is
	// retried while it is the latest): nothing to queue
	if w, ok := q.writing[rec.ClaimUID]; ok && w.same(it) {
		delete(q.pending, rec.ClaimUID)
		return
	}
	if w, ok := q.written[rec.ClaimUID]; ok && w.same(it) {
		if _, busy := q.writing[rec.ClaimUID]; !busy {
			delete(q.pending, rec.ClaimUID)
			return
		}
	}
	q.pending[rec.ClaimUID] = it
	if !q.running {
		q.running = true
		go q.run()
	}
}

// forget drops a claim's state (Unprepare): a claim made again with the
// same name gets its status written.
func (q *statusQueue) forget(uid string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.pending, uid)
	delete(q.written, uid)
	delete(q.writing, uid)
	delete(q.latest, uid)
	delete(q.fails, uid)
}

// delay is the wait before the retry after n failed writes in a row:
// backoff, doubled n-1 times, at most maxBackoff.
func (q *statusQueue) delay(n int) time.Duration {
	d := q.backoff
	for i := 1; i < n && d < q.maxBackoff; i++ {
		d *= 2
	}
	return min(d, q.maxBackoff)
}

func (q *statusQueue) run() {
	for {
		q.mu.Lock()
		var uid string
		var it statusItem
		for uid, it = range q.pending {
			break
		}
		if uid == "" {
			q.running = false
			q.idle.Broadcast()
			q.mu.Unlock()
			return
		}
		delete(q.pending, uid)
		q.writing[uid] = it
		q.mu.Unlock()

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := q.w.WriteStatus(ctx, it.rec, it.st)
		cancel()

		q.mu.Lock()
		delete(q.writing, uid)
		if err == nil {
			q.written[uid] = it
			delete(q.fails, uid)
		} else {
			// the class is admitted; the status is information
			q.fails[uid]++
			d := q.delay(q.fails[uid])
			klog.Background().Error(err, "writing the claim's device status", "claim", it.rec.Namespace+"/"+it.rec.Name, "retryIn", d)
			q.after(d, func() { q.retry(uid, it) })
		}
		q.mu.Unlock()
	}
}

// retry queues a failed write again unless a newer status came meanwhile
// or the claim was unprepared.
func (q *statusQueue) retry(uid string, it statusItem) {
	q.mu.Lock()
	_, queued := q.pending[uid]
	l, ok := q.latest[uid]
	q.mu.Unlock()
	if !queued && ok && l.same(it) {
		q.put(it.rec, it.st)
	}
}

// wait returns once the queue has nothing to write now.
func (q *statusQueue) wait() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.running {
		q.idle.Wait()
	}
}
