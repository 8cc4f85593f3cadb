package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// memStatus is the memory part of /proc/<pid>/status, in bytes.
type memStatus struct {
	RSS  uint64 // VmRSS: resident now
	Peak uint64 // VmHWM: the kernel's high-water mark of RSS since start
}

// parseStatus reads VmRSS and VmHWM from a /proc/<pid>/status text.
func parseStatus(r io.Reader) (memStatus, error) {
	var m memStatus
	var sawRSS, sawHWM bool
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("unexpected %s line %q", key, sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.RSS, sawRSS = kb*1024, true
		} else {
			m.Peak, sawHWM = kb*1024, true
		}
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if !sawRSS || !sawHWM {
		return m, fmt.Errorf("no VmRSS/VmHWM (a kernel thread, or an exited process?)")
	}
	return m, nil
}

func readStatus(pid int) (memStatus, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memStatus{}, err
	}
	defer f.Close()
	return parseStatus(f)
}

// rssSampler polls a process's RSS and keeps the peak, as a second opinion
// beside VmHWM (and the only one where VmHWM is missing).
type rssSampler struct {
	pid  int
	peak atomic.Uint64
}

func (s *rssSampler) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (s *rssSampler) sample() {
	m, err := readStatus(s.pid)
	if err != nil {
		return
	}
	for {
		cur := s.peak.Load()
		p := max(m.RSS, m.Peak)
		if p <= cur || s.peak.CompareAndSwap(cur, p) {
			return
		}
	}
}

// Peak is the highest RSS seen, in bytes.
func (s *rssSampler) Peak() uint64 { s.sample(); return s.peak.Load() }
