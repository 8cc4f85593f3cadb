// Package qrserve answers HTTP requests for QR code images, for the API
// (GET /api/v1/links/{id}/qr) and the UI's qr.png/qr.svg routes alike.
//
// Rendering is the one CPU- and memory-heavy thing a read-only credential
// can ask for (a 4096 px PNG takes tens of milliseconds of a core), so it is
// owned here by one Server per process that:
//
//   - answers If-None-Match with 304 from the ETag alone, before any work;
//   - keeps rendered images in a small LRU keyed by ETag and bounded by
//     bytes, so repeats cost nothing;
//   - merges concurrent identical renders into one (single flight);
//   - runs at most Config.Renders renders at once, lets a few more requests
//     wait up to Config.MaxWait, and refuses the rest with a *BusyError,
//     which the edges turn into 503 with Retry-After.
//
// It knows nothing of problem documents or HTML: errors are returned
// before anything is written, and the API and UI map them to their own
// answers.
package qrserve
