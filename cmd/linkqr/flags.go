package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/linkqr/linkqr/internal/validate"
)

// errUsage marks errors that are the caller's invocation, not the system;
// the flag set has already said what was wrong.
var errUsage = errors.New("usage")

// errHelp marks an explicit -h/--help: the usage was printed, exit 0.
var errHelp = errors.New("help")

// newFlagSet returns a flag set for `linkqr <name>` whose -h prints the
// command's synopsis before its flags.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("linkqr "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), strings.TrimSpace("usage: "+fs.Name()+" "+synopsis))
		fs.PrintDefaults()
	}
	return fs
}

// initFlag declares --init, which lets migrate and admin commands create a
// new embedded cluster where the default ./var found none.
func initFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("init", false, "create a new embedded PostgreSQL cluster when the data directory has none (implied by setting LINKQR_DATA_DIR)")
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// parseFlags parses args and insists on the required flags, so a missing
// one is a usage error naming it rather than a confusing failure later.
func parseFlags(fs *flag.FlagSet, args []string, required ...string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var missing []string
	for _, name := range required {
		if !set[name] {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(fs.Output(), "%s: missing required flag(s): %s\n", fs.Name(), strings.Join(missing, ", "))
		return errUsage
	}
	return nil
}

// flagPointers maps JSON pointers of domain validation to the flags that
// carry them, so operator errors name what the operator typed.
var flagPointers = map[string]string{
	"/rate_limit_per_minute": "--rate-limit",
	"/ip_allowlist":          "--ip-allow",
	"/redirect_uris":         "--redirect-uri",
	"/workspace_id":          "--workspace",
}

// flagError rewrites validation pointers ("/email") as flag names ("--email").
func flagError(err error) error {
	var verrs validate.Errors
	if !errors.As(err, &verrs) {
		return err
	}
	parts := make([]string, len(verrs))
	for i, fe := range verrs {
		name := "--" + strings.TrimPrefix(fe.Pointer, "/")
		for pointer, flagName := range flagPointers {
			if fe.Pointer == pointer || strings.HasPrefix(fe.Pointer, pointer+"/") {
				name = flagName
			}
		}
		parts[i] = name + " " + fe.Detail
	}
	return errors.New(strings.Join(parts, "; "))
}
