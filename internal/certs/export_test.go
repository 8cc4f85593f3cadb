package certs

import "context"

// Failed notes a failed order, as the Manager does after a handshake.
func (c *Cache) Failed(ctx context.Context, host, reason string) { c.failed(ctx, host, reason) }
