package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
	"github.com/linkqr/linkqr/internal/testkit/wait"
)

// These tests run the real binary as an operator would: embedded PostgreSQL,
// signals, exit codes and the JSON of the operator commands. They are not
// in the -short lane: the binary is a -race build, and most of them start
// embedded clusters of their own (startServeBinary, runCmdIn, commandDB
// and the tests that build the release binary skip under -short).

var binary string

// asProcess is what strict.SkipShort names when -short skips a test here.
const asProcess = "the linkqr binary run as a process"

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every test that needs the binary skips
	}
	dir, err := os.MkdirTemp("", "linkqr-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "linkqr")
	out, err := exec.Command("go", "build", "-race", "-o", binary, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build linkqr: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

func requirePostgres(t *testing.T) {
	t.Helper()
	if _, err := pgembed.FindBinDir(); err != nil {
		testkit.SkipUnlessStrict(t, err.Error())
	}
}

// server is a running `linkqr serve` process.
type server struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan struct{}
}

func (s *server) log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stderr.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// baseEnv returns a new slice each time, so callers may append freely.
func baseEnv(dataDir, addr string) []string {
	return append(slices.Clone(os.Environ()), "LINKQR_DATA_DIR="+dataDir, "LINKQR_ADDR="+addr, "LINKQR_METRICS_ADDR=127.0.0.1:0", "LINKQR_LOG_FORMAT=json", "LINKQR_DATABASE_URL=")
}

// startServe starts `linkqr serve` and waits for its "listening" line.
func startServe(t *testing.T, dataDir string) *server {
	t.Helper()
	return startServeBinary(t, binary, dataDir)
}

// startServeBinary is startServe with another build of the binary, and
// extra KEY=value environment entries.
func startServeBinary(t *testing.T, bin, dataDir string, env ...string) *server {
	t.Helper()
	strict.SkipShort(t, asProcess)
	addr := freeAddr(t)
	s := &server{url: "http://" + addr, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = append(baseEnv(dataDir, addr), env...)
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listening := make(chan struct{})
	go func() {
		defer close(s.done)
		sc := bufio.NewScanner(pipe)
		once := sync.Once{}
		for sc.Scan() {
			s.mu.Lock()
			s.stderr.WriteString(sc.Text() + "\n")
			s.mu.Unlock()
			if strings.Contains(sc.Text(), `"msg":"listening"`) && strings.Contains(sc.Text(), addr) {
				once.Do(func() { close(listening) })
			}
		}
	}()
	t.Cleanup(func() {
		if s.cmd.ProcessState == nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			_ = s.cmd.Wait()
		}
	})
	select {
	case <-listening:
	case <-s.done:
		t.Fatalf("serve exited before listening:\n%s", s.log())
	case <-time.After(90 * time.Second):
		t.Fatalf("serve did not print a listening line within 90s:\n%s", s.log())
	}
	return s
}

// stop sends SIGTERM and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { <-s.done; exited <- s.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not exit within 60s of SIGTERM:\n%s", s.log())
	}
	return s.cmd.ProcessState.ExitCode()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// runCmd runs the binary to completion and returns exit code, stdout, stderr.
func runCmd(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	return runCmdIn(t, "", env, args...)
}

// runCmdIn is runCmd in the working directory dir ("" for the test's own).
func runCmdIn(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	strict.SkipShort(t, asProcess)
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func bootstrap(t *testing.T, env []string, password string) (int, map[string]string, string) {
	t.Helper()
	code, out, errOut := runCmd(t, env, "admin", "bootstrap", "--email", "Owner@Example.com", "--password", password, "--workspace", "Acme")
	var res map[string]string
	if code == 0 {
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("bootstrap output %q is not JSON: %v", out, err)
		}
	}
	return code, res, errOut
}

func postmasterPID(t *testing.T, dataDir string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "pg", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	return pid
}

func alive(pid int) bool { return pid > 0 && syscall.Kill(pid, 0) == nil }

// waitFor is wait.For with the arguments in this package's order.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	wait.For(t, timeout, cond, what)
}

