// Package sealbox encrypts secrets that linkqr keeps in its database with
// AES-256-GCM, stored as nonce || ciphertext, under a key derived from
// LINKQR_SECRET_KEY for one purpose (config.DeriveKey). This is the scheme
// webhook signing secrets and OAuth signing keys are kept under; the
// associated data names the row, so a value copied onto another row does
// not decrypt.
package sealbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Box seals and opens values under one key.
type Box struct {
	aead cipher.AEAD
}

// New returns a Box for a 32-byte key.
func New(key []byte) (*Box, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("sealbox: key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal returns nonce || ciphertext of plain, bound to ad.
func (b *Box) Seal(ad, plain []byte) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plain)+b.aead.Overhead())
	_, _ = rand.Read(nonce)
	return b.aead.Seal(nonce, nonce, plain, ad)
}

// ErrOpen means a sealed value is truncated, was sealed under another key
// or for other associated data, or was altered.
var ErrOpen = errors.New("sealbox: value does not decrypt")

// Open returns the plaintext of a value Seal returned for the same ad.
func (b *Box) Open(ad, sealed []byte) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[:n], sealed[n:], ad)
	if err != nil {
		return nil, ErrOpen
	}
	return plain, nil
}
