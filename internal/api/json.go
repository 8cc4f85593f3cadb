package api

import (
	"encoding/json"
	"net/http"
)

// writeJSON encodes v compactly. Encoding our own response types cannot
// fail; the error return keeps handler code uniform.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeJSONBytes(w, status, b)
}

// writeJSONBytes sends a body encoded beforehand (json.Marshal's output).
func writeJSONBytes(w http.ResponseWriter, status int, b []byte) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
	return nil
}
