package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The topology scenario (-topology): deploy/cluster.sh's one-machine
// cluster (PostgreSQL primary and replica, PgBouncer, Redis, two redirect
// instances, an api and a worker behind HAProxy), and the redirect through
// HAProxy closed-loop with both redirect instances and then with one, so
// what a second instance buys on this machine is measured, not claimed.
// Everything shares the machine's cores: on 2 cores, the limit is the
// cores, and the figures say how much.

// topologyReport is what the topology scenario measured.
type topologyReport struct {
	Cores    int
	Two, One phase // through HAProxy, both redirect instances / redirect2 stopped
	Direct   phase // one redirect instance without HAProxy
	API      phase // GET /api/v1/links/{id} through HAProxy: the api instance
	// Fanout is scan.created deliveries by the worker instance (nil:
	// -webhook-events 0).
	Fanout *fanoutResult
}

// cluster drives deploy/cluster.sh.
type clusterScript struct {
	script string
	env    []string
	vars   map[string]string
}

func (c *clusterScript) run(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{c.script}, args...)...)
	cmd.Env = c.env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("deploy/cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return nil
}

// freePortRange returns the first of n consecutive free ports.
func freePortRange(n int) (int, error) {
	for base := 20000 + os.Getpid()%20000; base < 65000-n; base += n {
		free := true
		for p := base; p < base+n && free; p++ {
			ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
			if err != nil {
				free = false
				continue
			}
			ln.Close()
		}
		if free {
			return base, nil
		}
	}
	return 0, fmt.Errorf("no %d consecutive free ports", n)
}

func (b *bench) topology(ctx context.Context) (*topologyReport, error) {
	bin, err := filepath.Abs(b.opts.Linkqr)
	if err != nil {
		return nil, err
	}
	script, err := filepath.Abs(b.opts.ClusterScript)
	if err != nil {
		return nil, err
	}
	// PostgreSQL's account must reach the directory when the bench runs as
	// root, so it is made under /tmp and opened to it.
	dir, err := os.MkdirTemp("/tmp", "linkqr-bench-cluster-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePortRange(30)
	if err != nil {
		return nil, err
	}
	// The bench's webhook receiver listens on loopback.
	c := &clusterScript{script: script, env: append(os.Environ(), "LQ_DIR="+dir, "LQ_PORT="+strconv.Itoa(port), "LINKQR="+bin, "LQ_WEBHOOK_ALLOW_PRIVATE=1")}
	cmd := exec.CommandContext(ctx, "bash", script, "env")
	cmd.Env = c.env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("deploy/cluster.sh env: %w", err)
	}
	c.vars = map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		c.vars[k] = v
	}
	b.progress("topology: starting deploy/cluster.sh in %s (ports from %d)", dir, port)
	if err := c.run(ctx, "start"); err != nil {
		return nil, err
	}
	defer func() {
		b.progress("topology: stopping the cluster")
		if err := c.run(context.WithoutCancel(ctx), "stop"); err != nil {
			b.progress("WARNING: %v", err)
		}
	}()
	secret, err := os.ReadFile(filepath.Join(dir, "secret"))
	if err != nil {
		return nil, err
	}
	adminEnv := append(os.Environ(), "LINKQR_DATABASE_URL="+c.vars["LQ_PRIMARY_URL"], "LINKQR_SECRET_KEY="+strings.TrimSpace(string(secret)),
		"LINKQR_DATA_DIR="+filepath.Join(dir, "admin"))
	b.progress("topology: creating a workspace, %d API keys and %d links through HAProxy", b.opts.Keys, b.opts.Links)
	fx, err := setupLinkqr(ctx, bin, adminEnv, c.vars["LQ_APP_URL"], b.opts.Links, b.opts.Keys, "", nil)
	if err != nil {
		return nil, err
	}
	redirect := fx.redirect
	rep := &topologyReport{Cores: runtime.NumCPU()}
	if rep.Two, err = b.load(ctx, "redirect through HAProxy, 2 redirect instances", redirect(c.vars["LQ_SHORT_URL"])); err != nil {
		return nil, err
	}
	if rep.Direct, err = b.load(ctx, "redirect, 1 instance without HAProxy", redirect(c.vars["LQ_REDIRECT1_URL"])); err != nil {
		return nil, err
	}
	if rep.API, err = b.load(ctx, "api GET link through HAProxy, 1 api instance", fx.apiGet(c.vars["LQ_APP_URL"])); err != nil {
		return nil, err
	}
	if b.opts.Events > 0 {
		hooks, err := setupFanout(ctx, bin, adminEnv, c.vars["LQ_APP_URL"])
		if err != nil {
			return nil, err
		}
		f, err := b.runFanout(ctx, c.vars["LQ_APP_URL"], c.vars["LQ_SHORT_URL"], c.vars["LQ_WORKER_METRICS_URL"], hooks, b.opts.Events)
		if err != nil {
			return nil, err
		}
		rep.Fanout = &f
	}
	if err := c.run(ctx, "stop-redirect2"); err != nil {
		return nil, err
	}
	if err := waitDown(ctx, c.vars["LQ_STATS_URL"], "redirect2", 10*time.Second); err != nil {
		return nil, err
	}
	if rep.One, err = b.load(ctx, "redirect through HAProxy, 1 redirect instance", redirect(c.vars["LQ_SHORT_URL"])); err != nil {
		return nil, err
	}
	return rep, nil
}

