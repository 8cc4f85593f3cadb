package link

import "crypto/rand"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// generateCode draws GeneratedCodeLen base62 characters from a CSPRNG with
// rejection sampling, so every code is equally likely and unguessable
// (62^7 ≈ 3.5e12).
func generateCode() string {
	out := make([]byte, 0, GeneratedCodeLen)
	var buf [16]byte
	for len(out) < GeneratedCodeLen {
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if b < 248 && len(out) < GeneratedCodeLen {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}
