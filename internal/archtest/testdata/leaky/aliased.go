package leaky

import q "github.com/linkqr/linkqr/internal/link/internal/linkdb"

// Store leaks through an import renamed q.
type Store interface {
	Conn() q.DBTX
}