func TestServeLifecycle(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	const password = "correct horse battery staple"

	s := startServe(t, dataDir)
	if code, body := get(t, s.url+"/healthz"); code != 200 || strings.TrimSpace(body) != `{"status":"ok"}` {
		t.Fatalf("healthz: %d %s", code, body)
	}
	if code, _ := get(t, s.url+"/readyz"); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "secret.key")); err != nil {
		t.Errorf("secret key was not generated into the data dir: %v", err)
	}

	// A second server on the same data directory refuses to start.
	code, _, errOut := runCmd(t, baseEnv(dataDir, freeAddr(t)), "serve")
	if code != 1 || !strings.Contains(errOut, "in use") {
		t.Errorf("second serve: exit %d, stderr:\n%s", code, errOut)
	}

	// Operator commands attach to the running cluster; bootstrap is idempotent.
	env := baseEnv(dataDir, freeAddr(t))
	code, first, errOut := bootstrap(t, env, password)
	if code != 0 || !strings.HasPrefix(first["user_id"], "usr_") || !strings.HasPrefix(first["workspace_id"], "ws_") {
		t.Fatalf("bootstrap: exit %d, %v, %s", code, first, errOut)
	}
	if code, again, _ := bootstrap(t, env, password); code != 0 || again["user_id"] != first["user_id"] || again["workspace_id"] != first["workspace_id"] {
		t.Errorf("bootstrap twice: exit %d, %v != %v", code, again, first)
	}
	// stderr: which database, then the error, one line each.
	if code, _, errOut := bootstrap(t, env, "a different password"); code != 1 || len(lines(errOut)) != 2 ||
		lines(errOut)[0] != "linkqr: using data directory "+dataDir ||
		!strings.HasPrefix(lines(errOut)[1], "linkqr admin bootstrap: ") || !strings.Contains(lines(errOut)[1], "password does not match") {
		t.Errorf("bootstrap with a wrong password: exit %d, stderr %q", code, errOut)
	}
	if code, _ := get(t, s.url+"/readyz"); code != 200 {
		t.Errorf("server lost its database after operator commands: readyz %d", code)
	}

	// SIGTERM: exit 0 and the embedded cluster is stopped.
	pid := postmasterPID(t, dataDir)
	if !alive(pid) {
		t.Fatalf("no live postmaster (pid %d) while serving", pid)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exit code %d after SIGTERM:\n%s", code, s.log())
	}
	if alive(pid) {
		t.Errorf("postmaster %d still running after the server stopped", pid)
	}

	// Restart: the data is still there.
	s = startServe(t, dataDir)
	if code, again, errOut := bootstrap(t, env, password); code != 0 || again["workspace_id"] != first["workspace_id"] {
		t.Errorf("after restart: exit %d, %v, %s", code, again, errOut)
	}

	// The database going away makes the server unready, not dead.
	pid = postmasterPID(t, dataDir)
	if err := syscall.Kill(pid, syscall.SIGINT); err != nil { // fast shutdown
		t.Fatal(err)
	}
	waitFor(t, "readyz to report 503", 30*time.Second, func() bool { c, _ := get(t, s.url+"/readyz"); return c == 503 })
	if code, _ := get(t, s.url+"/healthz"); code != 200 {
		t.Errorf("healthz %d while the database is down", code)
	}
	s.stop(t)
}

func TestMigrateStartsAndStopsItsOwnCluster(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	code, out, errOut := runCmd(t, baseEnv(dataDir, freeAddr(t)), "migrate")
	if code != 0 || strings.TrimSpace(out) != `{"status":"migrated"}` {
		t.Fatalf("migrate: exit %d, %q, %s", code, out, errOut)
	}
	// LINKQR_DATA_DIR is set, so a new cluster needs no --init.
	if want := "linkqr: using data directory " + dataDir + " (creating a new cluster in pg/)\n"; errOut != want {
		t.Errorf("migrate stderr %q, want %q", errOut, want)
	}
	if pid := postmasterPID(t, dataDir); alive(pid) {
		t.Errorf("migrate left the cluster running (pid %d)", pid)
	}
}

