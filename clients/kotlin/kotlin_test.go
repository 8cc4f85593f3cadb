// Package kotlin_test checks the Kotlin client (clients/kotlin): its models
// and methods against the OpenAPI document (models_test.go), and its JUnit 5
// tests and the README's example against a linkqr started for the run.
package kotlin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/testkit"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// The jars Debian's packages install (kotlin, libgoogle-gson-java, junit5).
const (
	gsonJar   = "/usr/share/java/gson.jar"
	junitJar  = "/usr/share/java/junit-platform-console-standalone.jar"
	stdlibJar = "/usr/share/java/kotlin-stdlib.jar"
)

// TestKotlinClient builds the jar with `make clients-kotlin` (into a
// temporary directory), compiles the JUnit 5 tests and the example against
// it, runs the tests with the console launcher with the server's URL, keys
// and an OAuth client in the environment, then runs the README's example
// with java -cp. Without the toolchain the test skips loudly (fails under
// LINKQR_TEST_STRICT=1).
func TestKotlinClient(t *testing.T) {
	strict.SkipShort(t, "the Kotlin client's toolchain (kotlinc, its tests, the example)")
	kotlinc := testkit.RequireBinary(t, "kotlinc")
	java := testkit.RequireBinary(t, "java")
	mk := testkit.RequireBinary(t, "make")
	for _, jar := range []string{gsonJar, junitJar, stdlibJar} {
		if _, err := os.Stat(jar); err != nil {
			testkit.SkipUnlessStrict(t, jar+" is missing (Debian packages libgoogle-gson-java, junit5, kotlin)")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	build := t.TempDir()
	jar := filepath.Join(build, "linkqr-client.jar")
	run(ctx, t, nil, mk, "--no-print-directory", "-C", "../..", "clients-kotlin", "KT_BUILD="+build)
	classes := filepath.Join(build, "test-classes")
	run(ctx, t, nil, kotlinc, "src/test/kotlin", "example", "-jvm-target", "1.8", "-nowarn",
		"-cp", strings.Join([]string{jar, gsonJar, junitJar}, ":"), "-d", classes)

	srv := testkit.StartServer(t, testkit.WithEnv("LINKQR_WEBHOOK_ALLOW_PRIVATE", "true"))
	tn := testkit.NewTenant(t, srv.Pool)
	creds := srv.NewClientCredentials(t, tn.WorkspaceID, "kotlin")
	key := creds.Token
	cp := strings.Join([]string{jar, gsonJar, stdlibJar, classes}, ":")
	run(ctx, t, creds.Env, java, "-jar", junitJar, "--disable-banner", "--disable-ansi-colors", "--details=tree", "--fail-if-no-tests",
		"--class-path", cp, "--select-package", "dev.linkqr.client")

	// The README's example, as an integrator runs it: the jar, gson and the
	// Kotlin runtime on the class path.
	out := run(ctx, t, []string{"LINKQR_BASE_URL=" + srv.URL, "LINKQR_API_KEY=" + key},
		java, "-cp", cp, "dev.linkqr.example.ExampleKt")
	for _, want := range []string{"created " + srv.URL + "/", "re-pointed ", "-> https://example.com/summer", "404 not-found"} {
		if !strings.Contains(out, want) {
			t.Errorf("example output lacks %q:\n%s", want, out)
		}
	}
}

// TestReadmeShowsTheExample keeps the README's example the one the test runs.
func TestReadmeShowsTheExample(t *testing.T) {
	example, err := os.ReadFile("example/Example.kt")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```kotlin\n"+string(example)+"```") {
		t.Error("README.md does not show example/Example.kt verbatim in a ```kotlin block")
	}
}

// run executes a command in this directory (testkit.Run).
func run(ctx context.Context, t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	return testkit.Run(ctx, t, "", env, name, args...)
}
