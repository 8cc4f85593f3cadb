package qr

import (
	"math"
	"testing"
)

func TestContrastRatio(t *testing.T) {
	tests := []struct {
		a, b string
		want float64 // to two decimals
	}{
		{"000000", "FFFFFF", 21},
		{"FFFFFF", "000000", 21},
		{"123456", "123456", 1},
		{"777777", "FFFFFF", 4.48}, // the well-known WCAG AA threshold grey
		{"777777", "888888", 1.26},
		{"1A237E", "FFF8E1", 12.47}, // values checked with an independent Python computation
		{"FF0000", "FFFFFF", 4.00},
	}
	for _, tt := range tests {
		got := ContrastRatio(rgb(tt.a), rgb(tt.b))
		if math.Round(got*100)/100 != tt.want {
			t.Errorf("ContrastRatio(%s, %s) = %.4f, want %.2f", tt.a, tt.b, got, tt.want)
		}
	}
	// Alpha plays no part.
	c := rgb("1A237E")
	c.A = 0
	if ContrastRatio(c, rgb("FFF8E1")) != ContrastRatio(rgb("1A237E"), rgb("FFF8E1")) {
		t.Error("alpha changed the ratio")
	}
}
