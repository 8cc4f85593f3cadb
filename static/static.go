// Package static embeds the UI's stylesheets, scripts and the vendored API
// docs renderer, so the binary serves them with no CDN and no files on disk.
package static

import "embed"

// FS holds css/, js/ and vendor/.
//
//go:embed css js vendor
var FS embed.FS
