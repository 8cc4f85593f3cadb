package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

const sampleStatus = `Name:	linkqr
Umask:	0022
State:	S (sleeping)
VmPeak:	 1858668 kB
VmSize:	 1858668 kB
VmLck:	       0 kB
VmHWM:	   91234 kB
VmRSS:	   80012 kB
RssAnon:	   60000 kB
Threads:	9
`

func TestParseStatus(t *testing.T) {
	t.Parallel()
	m, err := parseStatus(strings.NewReader(sampleStatus))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 80012*1024 || m.Peak != 91234*1024 {
		t.Fatalf("got %+v", m)
	}
	for name, bad := range map[string]string{
		"kernel thread": "Name:\tkthreadd\nState:\tS\n",
		"bad number":    "VmHWM:\t x kB\nVmRSS:\t 1 kB\n",
		"bad unit":      "VmHWM:\t 1 MB\nVmRSS:\t 1 kB\n",
	} {
		if _, err := parseStatus(strings.NewReader(bad)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestReadStatusSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc on this system")
	}
	m, err := readStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS < 1<<20 || m.Peak < m.RSS {
		t.Fatalf("implausible %+v", m)
	}
	s := &rssSampler{pid: os.Getpid()}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	s.run(ctx, 5*time.Millisecond)
	if p := s.Peak(); p < m.RSS/2 {
		t.Fatalf("sampler peak %d, status RSS %d", p, m.RSS)
	}
}
