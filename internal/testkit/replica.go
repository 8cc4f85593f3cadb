package testkit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/linkqr/linkqr/internal/pgembed"
	"github.com/linkqr/linkqr/internal/testkit/strict"
)

// ReplicatedCluster is a private PostgreSQL primary with a streaming
// standby made by pg_basebackup, both under one temporary directory, for
// tests that stop, pause or restart the replica without touching the
// shared test server.
type ReplicatedCluster struct {
	t          testing.TB
	Primary    *pgembed.Cluster
	replicaDir string
	replica    *pgembed.Cluster // nil while stopped
}

// StartReplicatedCluster starts the pair with the PostgreSQL binaries
// pgembed finds (skipping, or failing under strict, without them) and
// stops both when the test ends.
func StartReplicatedCluster(t testing.TB) *ReplicatedCluster {
	t.Helper()
	strict.SkipShort(t, "a replicated PostgreSQL cluster of its own (initdb, pg_basebackup)")
	if _, err := pgembed.FindBinDir(); err != nil {
		SkipUnlessStrict(t, "no PostgreSQL binaries for a replica: "+err.Error())
	}
	dir, err := os.MkdirTemp("", "lqrep") // short: socket paths live under it
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	primary, err := pgembed.Open(ctx, pgembed.Options{DataDir: filepath.Join(dir, "p"), ForTests: true})
	if err != nil {
		t.Fatalf("testkit: start primary: %v", err)
	}
	rc := &ReplicatedCluster{t: t, Primary: primary, replicaDir: filepath.Join(dir, "r")}
	t.Cleanup(func() {
		rc.StopReplica()
		if err := primary.Close(context.Background()); err != nil {
			t.Logf("testkit: stop primary: %v", err)
		}
		_ = os.RemoveAll(dir)
	})
	if err := primary.Standby(ctx, rc.replicaDir); err != nil {
		t.Fatalf("testkit: make standby: %v", err)
	}
	rc.StartReplica()
	return rc
}

// ReplicaURL is the standby's connection string (valid across restarts).
func (rc *ReplicatedCluster) ReplicaURL() string {
	rc.t.Helper()
	if rc.replica == nil {
		rc.t.Fatal("testkit: the replica is stopped")
	}
	return rc.replica.ConnString()
}

// StartReplica starts the standby (again); it catches up by itself.
func (rc *ReplicatedCluster) StartReplica() {
	rc.t.Helper()
	if rc.replica != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := pgembed.Open(ctx, pgembed.Options{DataDir: rc.replicaDir, ForTests: true})
	if err != nil {
		rc.t.Fatalf("testkit: start replica: %v", err)
	}
	rc.replica = r
}

// StopReplica shuts the standby down.
func (rc *ReplicatedCluster) StopReplica() {
	if rc.replica == nil {
		return
	}
	if err := rc.replica.Close(context.Background()); err != nil {
		rc.t.Logf("testkit: stop replica: %v", err)
	}
	rc.replica = nil
}
