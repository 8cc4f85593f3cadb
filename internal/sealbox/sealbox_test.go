package sealbox_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/linkqr/linkqr/internal/sealbox"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	box, err := sealbox.New(key)
	if err != nil {
		t.Fatal(err)
	}
	sealed := box.Seal([]byte("row-1"), []byte("private key"))
	if bytes.Contains(sealed, []byte("private key")) {
		t.Fatal("the plaintext is visible in the sealed value")
	}
	if again := box.Seal([]byte("row-1"), []byte("private key")); bytes.Equal(again, sealed) {
		t.Error("two seals of one value are equal: the nonce is not fresh")
	}
	plain, err := box.Open([]byte("row-1"), sealed)
	if err != nil || string(plain) != "private key" {
		t.Fatalf("open: %q %v", plain, err)
	}

	other, _ := sealbox.New(bytes.Repeat([]byte{8}, 32))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"other row":  func() ([]byte, error) { return box.Open([]byte("row-2"), sealed) },
		"other key":  func() ([]byte, error) { return other.Open([]byte("row-1"), sealed) },
		"altered":    func() ([]byte, error) { return box.Open([]byte("row-1"), flipped) },
		"truncated":  func() ([]byte, error) { return box.Open([]byte("row-1"), sealed[:12]) },
		"empty blob": func() ([]byte, error) { return box.Open([]byte("row-1"), nil) },
	} {
		if _, err := open(); !errors.Is(err, sealbox.ErrOpen) {
			t.Errorf("%s: %v, want ErrOpen", name, err)
		}
	}
	if _, err := sealbox.New(key[:16]); err == nil {
		t.Error("a 16-byte key was accepted")
	}
}
