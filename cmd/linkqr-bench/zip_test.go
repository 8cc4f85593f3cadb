package main

import (
	"archive/zip"
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestZipCounter counts the files of an archive fed in chunks of every
// size, whose stored images contain the header signatures themselves.
func TestZipCounter(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	const n = 137
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: "code" + strconv.Itoa(i) + ".png", Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 200+rnd.IntN(3000))
		for j := range data {
			data[j] = byte(rnd.Uint32())
		}
		// Image bytes that spell a signature must not count.
		copy(data[10:], "PK\x03\x04")
		copy(data[100:], "PK\x01\x02")
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{1, 3, 64, 301, 4096, buf.Len()} {
		c := &zipCounter{}
		b := buf.Bytes()
		for len(b) > 0 {
			k := min(chunk, len(b))
			c.Write(b[:k])
			b = b[k:]
		}
		c.flush()
		if c.files != n || c.central != n {
			t.Errorf("chunks of %d: %d files, %d directory entries; want %d", chunk, c.files, c.central, n)
		}
	}
}
