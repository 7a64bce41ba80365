package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/linkrot/linkrot/internal/pgtest"
)

// The kill and lock tests run linkrot as a real process: the test binary
// itself, re-executed with LINKROT_TEST_CLI=1, runs the command line it is
// given instead of the tests. LINKROT_TEST_BLOCK_AT=stage makes that
// process stop for good when linkrot audit reaches the stage, after
// printing "linkrot-test: stage NAME" on stderr.
func TestMain(m *testing.M) {
	if path := os.Getenv(scaleWriteEnv); path != "" {
		// BenchmarkScale1M's writer.
		if err := writeScaleRun(context.Background(), path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv("LINKROT_TEST_CLI") == "1" {
		if at := os.Getenv("LINKROT_TEST_BLOCK_AT"); at != "" {
			stageHook = func(stage string) {
				if stage == at {
					fmt.Fprintf(os.Stderr, "linkrot-test: stage %s\n", stage)
					select {}
				}
			}
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(pgtest.Main(m)) // stops the PostgreSQL server of the tests that started one
}

// child is linkrot running as a separate process.
type child struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	lines  chan string // stderr, line by line
	mu     sync.Mutex
	stderr strings.Builder
	done   chan struct{}
	code   int
}

// startChild starts linkrot with args; blockAt is passed as
// LINKROT_TEST_BLOCK_AT ("" for none).
func startChild(t *testing.T, blockAt string, args ...string) *child {
	t.Helper()
	c := &child{lines: make(chan string, 100), done: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], args...)
	c.cmd.Env = append(os.Environ(), "LINKROT_TEST_CLI=1", "LINKROT_TEST_BLOCK_AT="+blockAt)
	c.cmd.Stdout = &c.stdout
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			c.mu.Lock()
			c.stderr.WriteString(sc.Text() + "\n")
			c.mu.Unlock()
			select {
			case c.lines <- sc.Text():
			default:
			}
		}
		io.Copy(io.Discard, stderr)
		err := c.cmd.Wait()
		c.code = c.cmd.ProcessState.ExitCode()
		_ = err
		close(c.done)
	}()
	t.Cleanup(func() {
		c.cmd.Process.Kill()
		<-c.done
	})
	return c
}

// waitLine waits for a stderr line containing s.
func (c *child) waitLine(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l := <-c.lines:
			if strings.Contains(l, s) {
				return
			}
		case <-c.done:
			t.Fatalf("linkrot exited (code %d) before printing %q; stderr:\n%s", c.code, s, c.errText())
		case <-timeout:
			t.Fatalf("linkrot did not print %q; stderr:\n%s", s, c.errText())
		}
	}
}

func (c *child) errText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// kill sends SIGKILL and waits until the process is reaped.
func (c *child) kill(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-c.done
}

// wait waits for the process to exit and returns its exit code.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(120 * time.Second):
		t.Fatalf("linkrot did not finish; stderr:\n%s", c.errText())
	}
	return c.code
}
