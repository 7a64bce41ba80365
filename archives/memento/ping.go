package memento

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// DefaultPingURL is the resource Ping asks about: a page every general
// web archive has captured many times.
const DefaultPingURL = "http://example.com/"

// PingResult is what one archive answered to Ping.
type PingResult struct {
	Archive string
	// TimeGate is the TimeGate's status (0 without an answer), Style how
	// it answered ("302", "200", "link"), Memento the memento it chose
	// and Datetime its Memento-Datetime.
	TimeGate int
	Style    string
	Memento  string
	Datetime time.Time
	// TimeMap is the TimeMap's status, Mementos how many it listed; "-1"
	// when the archive has no TimeMap.
	TimeMap  int
	Mementos int
	// OK is true when the archive answers Memento: its TimeGate chose a
	// memento with a Memento-Datetime, or said it has none (404), and its
	// TimeMap (if any) parsed.
	OK bool
	// Problems lists what did not work.
	Problems []string
	Elapsed  time.Duration
}

// Line renders r as one line.
func (r PingResult) Line() string {
	var b strings.Builder
	verdict := "ok"
	if !r.OK {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%-4s %-14s timegate %s", verdict, r.Archive, statusText(r.TimeGate))
	if !r.Datetime.IsZero() {
		fmt.Fprintf(&b, " (%s) Memento-Datetime %s", r.Style, FormatDatetime(r.Datetime))
	}
	switch {
	case r.TimeMap < 0:
		b.WriteString("; no TimeMap")
	case r.TimeMap == http.StatusOK:
		fmt.Fprintf(&b, "; timemap 200, %d mementos parsed", r.Mementos)
	default:
		fmt.Fprintf(&b, "; timemap %s", statusText(r.TimeMap))
	}
	fmt.Fprintf(&b, "; %s", r.Elapsed.Round(time.Millisecond))
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, " — %s", strings.Join(r.Problems, "; "))
	}
	return b.String()
}

// answeredNotMemento is PingResult.TimeGate for an answer that is no
// Memento TimeGate's.
const answeredNotMemento = -2

func statusText(s int) string {
	switch s {
	case 0:
		return "no answer"
	case answeredNotMemento:
		return "answered, not Memento"
	}
	return fmt.Sprint(s)
}

// Ping asks archive a once about uriR (DefaultPingURL when ""): its
// TimeGate for the memento nearest to now, then its TimeMap. Failures are
// in the result, never an error.
func (c *Client) Ping(ctx context.Context, a Archive, uriR string) PingResult {
	if uriR == "" {
		uriR = DefaultPingURL
	}
	start := time.Now()
	r := PingResult{Archive: a.Name, TimeMap: -1}
	if a.Shutdown != "" {
		r.Problems = append(r.Problems, "preset marked shut down: "+a.Shutdown)
	}
	tgOK := false
	n, err := c.Negotiate(ctx, a, uriR, time.Now())
	var ae *Error
	switch {
	case err == nil:
		r.TimeGate, r.Style, r.Memento, r.Datetime = statusOfStyle(n.Style), n.Style, n.Memento.URL, n.Memento.Datetime
		tgOK = !r.Datetime.IsZero()
	case errors.Is(err, ErrNoMemento):
		r.TimeGate = http.StatusNotFound
		r.Problems = append(r.Problems, "TimeGate has no memento of "+uriR+" (answers Memento)")
		tgOK = true
	case errors.As(err, &ae):
		r.Problems = append(r.Problems, "timegate: "+truncate(ae.Error(), 200))
		fmt.Sscanf(strings.TrimPrefix(ae.Class, "status-"), "%d", &r.TimeGate)
		if ae.Class == "protocol" {
			r.TimeGate = answeredNotMemento
		}
	default:
		r.Problems = append(r.Problems, "timegate: "+truncate(err.Error(), 200))
	}
	tmOK := true
	if a.TimeMap != "" {
		tm, err := c.TimeMap(ctx, a, uriR)
		switch {
		case err == nil:
			r.TimeMap, r.Mementos = http.StatusOK, len(tm.Mementos)
		case errors.Is(err, ErrNoMemento):
			r.TimeMap = http.StatusNotFound
		default:
			tmOK = false
			r.TimeMap = 0
			if errors.As(err, &ae) {
				fmt.Sscanf(strings.TrimPrefix(ae.Class, "status-"), "%d", &r.TimeMap)
				if ae.Class == "protocol" {
					r.TimeMap = http.StatusOK
				}
			}
			r.Problems = append(r.Problems, "timemap: "+truncate(err.Error(), 200))
		}
	}
	r.OK = tgOK && tmOK && a.Shutdown == ""
	r.Elapsed = time.Since(start)
	return r
}

func statusOfStyle(style string) int {
	if style == "302" {
		return http.StatusFound
	}
	return http.StatusOK
}
