package main

import (
	"archive/zip"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdminWorkspaceExportAndDelete: the archive goes to --output and the
// summary to stdout; deleting makes the running server refuse the
// workspace's key at once; errors are one clear line and exit 1.
func TestAdminWorkspaceExportAndDelete(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	s := startServe(t, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	code, boot, errOut := bootstrap(t, env, "correct horse battery staple")
	if code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	ws := boot["workspace_id"]
	code, out, errOut := runCmd(t, env, "admin", "api-key", "create", "--workspace", ws, "--name", "k", "--scopes", "links:read")
	var key map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil {
		t.Fatalf("api-key create: %d %q %s", code, out, errOut)
	}
	apiStatus := func() int {
		req, _ := http.NewRequest("GET", s.url+"/api/v1/links", nil)
		req.Header.Set("Authorization", "Bearer "+key["secret"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := apiStatus(); st != 200 {
		t.Fatalf("key answers %d", st)
	}

	archive := filepath.Join(t.TempDir(), "export.zip")
	code, out, errOut = runCmd(t, env, "admin", "workspace", "export", "--workspace", ws, "--output", archive)
	var sum struct {
		WorkspaceID string           `json:"workspace_id"`
		Files       map[string]int64 `json:"files"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &sum) != nil || sum.WorkspaceID != ws || sum.Files["members.jsonl"] != 1 || sum.Files["api_keys.jsonl"] != 1 {
		t.Fatalf("export: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	z, err := zip.OpenReader(archive)
	if err != nil {
		t.Fatal(err)
	}
	if len(z.File) != len(sum.Files) {
		t.Errorf("archive has %d files, summary %d", len(z.File), len(sum.Files))
	}
	z.Close()

	code, out, errOut = runCmd(t, env, "admin", "workspace", "delete", "--workspace", ws)
	if code != 0 || !strings.Contains(out, `"status":"deleted"`) {
		t.Fatalf("delete: exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	if st := apiStatus(); st != 401 {
		t.Errorf("the deleted workspace's key answers %d", st)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"delete", "--workspace", ws}, "already deleted"},
		{[]string{"export", "--workspace", ws, "--output", archive}, "no workspace " + ws},
		{[]string{"export", "--workspace", "lnk_x", "--output", "-"}, "is not a workspace id"},
		{[]string{"purge"}, `expected "export" or "delete"`},
	} {
		code, out, errOut := runCmd(t, env, append([]string{"admin", "workspace"}, tc.args...)...)
		if code == 0 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q (want %q)", tc.args, code, out, errOut, tc.want)
		}
	}
}
