package qrserve

import (
	"bytes"
	"context"
	"errors"
	"image/color"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/qr"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

const content = "http://127.0.0.1:8080/Ab3xY9q"

// saturated is a Server with one render slot held by the test and one
// queue place, so exactly one request can be waiting for a render.
func saturated(t *testing.T) (*Server, func()) {
	t.Helper()
	s := New(Config{Renders: 1, Waiting: 1, MaxWait: time.Minute})
	release, err := s.Reserve(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, release
}

func (s *Server) waitersOf(etag string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.flights[etag]; ok {
		return f.waiters
	}
	return -1
}

type rendered struct {
	img []byte
	err error
}

func renderAsync(ctx context.Context, s *Server, o qr.Options) <-chan rendered {
	ch := make(chan rendered, 1)
	go func() {
		b, err := s.Render(ctx, uuid.Nil, content, o)
		ch <- rendered{b, err}
	}()
	return ch
}

func outcome(t *testing.T, ch <-chan rendered) rendered {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("render did not return")
		return rendered{}
	}
}

// TestSingleFlight: identical concurrent requests share one queue place and
// one render. With a one-place queue, separate renders would be refused.
func TestSingleFlight(t *testing.T) {
	s, release := saturated(t)
	o := qr.DefaultOptions()
	etag := qr.ETag(content, o)
	var chans []<-chan rendered
	for range 5 {
		chans = append(chans, renderAsync(context.Background(), s, o))
	}
	// The first request registers the flight before it queues for a slot,
	// so the four may join it before it is queued: wait for both.
	wait.For(t, 10*time.Second, func() bool { return s.waitersOf(etag) == 4 && s.limit.waiting() > 0 },
		"four requests to join the first, and the first to queue")
	if s.limit.waiting() != 1 {
		t.Fatalf("%d requests queued for a slot, want 1", s.limit.waiting())
	}
	release()
	first := outcome(t, chans[0])
	if first.err != nil {
		t.Fatal(first.err)
	}
	for _, ch := range chans[1:] {
		r := outcome(t, ch)
		if r.err != nil || len(r.img) == 0 || &r.img[0] != &first.img[0] {
			t.Fatalf("joined request: %v, %d bytes, shared %v", r.err, len(r.img), r.err == nil && &r.img[0] == &first.img[0])
		}
	}
	if n, _ := s.cache.size(); n != 1 {
		t.Fatalf("%d cached images, want 1", n)
	}
}

// TestSingleFlightLeaderLeaves: when the request that queued the render
// gives up, a request waiting on it renders for itself instead of failing.
func TestSingleFlightLeaderLeaves(t *testing.T) {
	s, release := saturated(t)
	defer func() { release() }()
	o := qr.DefaultOptions()
	etag := qr.ETag(content, o)
	ctx, cancel := context.WithCancel(context.Background())
	leader := renderAsync(ctx, s, o)
	wait.For(t, 10*time.Second, func() bool { return s.limit.waiting() == 1 }, "the leader to queue")
	follower := renderAsync(context.Background(), s, o)
	wait.For(t, 10*time.Second, func() bool { return s.waitersOf(etag) == 1 }, "the follower to join")
	cancel()
	if r := outcome(t, leader); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("leader: %v", r.err)
	}
	wait.For(t, 10*time.Second, func() bool { return s.waitersOf(etag) == 0 && s.limit.waiting() == 1 }, "the follower to queue in its own right")
	release()
	release = func() {}
	if r := outcome(t, follower); r.err != nil || !bytes.HasPrefix(r.img, []byte("\x89PNG")) {
		t.Fatalf("follower: %v", r.err)
	}
}

// TestCacheHitNeedsNoSlot: a repeat is answered while every slot is taken;
// a new image is not, and its error says when to retry.
func TestCacheHitNeedsNoSlot(t *testing.T) {
	s := New(Config{Renders: 1, Waiting: 1, MaxWait: 10 * time.Millisecond})
	o := qr.DefaultOptions()
	want, err := s.Render(context.Background(), uuid.Nil, content, o)
	if err != nil {
		t.Fatal(err)
	}
	release, err := s.Reserve(context.Background(), uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	got, err := s.Render(context.Background(), uuid.Nil, content, o)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("cached render while saturated: %v", err)
	}
	o.FG = color.RGBA{0x10, 0, 0, 0xff}
	var busy *BusyError
	if _, err := s.Render(context.Background(), uuid.Nil, content, o); !errors.As(err, &busy) || busy.Seconds() < 1 {
		t.Fatalf("new image while saturated: %v, want *BusyError", err)
	}
}

func TestNewDefaults(t *testing.T) {
	s := New(Config{})
	if s.limit.slots < 1 || s.limit.queue < 8 || s.limit.maxWait != DefaultMaxWait || s.cache.maxBytes != DefaultCacheBytes {
		t.Fatalf("defaults: %d slots, %d queue, wait %s, cache %d", s.limit.slots, s.limit.queue, s.limit.maxWait, s.cache.maxBytes)
	}
}