// waitDown polls HAProxy's stats (CSV) until server is DOWN.
func waitDown(ctx context.Context, statsURL, server string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(statsURL + "/;csv")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, line := range strings.Split(string(body), "\n") {
				f := strings.Split(line, ",")
				if len(f) > 17 && f[1] == server && strings.HasPrefix(f[17], "DOWN") {
					return nil
				}
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("HAProxy did not take %s out within %v", server, within)
		}
		time.Sleep(200 * time.Millisecond) // polling HAProxy's health view
	}
}

// print writes the topology table.
func (t *topologyReport) print(w io.Writer) {
	fmt.Fprintf(w, "\ntopology: deploy/cluster.sh on this machine (%d cores shared by HAProxy, the instances, PgBouncer, PostgreSQL and wrk)\n", t.Cores)
	fmt.Fprintf(w, "%-46s %10s %10s %10s %8s %12s\n", "scenario", "req/s", "p50", "p99", "errors", "req/s/core")
	for _, r := range []struct {
		name string
		p    phase
	}{
		{"redirect via HAProxy, 2 redirect instances", t.Two},
		{"redirect via HAProxy, 1 redirect instance", t.One},
		{"redirect, 1 instance direct (no HAProxy)", t.Direct},
	} {
		m := r.p.Measured
		fmt.Fprintf(w, "%-46s %10.0f %10s %10s %8d %12.0f\n", r.name, m.Throughput(), ms(m.Latency.Percentile(0.5)), ms(m.Latency.Percentile(0.99)), r.p.Errors(), m.Throughput()/float64(t.Cores))
	}
	m := t.API.Measured
	fmt.Fprintf(w, "%-46s %10.0f %10s %10s %8d %12.0f\n", "api GET link via HAProxy, 1 api instance", m.Throughput(), ms(m.Latency.Percentile(0.5)), ms(m.Latency.Percentile(0.99)), t.API.Errors(), m.Throughput()/float64(t.Cores))
	if f := t.Fanout; f != nil {
		fmt.Fprintf(w, "%-46s %10.0f %10s %10s %8d %12.0f\n", fmt.Sprintf("scan.created deliveries, 1 worker (%d of %d)", f.Delivered, f.Events), f.Rate(), ms(f.Latency.Percentile(0.5)), ms(f.Latency.Percentile(0.99)), f.Events-f.Delivered, f.Rate()/float64(t.Cores))
	}
	if one := t.One.Measured.Throughput(); one > 0 {
		fmt.Fprintf(w, "  2 instances / 1 instance   %.2f  (on %d cores the instances share them: the second one adds what the cores have left)\n", t.Two.Measured.Throughput()/one, t.Cores)
	}
}
