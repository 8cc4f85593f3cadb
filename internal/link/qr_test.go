package link

import "testing"

// TestFromQR: a QR code's qr=1 is recognised among other parameters, and
// nothing that merely resembles it is.
func TestFromQR(t *testing.T) {
	for q, want := range map[string]bool{
		"qr=1": true, "utm=x&qr=1": true, "qr=1&utm=x": true, "a=1&qr=1&b=2": true,
		"": false, "qr=10": false, "qr=": false, "qr": false, "xqr=1": false, "qr=1x": false,
		"qr%3D1": false, "QR=1": false, "a=qr=1": false, "&&": false,
	} {
		if got := FromQR(q); got != want {
			t.Errorf("FromQR(%q) = %v, want %v", q, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { FromQR("utm_source=print&utm_medium=poster&qr=1") }); n != 0 {
		t.Errorf("FromQR allocates %.0f times", n)
	}
	l := Link{ShortURL: "https://lq.example/Ab3xY9q"}
	if got := l.QRContent(); got != "https://lq.example/Ab3xY9q?qr=1" || !FromQR(got[len(l.ShortURL)+1:]) {
		t.Errorf("QRContent %q", got)
	}
}
