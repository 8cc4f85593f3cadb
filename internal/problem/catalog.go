// Package problem writes RFC 9457 problem details and holds the catalogue of
// problem types that linkqr documents at /problems/<slug>. Keeping every type
// in one table means the API, the docs page and the OpenAPI document can never
// disagree about a slug, its status or its title.
package problem

import "net/http"

// Type is one documented kind of problem.
type Type struct {
	Slug        string
	Status      int
	Title       string
	Description string // one paragraph for humans, shown on /problems/<slug>
}

// The catalogue, served at /problems (docs/api.md#responses-and-headers; the
// Errors table of internal/api/openapi.yaml).
var (
	InvalidRequest       = Type{"invalid-request", http.StatusBadRequest, "Invalid request", "The request could not be read: malformed JSON, data after the JSON value, a cursor that does not parse, or a malformed Idempotency-Key header. Fix the request before retrying."}
	Unauthorized         = Type{"unauthorized", http.StatusUnauthorized, "Unauthorized", "The request carried no credentials, or credentials that are malformed, unknown, revoked or expired. Send Authorization: Bearer <API key or access token>."}
	InsufficientScope    = Type{"insufficient-scope", http.StatusForbidden, "Insufficient scope", "The credential is valid but lacks the scope this operation needs; required_scope names it. Mint a key with that scope."}
	Forbidden            = Type{"forbidden", http.StatusForbidden, "Forbidden", "The credential holds the scope, but the role its owner has in the workspace now does not allow the operation (webhooks, domain changes, members and the audit log are for admins); the detail names the role needed. Credentials act as the user who made them, at that user's current role."}
	IPNotAllowed         = Type{"ip-not-allowed", http.StatusForbidden, "IP address not allowed", "The client's IP address is outside the credential's IP allowlist."}
	NotFound             = Type{"not-found", http.StatusNotFound, "Not found", "No such route, or no such object in your workspace. Objects of other workspaces are reported as not found."}
	MethodNotAllowed     = Type{"method-not-allowed", http.StatusMethodNotAllowed, "Method not allowed", "The route exists but does not accept this HTTP method; the Allow header lists those it does."}
	Conflict             = Type{"conflict", http.StatusConflict, "Conflict", "The request conflicts with the current state, for example a custom link code that is taken or was used by a deleted link, or a retry of a delivery to a disabled webhook."}
	IdempotencyKeyInUse  = Type{"idempotency-key-in-use", http.StatusConflict, "Idempotency key in use", "A request with the same Idempotency-Key is still being processed. Retry after it finishes to receive its stored response."}
	PayloadTooLarge      = Type{"payload-too-large", http.StatusRequestEntityTooLarge, "Payload too large", "The request body is larger than the endpoint accepts: 64 KiB, or 4 MiB for a bulk creation of links."}
	UnsupportedMediaType = Type{"unsupported-media-type", http.StatusUnsupportedMediaType, "Unsupported media type", "Request bodies must be JSON, sent with Content-Type: application/json."}
	ValidationFailed     = Type{"validation-failed", http.StatusUnprocessableEntity, "Validation failed", "One or more fields or query parameters are invalid; errors[] names each with a JSON pointer and a reason."}
	DomainNotVerified    = Type{"domain-not-verified", http.StatusUnprocessableEntity, "Domain not verified", "The DNS TXT record that proves control of the domain was not found: detail says what the lookup saw instead. Create the record named in the domain's verification object with its value, wait for DNS to publish it, and verify again."}
	QRUnreadable         = Type{"qr-unreadable", http.StatusUnprocessableEntity, "QR code unreadable", "The QR design was rendered at 512 px and a QR decoder could not read the link's text back from it, so it was not saved: a printed code in this design would not scan. Raise the contrast, the margin or the error correction, choose square modules, or leave the logo or the frame out, and try again."}
	IdempotencyKeyReused = Type{"idempotency-key-reused", http.StatusUnprocessableEntity, "Idempotency key reused", "The Idempotency-Key was already used for a different request (method, path, query or body). Use a new key for a new request."}
	RateLimited          = Type{"rate-limited", http.StatusTooManyRequests, "Rate limited", "The credential's rate limit is exhausted, or the workspace already has its share of expensive work of this kind running at once (image decodes, QR archives, exports, analytics reports, long polls, CSV uploads); Retry-After says how many seconds to wait."}
	Internal             = Type{"internal", http.StatusInternalServerError, "Internal server error", "Something went wrong on our side. Nothing was changed; the request may be retried. Quote request_id when contacting support."}
	Unavailable          = Type{"unavailable", http.StatusServiceUnavailable, "Service unavailable", "The service cannot serve the request right now (the database is unreachable, the server is shutting down, or it is at capacity for expensive work such as credential checks, image decodes, QR renders, archives, exports or analytics reports; then Retry-After says when to retry). Retry later."}
)

// Catalog lists every problem type in the order of the Errors table of
// internal/api/openapi.yaml.
var Catalog = []Type{
	InvalidRequest, Unauthorized, InsufficientScope, Forbidden, IPNotAllowed, NotFound,
	MethodNotAllowed, Conflict, IdempotencyKeyInUse, PayloadTooLarge,
	UnsupportedMediaType, ValidationFailed, DomainNotVerified, QRUnreadable, IdempotencyKeyReused, RateLimited,
	Internal, Unavailable,
}

// Lookup finds a type by its slug.
func Lookup(slug string) (Type, bool) {
	for _, t := range Catalog {
		if t.Slug == slug {
			return t, true
		}
	}
	return Type{}, false
}
