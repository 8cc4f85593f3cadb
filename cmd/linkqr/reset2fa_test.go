package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestAdminUserReset2FA: the command finds the account by address (any
// case) and prints what it removed; an unknown address is an error. What
// the reset removes is proven in web (TestTwoFactorOperatorReset).
func TestAdminUserReset2FA(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	env := baseEnv(dataDir, freeAddr(t))
	if code, _, errOut := bootstrap(t, env, "correct horse battery staple"); code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	code, out, errOut := runCmd(t, env, "admin", "user", "reset-2fa", "--email", "owner@example.com")
	var res struct {
		UserID  string   `json:"user_id"`
		Removed []string `json:"removed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || !strings.HasPrefix(res.UserID, "usr_") || res.Removed == nil || len(res.Removed) != 0 {
		t.Fatalf("reset-2fa: exit %d, %q, %s", code, out, errOut)
	}
	code, _, errOut = runCmd(t, env, "admin", "user", "reset-2fa", "--email", "nobody@example.com")
	if code != 1 || !strings.Contains(errOut, "no account with the address nobody@example.com") {
		t.Errorf("unknown address: exit %d, %q", code, errOut)
	}
}
