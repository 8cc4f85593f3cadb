// Package secrethash is the one place where secrets that users present
// (passwords, API keys, later OAuth client secrets) are hashed and checked
// with argon2id, so every such check shares one cost setting.
package secrethash

import "github.com/alexedwards/argon2id"

// Params are the argon2id costs: OWASP's recommended m=19 MiB, t=2, p=1,
// which keeps a verification in the tens of milliseconds.
var Params = &argon2id.Params{Memory: 19 * 1024, Iterations: 2, Parallelism: 1, SaltLength: 16, KeyLength: 32}

// Hash returns an argon2id hash of secret in PHC string form.
func Hash(secret string) (string, error) {
	return argon2id.CreateHash(secret, Params)
}

// Compare reports whether secret matches hash; the comparison of the
// derived keys is constant-time.
func Compare(secret, hash string) (bool, error) {
	return argon2id.ComparePasswordAndHash(secret, hash)
}
