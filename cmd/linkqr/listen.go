package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/linkqr/linkqr/internal/event"
	"github.com/linkqr/linkqr/internal/listen"
)

// listenCmd runs `linkqr listen`: a client of a linkqr server, so it reads
// no server configuration, only its flags and LINKQR_BASE_URL /
// LINKQR_API_KEY.
func listenCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("listen", "--forward-to URL [--events a,b] [--after evt_…] [--api-url URL] [--api-key KEY]", stderr)
	apiURL := fs.String("api-url", envOr("LINKQR_BASE_URL", "http://localhost:8080"), "the linkqr server (default $LINKQR_BASE_URL or http://localhost:8080)")
	apiKey := fs.String("api-key", "", "an API key with webhooks:read (default $LINKQR_API_KEY; prefer the variable: flags show in ps)")
	forwardTo := fs.String("forward-to", "", "the local URL each event is POSTed to, e.g. http://localhost:3000/hook")
	after := fs.String("after", "", "start after this event (evt_…; a stopped session prints its last) instead of now")
	events := fs.String("events", "", "comma-separated event types to forward (default all: "+strings.Join(typeNames(), ",")+")")
	if err := parseFlags(fs, args, "forward-to"); err != nil {
		return err
	}
	key := *apiKey
	if key == "" {
		key = os.Getenv("LINKQR_API_KEY")
	}
	if key == "" {
		fmt.Fprintln(stderr, "linkqr listen: an API key is required: --api-key or LINKQR_API_KEY")
		return errUsage
	}
	var types []string
	for _, t := range splitList(*events) {
		if !event.Known(event.Type(t)) {
			fmt.Fprintf(stderr, "linkqr listen: --events: %q is not an event type (%s)\n", t, strings.Join(typeNames(), ", "))
			return errUsage
		}
		if !slices.Contains(types, t) {
			types = append(types, t)
		}
	}
	for name, raw := range map[string]string{"--forward-to": *forwardTo, "--api-url": *apiURL} {
		if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			fmt.Fprintf(stderr, "linkqr listen: %s must be an absolute http or https URL\n", name)
			return errUsage
		}
	}
	return listen.Run(ctx, listen.Config{
		APIURL: *apiURL, APIKey: key, ForwardTo: *forwardTo, Types: types, After: *after,
		Secret: listen.NewSecret(), Out: stdout, Log: stderr,
	})
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func typeNames() []string {
	out := make([]string, len(event.Types))
	for i, t := range event.Types {
		out[i] = string(t)
	}
	return out
}
