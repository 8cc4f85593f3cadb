// Package kotlin_test checks the Kotlin client (clients/kotlin): its models
// and methods against the OpenAPI document, and its JUnit 5 tests against a
// linkqr started for the run.
package kotlin_test

import (
	"testing"

	"github.com/linkqr/linkqr/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
