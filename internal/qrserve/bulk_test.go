package qrserve

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/linkqr/linkqr/internal/qr"
)

// TestBulkLeavesRoomForSingleImages: twenty renders in bulk at once (the
// codes of twenty ZIPs) beside single images asked one after another: no
// single image is ever refused as busy, although the queue has only two
// places, and every bulk render completes.
func TestBulkLeavesRoomForSingleImages(t *testing.T) {
	s := New(Config{Renders: 1, Waiting: 2, MaxWait: time.Minute})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 20*5)
	for i := range 20 {
		wg.Go(func() {
			for j := range 5 {
				if _, err := s.RenderBulk(ctx, uuid.Nil, content+"/bulk"+strconv.Itoa(i)+"-"+strconv.Itoa(j), qr.DefaultOptions()); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range 30 {
		if _, err := s.Render(ctx, uuid.Nil, content+"/single"+strconv.Itoa(i), qr.DefaultOptions()); err != nil {
			t.Fatalf("single image %d beside bulk renders: %v", i, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("bulk render: %v", err)
	}
}

// TestBulkSkipsTheLaneWhenCached: a cached image comes back while the
// lane is full; an uncached one waits until ctx ends.
func TestBulkSkipsTheLaneWhenCached(t *testing.T) {
	s := New(Config{Renders: 1})
	ctx := context.Background()
	if _, err := s.Render(ctx, uuid.Nil, content, qr.DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	s.bulk <- struct{}{} // the lane is taken
	if _, err := s.RenderBulk(ctx, uuid.Nil, content, qr.DefaultOptions()); err != nil {
		t.Fatalf("cached image through a full lane: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.RenderBulk(short, uuid.Nil, content+"/other", qr.DefaultOptions()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("uncached image through a full lane: %v, want the context's end", err)
	}
}
