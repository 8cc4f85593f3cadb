package scan

import "sync"

// backlog holds the hits that could not be written while the database is
// unreachable, oldest first, up to a bound past which the oldest are
// dropped: a long outage costs the oldest scans, never memory without
// limit, and never a redirect. Its storage grows only while hits are held
// and is released when it empties, so a process that never sees an outage
// pays nothing for it.
type backlog struct {
	mu   sync.Mutex
	max  int
	hits []Hit // hits[head:] are held
	head int
}

// push appends hits (copied) and returns how many of the oldest were
// dropped to stay within the bound.
func (b *backlog) push(hits []Hit) (dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits = append(b.hits, hits...)
	return b.trim()
}

// take removes and returns up to n of the oldest hits.
func (b *backlog) take(n int) []Hit {
	b.mu.Lock()
	defer b.mu.Unlock()
	n = min(n, len(b.hits)-b.head)
	out := make([]Hit, n)
	copy(out, b.hits[b.head:])
	clear(b.hits[b.head : b.head+n])
	b.head += n
	b.compact()
	return out
}

// putBack returns hits that take gave out (a write that failed) to the
// front, where they were; with the bound reached meanwhile, the oldest of
// them are dropped, and their count returned.
func (b *backlog) putBack(hits []Hit) (dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.head >= len(hits) {
		b.head -= len(hits)
		copy(b.hits[b.head:], hits)
	} else {
		b.hits = append(append(make([]Hit, 0, len(hits)+len(b.hits)-b.head), hits...), b.hits[b.head:]...)
		b.head = 0
	}
	return b.trim()
}

// len is the number of hits held.
func (b *backlog) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.hits) - b.head
}

// trim drops the oldest beyond the bound. Callers hold mu.
func (b *backlog) trim() int {
	over := len(b.hits) - b.head - b.max
	if over <= 0 {
		return 0
	}
	clear(b.hits[b.head : b.head+over]) // let the dropped strings go
	b.head += over
	b.compact()
	return over
}

// compact frees the dropped front once it is half the storage, and all of
// it when nothing is held. Callers hold mu.
func (b *backlog) compact() {
	switch held := len(b.hits) - b.head; {
	case held == 0:
		b.hits, b.head = nil, 0
	case b.head > held:
		b.hits = append([]Hit(nil), b.hits[b.head:]...)
		b.head = 0
	}
}
