package account

import (
	"sync/atomic"
	"time"
)

// SetClock replaces the clock the sign-in throttle reads, so tests can let
// a throttle window pass without sleeping. nil restores the real clock.
func (s *Service) SetClock(now func() time.Time) {
	if now == nil {
		s.clock.Store(nil)
		return
	}
	s.clock.Store(&now)
}

func (s *Service) now() time.Time {
	if f := s.clock.Load(); f != nil {
		return (*f)()
	}
	return time.Now()
}

// clock holds an optional replacement of time.Now.
type clock = atomic.Pointer[func() time.Time]
