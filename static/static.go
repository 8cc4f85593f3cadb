// Package static embeds the UI's stylesheets and scripts, so the binary
// serves them with no CDN and no files on disk.
package static

import "embed"

// FS holds css/ and js/.
//
//go:embed css js
var FS embed.FS
