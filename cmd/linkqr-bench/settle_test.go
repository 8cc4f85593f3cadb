package main

import "testing"

func TestParseCPULine(t *testing.T) {
	t.Parallel()
	idle, total, err := parseCPULine("cpu  100 5 50 800 40 0 5 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil || idle != 840 || total != 1000 {
		t.Fatalf("idle %d, total %d, %v; want 840, 1000", idle, total, err)
	}
	for _, bad := range []string{"", "intr 1 2 3", "cpu 1 2 x 4 5"} {
		if _, _, err := parseCPULine(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