func TestOperatorErrors(t *testing.T) {
	t.Parallel()
	dir, addr := t.TempDir(), freeAddr(t)
	env := baseEnv(dir, addr)
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"bad config", append(baseEnv(dir, addr), "LINKQR_ADDR=nonsense"), []string{"serve"}, 1, "LINKQR_ADDR"},
		{"bad base url", append(baseEnv(dir, addr), "LINKQR_BASE_URL=ftp://x"), []string{"migrate"}, 1, "LINKQR_BASE_URL"},
		{"unknown command", env, []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"unknown command lists the commands", env, []string{"frobnicate"}, 2, "admin api-key create --workspace"},
		{"unknown command with broken config", append(baseEnv(dir, addr), "LINKQR_ADDR=nonsense"), []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"missing flags", env, []string{"admin", "bootstrap", "--email", "a@example.com"}, 2, "missing required flag(s): --password, --workspace"},
		{"unknown admin command", env, []string{"admin", "nope"}, 2, `unknown command "nope"`},
		{"unknown admin command lists the commands", env, []string{"admin", "nope"}, 2, "admin bootstrap --email"},
		{"no admin command", env, []string{"admin"}, 2, "admin api-key create --workspace"},
		{"migrate argument", env, []string{"migrate", "now"}, 2, `unexpected argument "now"`},
		{"unknown migrate flag", env, []string{"migrate", "--force"}, 2, "flag provided but not defined: -force"},
		{"unknown role", env, []string{"serve", "--role", "api,edge"}, 2, `unknown role "edge": the roles are all, redirect, api, worker`},
		{"unknown role in the environment", append(baseEnv(dir, addr), "LINKQR_ROLES=cron"), []string{"serve"}, 1, `LINKQR_ROLES="cron" is invalid: unknown role "cron"`},
	}
	for _, tc := range cases {
		code, out, errOut := runCmd(t, tc.env, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q (want %q)", tc.name, code, tc.code, out, errOut, tc.want)
		}
	}
	code, _, errOut := runCmd(t, append(baseEnv(dir, addr), "LINKQR_ADDR=nonsense"), "serve")
	if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("a configuration error must be one line, got %q", errOut)
	}
}

func TestBootstrapValidationChangesNothing(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := baseEnv(dataDir, freeAddr(t))
	code, out, errOut := runCmd(t, env, "admin", "bootstrap", "--email", "not-an-email", "--password", "short", "--workspace", " ")
	if code != 1 || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"--email must be an e-mail address", "--password must be 10 to 256 characters", "--workspace must be 1 to 100 characters"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr %q lacks %q", errOut, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, "pg")); !os.IsNotExist(err) {
		t.Errorf("invalid input must not create a cluster: %v", err)
	}
}

func TestSIGTERMAfterBurstLosesNoScan(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	s := startServe(t, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	code, ids, errOut := bootstrap(t, env, "correct horse battery staple")
	if code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	code, out, errOut := runCmd(t, env, "admin", "api-key", "create", "--workspace", ids["workspace_id"], "--name", "burst", "--scopes", "links:read,links:write")
	var key map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &key) != nil || !strings.HasPrefix(key["secret"], "lqk_") {
		t.Fatalf("api-key create: exit %d, %q, %s", code, out, errOut)
	}
	api := func(method, path, body string) map[string]any {
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key["secret"])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	link := api("POST", "/api/v1/links", `{"target_url":"https://example.com/burst"}`)

	const n = 400
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var wg sync.WaitGroup
	var mu sync.Mutex
	redirected := 0
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", link["short_url"].(string), nil)
			req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
			resp, err := client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode == 302 {
				mu.Lock()
				redirected++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// SIGTERM straight after the burst: the buffer must be flushed on the way out.
	if code := s.stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.log())
	}
	s = startServe(t, dataDir)
	api = func(method, path, body string) map[string]any {
		req, _ := http.NewRequest(method, s.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key["secret"])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return m
	}
	got := api("GET", "/api/v1/links/"+link["id"].(string), "")
	if redirected != n || got["scan_count"] != float64(n) {
		t.Errorf("%d of %d redirects succeeded; scan_count after restart %v", redirected, n, got["scan_count"])
	}
	s.stop(t)
}

// The operator's reset link, for installations without e-mail: a link on
// the base URL that opens the reset page; an unknown address is an error.
func TestAdminUserResetLink(t *testing.T) {
	requirePostgres(t)
	dataDir := t.TempDir()
	s := startServe(t, dataDir)
	env := baseEnv(dataDir, freeAddr(t))
	if code, _, errOut := bootstrap(t, env, "correct horse battery staple"); code != 0 {
		t.Fatalf("bootstrap: %s", errOut)
	}
	code, out, errOut := runCmd(t, env, "admin", "user", "reset-link", "--email", "owner@example.com")
	var res map[string]string
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("reset-link: exit %d, %q, %s", code, out, errOut)
	}
	u, err := url.Parse(res["reset_url"])
	if err != nil || !strings.HasPrefix(u.Path, "/password/reset/") || len(u.Path) != len("/password/reset/")+43 {
		t.Fatalf("reset_url %q", res["reset_url"])
	}
	resp, err := http.Get(s.url + u.Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the reset link answers %d", resp.StatusCode)
	}
	code, _, errOut = runCmd(t, env, "admin", "user", "reset-link", "--email", "nobody@example.com")
	if code != 1 || !strings.Contains(errOut, "no account with the address nobody@example.com") {
		t.Errorf("unknown address: exit %d, %q", code, errOut)
	}
}
