package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/linkrot/linkrot"
)

// fileConfig is a loaded configuration file (see linkrot.ApplyConfig).
type fileConfig struct {
	path string
	linkrot.ConfigFile
}

// parseCommand parses a command's arguments like parseInterleaved, and adds
// --config FILE: the file's settings apply to every flag not given on the
// command line, and its url is the positional argument when none was
// given (configURL). It returns the positional arguments and the loaded
// file (nil without --config).
func parseCommand(e *env, fs *flag.FlagSet, args []string) ([]string, *fileConfig, error) {
	if fs.Lookup("config") == nil {
		fs.String("config", "", "read settings from this TOML `file` (command-line flags win; see linkrot config example)")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, nil, err
	}
	if e.onFlags != nil {
		e.onFlags(fs)
		return nil, nil, flag.ErrHelp
	}
	path := fs.Lookup("config").Value.String()
	if path == "" {
		return pos, nil, nil
	}
	cfg, err := loadConfig(fs, path)
	if err != nil {
		return nil, nil, err
	}
	return pos, cfg, nil
}

// loadConfig reads the file at path and applies it to fs.
func loadConfig(fs *flag.FlagSet, path string) (*fileConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--config: %v", err)
	}
	cfg, err := applyConfig(fs, b, filepath.Dir(path))
	if err != nil {
		return nil, usagef("--config %s: %v", path, err)
	}
	cfg.path = path
	return cfg, nil
}

// applyConfig applies TOML b to fs; flags of linkrot audit that fs does
// not have are skipped (one file serves audit, crawl and check).
func applyConfig(fs *flag.FlagSet, b []byte, dir string) (*fileConfig, error) {
	cfg, err := linkrot.ApplyConfig(fs, b, dir, auditFlagNames())
	if err != nil {
		return nil, err
	}
	return &fileConfig{ConfigFile: *cfg}, nil
}

// auditFlags returns the flag set of linkrot audit, as registered by
// runAudit (so every flag any stage adds is listed).
func auditFlags() *flag.FlagSet {
	var got *flag.FlagSet
	e := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard,
		onFlags: func(fs *flag.FlagSet) { got = fs }}
	_ = runAudit(context.Background(), e, nil)
	if got == nil {
		panic("linkrot: runAudit did not parse its flags with parseCommand")
	}
	return got
}

// auditFlagNames returns the names of the flags of linkrot audit.
func auditFlagNames() map[string]bool {
	names := map[string]bool{}
	auditFlags().VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// withURL returns pos, or the config's url when pos is empty.
func (c *fileConfig) withURL(pos []string) []string {
	if len(pos) == 0 && c != nil && c.URL != "" {
		return []string{c.URL}
	}
	return pos
}

// hostRules returns the host rules of a config (nil-safe).
func (c *fileConfig) hostRules() []linkrot.HostSettings {
	if c == nil {
		return nil
	}
	return append([]linkrot.HostSettings(nil), c.Hosts...)
}

// runConfig is linkrot config: "linkrot config example" prints a commented
// example file holding every flag of linkrot audit; "linkrot config check
// FILE" loads a file and reports its errors.
func runConfig(_ context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("usage: linkrot config example | linkrot config check FILE")
	}
	switch args[0] {
	case "example":
		if len(args) != 1 {
			return usagef("config example takes no arguments")
		}
		_, err := io.WriteString(e.stdout, exampleConfig())
		return err
	case "check":
		if len(args) != 2 {
			return usagef("usage: linkrot config check FILE")
		}
		fs := auditFlags()
		cfg, err := loadConfig(fs, args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: OK (%d host rules)\n", args[1], len(cfg.Hosts))
		return nil
	case "-h", "--help", "help":
		fmt.Fprintln(e.stdout, "usage: linkrot config example | linkrot config check FILE")
		return nil
	}
	return usagef("unknown config subcommand %q (example, check)", args[0])
}

// exampleConfig returns the commented example for linkrot audit's flags
// (TestConfig_ExampleRoundTrip parses it back into the defaults).
func exampleConfig() string { return linkrot.ExampleConfig(auditFlags()) }
