// Package qr renders a link's short URL as a QR code in PNG or SVG.
//
// It owns everything the API needs for GET /api/v1/links/{id}/qr except the
// HTTP plumbing: parsing and validating the query parameters (so every
// off-spec value becomes a validate.FieldError with a /query/<name> pointer),
// refusing colour pairs that phones cannot scan, a cheap ETag so the handler
// can answer 304 before doing any work, and deterministic rendering so the
// same request always yields the same bytes (and the same ETag stays true).
//
// The symbol itself (version choice, error correction, masking) comes from
// github.com/skip2/go-qrcode; this package only draws its module matrix, so
// it controls scaling, quiet zone, colours and output size exactly.
package qr
