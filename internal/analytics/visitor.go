package analytics

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"hash"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// VisitorHashLen is the length of a visitor hash in bytes.
const VisitorHashLen = 16

// VisitorHasher turns (client address, User-Agent, day) into an opaque
// visitor hash, which is all that is stored to count unique visitors: the
// raw IP address is never stored anywhere.
//
// The hash is HMAC-SHA256 under a key that changes every UTC day, truncated
// to 16 bytes. Each day's key is HKDF-SHA256(master, info
// "linkqr/visitor-hash/2026-11-21"). Privacy properties:
//   - Without the master key a hash cannot be reversed, not even by trying
//     all 2³² IPv4 addresses, because every guess needs the day key.
//   - Hashes of different days are unlinkable: the same visitor gets
//     unrelated values on Monday and Tuesday, so the data can count daily
//     uniques but cannot follow a person across days.
//   - Day keys are derived, never stored; a leaked day key exposes only that
//     day, and only to someone who also holds the addresses to try.
//
// Within one day the hash is the same for every link and workspace, which
// is what "unique visitors" of a link needs; it is never shown to clients.
type VisitorHasher struct {
	master []byte
	today  atomic.Pointer[dayKey]
}

// dayKey is one UTC day's HMAC key, with a pool of keyed HMAC states so the
// hot path neither derives a key nor allocates.
type dayKey struct {
	day  int64 // days since the Unix epoch, UTC
	key  []byte
	macs sync.Pool // of *macState
}

// macState is a keyed HMAC with scratch space for its input and output.
type macState struct {
	mac hash.Hash
	buf [64]byte
}

// MinMasterKeyLen is the shortest master key accepted.
const MinMasterKeyLen = 32

// NewVisitorHasher makes a hasher from a master key of at least 32 bytes
// (normally config.DeriveKey(secret, "visitor-hash")). The key is copied.
func NewVisitorHasher(master []byte) (*VisitorHasher, error) {
	if len(master) < MinMasterKeyLen {
		return nil, errors.New("analytics: visitor hash master key must be at least 32 bytes")
	}
	return &VisitorHasher{master: append([]byte(nil), master...)}, nil
}

// Hash returns the visitor hash of ip and userAgent on t's UTC day. IPv4 and
// IPv4-mapped IPv6 forms of an address hash alike, the zone is ignored, and
// only the first MaxUserAgentLen bytes of userAgent count. Safe for
// concurrent use; lock-free except for the first call of each new day.
func (h *VisitorHasher) Hash(ip netip.Addr, userAgent string, t time.Time) [VisitorHashLen]byte {
	dk := h.key(dayOf(t))
	st := dk.macs.Get().(*macState)
	defer dk.macs.Put(st)
	st.mac.Reset()

	// Input: family byte, 16 address bytes, then the User-Agent. The fixed
	// length prefix makes the encoding unambiguous.
	ip = ip.Unmap().WithZone("")
	var family byte // tells the invalid (zero) Addr from ::
	switch {
	case ip.Is4():
		family = 4
	case ip.Is6():
		family = 6
	}
	a16 := ip.As16()
	st.buf[0] = family
	copy(st.buf[1:], a16[:])
	st.mac.Write(st.buf[:17])
	if len(userAgent) > MaxUserAgentLen {
		userAgent = userAgent[:MaxUserAgentLen]
	}
	for len(userAgent) > 0 {
		n := copy(st.buf[:], userAgent)
		st.mac.Write(st.buf[:n])
		userAgent = userAgent[n:]
	}
	var out [VisitorHashLen]byte
	copy(out[:], st.mac.Sum(st.buf[:0]))
	return out
}

// key returns the day's key, deriving and caching it when the day changes.
// Concurrent first callers of a new day may derive it twice; both results
// are equal, so that race is harmless. Keys of older days (a scan buffered
// across midnight) are derived without replacing the current one.
func (h *VisitorHasher) key(day int64) *dayKey {
	if dk := h.today.Load(); dk != nil && dk.day == day {
		return dk
	}
	dk := h.derive(day)
	if cur := h.today.Load(); cur == nil || cur.day < day {
		h.today.CompareAndSwap(cur, dk)
	}
	return dk
}

func (h *VisitorHasher) derive(day int64) *dayKey {
	date := time.Unix(day*86400, 0).UTC().Format(time.DateOnly)
	key, err := hkdf.Key(sha256.New, h.master, nil, "linkqr/visitor-hash/"+date, 32)
	if err != nil {
		panic(err) // only for output lengths beyond 255×32 bytes
	}
	dk := &dayKey{day: day, key: key}
	dk.macs.New = func() any { return &macState{mac: hmac.New(sha256.New, dk.key)} }
	return dk
}

// dayOf numbers t's UTC day.
func dayOf(t time.Time) int64 {
	s := t.Unix()
	d := s / 86400
	if s%86400 < 0 {
		d-- // floor for instants before 1970
	}
	return d
}
