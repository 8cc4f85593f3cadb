package wait

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB whose Fatalf records the message and stops the
// goroutine, as the real one does, without failing the test that uses it.
type recorder struct {
	testing.TB
	fatal string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own (Fatalf ends it)
// and returns the recorder once f has returned or been stopped.
func run(f func(t testing.TB)) *recorder {
	r := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

func TestUntilFailsWithWhatItLastSaw(t *testing.T) {
	asked := 0
	start := time.Now()
	r := run(func(tb testing.TB) {
		Until(tb, 200*time.Millisecond, func() (bool, string) {
			asked++
			return false, fmt.Sprintf("asked %d times", asked)
		})
		t.Error("Until returned although check never held")
	})
	if r.fatal == "" {
		t.Fatal("Until did not fail")
	}
	if want := fmt.Sprintf("asked %d times", asked); !strings.HasSuffix(r.fatal, want) || asked < 2 {
		t.Errorf("failure %q: want it to end with the last reading %q (asked %d times)", r.fatal, want, asked)
	}
	if !strings.Contains(r.fatal, "200ms") {
		t.Errorf("failure %q does not name the time it waited", r.fatal)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("gave up after %v, before the 200ms it was given", took)
	}
}

func TestUntilReturnsOnceDone(t *testing.T) {
	asked := 0
	r := run(func(tb testing.TB) {
		Until(tb, time.Minute, func() (bool, string) {
			asked++
			return asked == 3, fmt.Sprintf("asked %d times", asked)
		})
	})
	if r.fatal != "" || asked != 3 {
		t.Errorf("failure %q after %d questions: want none after 3", r.fatal, asked)
	}
}

func TestForFailsNamingWhat(t *testing.T) {
	r := run(func(tb testing.TB) {
		For(tb, 100*time.Millisecond, func() bool { return false }, "the moon to turn blue")
		t.Error("For returned although cond never held")
	})
	if !strings.HasSuffix(r.fatal, "the moon to turn blue") {
		t.Errorf("failure %q does not name what did not happen", r.fatal)
	}
}
