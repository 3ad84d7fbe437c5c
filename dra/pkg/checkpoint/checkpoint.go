// SPDX-License-Identifier: Apache-2.0

// Package checkpoint keeps the driver's allocations on disk: one JSON file
// written atomically (a temporary file, fsync, rename, fsync of the
// directory) with a checksum, so that a crash leaves either the old or the
// new record set, never a torn one.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
)

// Version is the file format's version.
const Version = 1

// Record is one prepared claim.
type Record struct {
	ClaimUID  string   `json:"claimUID"`
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	PodUIDs   []string `json:"podUIDs"`
	Pool      string   `json:"pool"`
	Device    string   `json:"device"`
	Request   string   `json:"request"`
	NIC       string   `json:"nic"`
	Slots     int      `json:"slots"`
	RateBytes uint64   `json:"rateBytes"` // rate the kernel is asked for
	BoundNs   uint64   `json:"boundNs"`   // published bound of the block
	// Share, for a share device (one LOW slot): the class's LOW-table
	// weight; 0 for a HIGH block.
	Share uint32 `json:"share,omitempty"`
	// Set once the class is admitted (NRI RunPodSandbox).
	ClassID uint32 `json:"classID,omitempty"`
	Mark    uint32 `json:"mark,omitempty"`
	// Ifaces are the pods whose traffic is marked: pod UID -> host-side
	// interface.
	Ifaces map[string]string `json:"ifaces,omitempty"`
}

// Low says whether the record is a share device's (a LOW-table class).
func (r Record) Low() bool { return r.Share != 0 }

// Admitted says whether the class exists in the kernel (as far as the
// record knows).
func (r Record) Admitted() bool { return r.ClassID != 0 }

type file struct {
	Version  int      `json:"version"`
	Checksum string   `json:"checksum"`
	Records  []Record `json:"records"`
}

func sum(recs []Record) (string, error) {
	b, err := json.Marshal(recs)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}

// ErrCorrupt is wrapped by Load's errors for a file that exists but
// cannot be trusted (unparsable, another version, a checksum mismatch).
var ErrCorrupt = errors.New("corrupt checkpoint")

// Load reads the records; a missing file is an empty set.
func Load(path string) (map[string]Record, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Record{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint %s: %w", path, err)
	}
	var f file
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("parsing checkpoint %s: %w: %w", path, ErrCorrupt, err)
	}
	if f.Version != Version {
		return nil, fmt.Errorf("checkpoint %s: %w: version %d, this driver reads %d", path, ErrCorrupt, f.Version, Version)
	}
	s, err := sum(f.Records)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if s != f.Checksum {
		return nil, fmt.Errorf("checkpoint %s: %w: checksum mismatch", path, ErrCorrupt)
	}
	out := make(map[string]Record, len(f.Records))
	for _, r := range f.Records {
		out[r.ClaimUID] = r
	}
	return out, nil
}

// Save writes the records atomically.
func Save(path string, recs map[string]Record) error {
	f := file{Version: Version, Records: make([]Record, 0, len(recs))}
	for _, r := range recs {
		f.Records = append(f.Records, r)
	}
	sort.Slice(f.Records, func(i, j int) bool { return f.Records[i].ClaimUID < f.Records[j].ClaimUID })
	var err error
	if f.Checksum, err = sum(f.Records); err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	b, err := json.MarshalIndent(&f, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("checkpoint directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing checkpoint %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing checkpoint %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("closing checkpoint %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing checkpoint %s: %w", path, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("checkpoint directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing checkpoint directory %s: %w", dir, err)
	}
	return nil
}
