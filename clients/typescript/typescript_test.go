// Package typescript_test runs the TypeScript client's node tests
// (clients/typescript/test) against a linkqr started for the run, so
// `make test` covers the client and the MCP endpoint from Node too.
package typescript_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestNodeClient compiles the client and its tests (tsc --strict) and runs
// node --test with the server's URL and freshly minted keys in the
// environment; node's output is the failure message. Without Node.js 20+
// the test skips loudly (fails under LINKQR_TEST_STRICT=1).
func TestNodeClient(t *testing.T) {
	strict.SkipShort(t, "the TypeScript client's toolchain (npm, tsc, its suite on Node.js)")
	node := testkit.RequireBinary(t, "node")
	npm := testkit.RequireBinary(t, "npm")
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		testkit.SkipUnlessStrict(t, "node --version failed: "+err.Error())
	}
	if m := regexp.MustCompile(`^v(\d+)\.`).FindSubmatch(out); m == nil || atoi(string(m[1])) < 20 {
		testkit.SkipUnlessStrict(t, "Node.js 20 or newer is needed, found "+string(out))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	if _, err := os.Stat("node_modules"); err != nil {
		run(ctx, t, nil, npm, "ci", "--no-audit", "--no-fund")
	}

	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	env := srv.NewClientCredentials(t, tn.WorkspaceID, "node").Env
	run(ctx, t, env, npm, "test", "--silent")
}

// run executes a command in this directory (testkit.Run).
func run(ctx context.Context, t *testing.T, env []string, name string, args ...string) {
	t.Helper()
	testkit.Run(ctx, t, "", env, name, args...)
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
