package memento

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/politeness"
)

// SaveOptions tune Save. The zero value is useful.
type SaveOptions struct {
	// Auth is "accesskey:secret" of archive.org S3 keys, sent as
	// "Authorization: LOW accesskey:secret" (SPN2); "" sends none.
	Auth string
	// MaxPolls bounds the status requests of one job (default 6): the
	// SPN2 status of an unknown or stuck job stays "pending" forever.
	MaxPolls int
	// PollInterval is the wait before each status request (default 5s);
	// a Retry-After on the status answer wins when longer (up to the
	// Client's MaxRetryWait).
	PollInterval time.Duration
}

// spnReply is the JSON of a Save Page Now 2 answer: the capture request
// ({"url", "job_id"}) or the job status ({"status", "timestamp",
// "original_url", "message"}).
type spnReply struct {
	URL         string `json:"url"`
	JobID       string `json:"job_id"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	OriginalURL string `json:"original_url"`
	Message     string `json:"message"`
	StatusExt   string `json:"status_ext"`
}

// Save asks archive a to capture target with Save Page Now 2 semantics:
// POST <Save> url=target, then poll <Save>/status/<job id> at most
// MaxPolls times. Capture requests wait for the archive's own save budget
// (SaveRate) as well as its host budget. The outcome is always a record,
// never an error: Status is "success" (Memento set), "pending" (polls
// exhausted), or "error" (Reason says why).
func (c *Client) Save(ctx context.Context, a Archive, target string, o SaveOptions) audit.SaveRequest {
	rec := audit.SaveRequest{URL: target, Archive: a.Name, Status: "error", Requested: time.Now().UTC()}
	if a.Save == "" {
		rec.Reason = "archive takes no capture requests"
		return rec
	}
	if o.MaxPolls <= 0 {
		o.MaxPolls = 6
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 5 * time.Second
	}
	c.mu.Lock()
	lim := c.saveLim[a.Name]
	c.mu.Unlock()
	if lim == nil {
		lim = newLimiter(a.saveRate())
		c.mu.Lock()
		c.saveLim[a.Name] = lim
		c.mu.Unlock()
	}
	if err := lim.Wait(ctx); err != nil {
		rec.Reason = "not requested: " + err.Error()
		return rec
	}
	hdr := http.Header{"Accept": {"application/json"}}
	if o.Auth != "" {
		hdr.Set("Authorization", "LOW "+o.Auth)
	}
	rec.Requested = time.Now().UTC()
	resp, err := c.do(ctx, request{op: "save", method: http.MethodPost, url: a.Save, header: hdr,
		form: url.Values{"url": {target}}, maxBody: 64 << 10, budget: true})
	if err != nil {
		rec.Reason = err.Error()
		return rec
	}
	rec.Status = "requested"
	// The legacy GET /save/<url> and some SPN2 answers name the memento
	// directly.
	if cl := resp.Header.Get("Content-Location"); cl != "" && resp.Status < 400 {
		if m, err := resp.URL.Parse(cl); err == nil {
			rec.Status, rec.Memento = "success", m.String()
			return rec
		}
	}
	var r spnReply
	if resp.Status < 200 || resp.Status > 299 {
		rec.Status = "error"
		rec.Reason = fmt.Sprintf("save request answered %d", resp.Status)
		if json.Unmarshal(resp.Body, &r) == nil && r.Message != "" {
			rec.Reason += ": " + truncate(r.Message, 300)
		}
		return rec
	}
	if err := json.Unmarshal(resp.Body, &r); err != nil {
		rec.Status = "error"
		rec.Reason = "save answer is not SPN2 JSON: " + truncate(err.Error(), 200)
		return rec
	}
	if r.JobID == "" {
		rec.Status = "error"
		rec.Reason = "save answer has no job_id"
		if r.Message != "" {
			rec.Reason += ": " + truncate(r.Message, 300)
		}
		return rec
	}
	rec.JobID = truncate(r.JobID, 200)
	statusURL := strings.TrimSuffix(a.Save, "/") + "/status/" + url.PathEscape(r.JobID)
	wait := o.PollInterval
	for poll := 0; poll < o.MaxPolls; poll++ {
		if !c.wait(ctx, wait) {
			rec.Status = "pending"
			rec.Reason = "polling stopped: " + ctx.Err().Error()
			return rec
		}
		wait = o.PollInterval
		sresp, err := c.do(ctx, request{op: "save status", url: statusURL, maxBody: 64 << 10, budget: true,
			header: http.Header{"Accept": {"application/json"}}})
		if err != nil {
			rec.Status = "pending"
			rec.Reason = "status request failed: " + err.Error()
			return rec
		}
		if ra, ok := parseRetryAfterHeader(sresp.Header); ok && ra > wait {
			wait = min(ra, c.o.MaxRetryWait)
		}
		var s spnReply
		if sresp.Status != http.StatusOK || json.Unmarshal(sresp.Body, &s) != nil {
			continue
		}
		switch s.Status {
		case "success":
			rec.Status = "success"
			orig := s.OriginalURL
			if orig == "" {
				orig = target
			}
			if orig != target {
				rec.Reason = "archive captured " + truncate(orig, 300)
			}
			if _, err := ParseTimestamp14(s.Timestamp); err == nil {
				if su, err := url.Parse(a.Save); err == nil {
					rec.Memento = su.Scheme + "://" + su.Host + "/web/" + s.Timestamp + "/" + orig
				}
			}
			return rec
		case "error":
			rec.Status = "error"
			rec.Reason = "capture failed: " + truncate(strings.TrimSpace(s.StatusExt+" "+s.Message), 300)
			return rec
		}
	}
	rec.Status = "pending"
	rec.Reason = fmt.Sprintf("still pending after %d status requests", o.MaxPolls)
	return rec
}

func parseRetryAfterHeader(h http.Header) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	return politeness.ParseRetryAfter(v, time.Now())
}
