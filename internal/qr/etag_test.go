package qr

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestRenderDeterministic: same input, same bytes — the premise of a strong
// ETag — also when rendered concurrently (the encoder buffer pool is shared).
func TestRenderDeterministic(t *testing.T) {
	for _, f := range []Format{FormatPNG, FormatSVG} {
		o := DefaultOptions()
		o.Format = f
		want := mustRender(t, shortURL, o)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				b, _, err := Render(shortURL, o)
				if err != nil || !bytes.Equal(b, want) {
					t.Errorf("%s: concurrent render differs (err %v)", f, err)
				}
			}()
		}
		wg.Wait()
		if !bytes.Equal(mustRender(t, shortURL, o), want) {
			t.Errorf("%s: second render differs", f)
		}
	}
}

var reStrongETag = regexp.MustCompile(`^"[\x21\x23-\x7e]+"$`)

// TestETag: a strong, quoted tag; equal for equal inputs; different when the
// content or any single option changes.
func TestETag(t *testing.T) {
	base := DefaultOptions()
	tag := ETag(shortURL, base)
	if !reStrongETag.MatchString(tag) {
		t.Fatalf("ETag %q is not a strong entity tag", tag)
	}
	if again := ETag(shortURL, DefaultOptions()); again != tag {
		t.Fatalf("ETag not stable: %q vs %q", tag, again)
	}
	variants := map[string]func(*Options){
		"format": func(o *Options) { o.Format = FormatSVG },
		"size":   func(o *Options) { o.Size = 513 },
		"margin": func(o *Options) { o.Margin = 5 },
		"ecc":    func(o *Options) { o.ECC = ECCHigh },
		"fg.r":   func(o *Options) { o.FG.R = 1 },
		"fg.g":   func(o *Options) { o.FG.G = 1 },
		"fg.b":   func(o *Options) { o.FG.B = 1 },
		"bg.r":   func(o *Options) { o.BG.R = 0xfe },
		"bg.g":   func(o *Options) { o.BG.G = 0xfe },
		"bg.b":   func(o *Options) { o.BG.B = 0xfe },
	}
	seen := map[string]string{tag: "base"}
	for name, mutate := range variants {
		o := base
		mutate(&o)
		got := ETag(shortURL, o)
		if prev, dup := seen[got]; dup {
			t.Errorf("%s: ETag equals that of %s", name, prev)
		}
		seen[got] = name
	}
	for _, c := range []string{shortURL + "x", "http://127.0.0.1:8080/Ab3xY9Q", ""} {
		if ETag(c, base) == tag {
			t.Errorf("content %q: same ETag", c)
		}
	}
}

// TestRenderUnencodable: content the encoder cannot take fails cleanly.
func TestRenderUnencodable(t *testing.T) {
	for _, c := range []string{"", strings.Repeat("x", 3000)} {
		if _, _, err := Render(c, DefaultOptions()); err == nil {
			t.Errorf("Render of %d bytes succeeded", len(c))
		}
	}
}
