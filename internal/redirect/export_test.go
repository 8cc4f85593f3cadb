package redirect

import (
	"context"

	"github.com/linkqr/linkqr/internal/domain"
	"github.com/linkqr/linkqr/internal/link"
)

// NewCache and the methods below expose the code cache to the external
// tests (which need testkit, and testkit imports this package).
var NewCache = newCache

func (c *cache) Lookup(ctx context.Context, code link.Code) (*link.Target, error) {
	return c.lookup(ctx, link.Key{Code: code})
}
func (c *cache) Suspend() { c.suspend() }
func (c *cache) Reset()   { c.reset() }
func (c *cache) Len() int { return c.entries.Len() }

// NewSites and the methods below expose the custom-domain table.
var NewSites = newSites

func (s *sites) Lookup(ctx context.Context, host string) (*domain.Site, error) {
	return s.lookup(ctx, host)
}
func (s *sites) Changed(host string) { s.changed(host) }
func (s *sites) Reset()              { s.reset() }
