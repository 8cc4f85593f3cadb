// Package db embeds the SQL migrations, so the binary migrates its own
// database and sqlc reads the very same files as its schema.
package db

import "embed"

// Migrations holds the goose migrations under migrations/.
//
//go:embed migrations/*.sql
var Migrations embed.FS
