package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

func TestChildLifecycle(t *testing.T) {
	t.Parallel()
	c, err := startChild("sh", "ready", "/bin/sh", []string{"-c", "echo starting; echo ready >&2; exec sleep 60"}, os.Environ())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.waitReady(context.Background(), 10*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.stop(5 * time.Second); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if out := c.Output(); !strings.Contains(out, "starting") || !strings.Contains(out, "ready") {
		t.Fatalf("output %q", out)
	}
	if err := c.stop(time.Second); err != nil {
		t.Fatalf("second stop: %v", err)
	}
}

func TestChildExitsBeforeReady(t *testing.T) {
	t.Parallel()
	c, err := startChild("false", "ready", "/bin/sh", []string{"-c", "echo boom >&2; exit 3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = c.waitReady(context.Background(), 10*time.Second, nil)
	if err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
	if err := c.stop(time.Second); err == nil {
		t.Fatal("exit status 3 not reported")
	}
}

func TestChildKilledAfterGrace(t *testing.T) {
	t.Parallel()
	c, err := startChild("stubborn", "up", "/bin/sh", []string{"-c", "trap '' TERM; echo up; while :; do sleep 0.05; done"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.waitReady(context.Background(), 10*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.stop(200 * time.Millisecond); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("err = %v", err)
	}
}

func TestChildProbe(t *testing.T) {
	t.Parallel()
	c, err := startChild("quiet", "", "/bin/sh", []string{"-c", "exec sleep 60"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.stop(time.Second)
	n := 0
	if err := c.waitReady(context.Background(), 10*time.Second, func(context.Context) bool { n++; return n == 3 }); err != nil {
		t.Fatal(err)
	}
}
