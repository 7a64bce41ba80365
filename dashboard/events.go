package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/linkrot/linkrot/store"
)

// events streams the progress of the running runs as Server-Sent Events,
// reading their counts from the database every PollInterval (the writer
// is another process; SQLite has no change notification across
// processes). Events:
//
//	progress  {"run":N,"status":"running","pages":…,"links":…,"checked":…,"broken":…,"findings":…}
//	          when a running run's counts change (one event per run)
//	done      {"run":N} when a run streamed before is no longer running
//	idle      {} when no run is running (once, then again after a change)
//
// A comment line every 15 seconds keeps proxies from closing an idle
// stream; the stream ends after StreamLimit (EventSource reconnects).
//
// The stream outlives a server's WriteTimeout: before each write the
// write deadline is moved to a minute ahead (where the ResponseWriter
// supports it); a client that stops reading is still dropped then.
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(h.opts.PollInterval + time.Minute)) }
	extend()
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprint(w, "retry: 5000\n\n"); err != nil {
		return
	}
	_ = rc.Flush()

	ctx := r.Context()
	limit := time.NewTimer(h.opts.StreamLimit)
	defer limit.Stop()
	tick := time.NewTicker(h.opts.PollInterval)
	defer tick.Stop()
	lastBeat := time.Now()
	last := map[int64]store.RunProgress{}
	idle := false
	for {
		extend()
		runs, err := h.db.RunningRuns(ctx)
		if err != nil {
			if ctx.Err() == nil {
				h.log.Error("dashboard events", "err", err)
			}
			return
		}
		now := map[int64]store.RunProgress{}
		wrote := false
		for _, p := range runs {
			now[p.RunID] = p
			if prev, ok := last[p.RunID]; ok && prev == p {
				continue
			}
			if !send(w, "progress", progressEvent(p)) {
				return
			}
			wrote = true
		}
		for id := range last {
			if _, ok := now[id]; !ok {
				if !send(w, "done", map[string]int64{"run": id}) {
					return
				}
				wrote = true
			}
		}
		last = now
		if len(runs) == 0 && !idle {
			if !send(w, "idle", struct{}{}) {
				return
			}
			wrote = true
		}
		idle = len(runs) == 0
		if !wrote && time.Since(lastBeat) >= 15*time.Second {
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			wrote = true
		}
		if wrote {
			lastBeat = time.Now()
			if err := rc.Flush(); err != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-limit.C:
			return
		case <-tick.C:
		}
	}
}

func progressEvent(p store.RunProgress) any {
	return map[string]any{"run": p.RunID, "status": p.Status, "pages": p.Pages, "links": p.Links,
		"checked": p.Checked, "broken": p.Broken, "findings": p.Findings}
}

// send writes one event; its data is JSON, which never holds a newline.
func send(w http.ResponseWriter, event string, data any) bool {
	b, err := json.Marshal(data)
	if err != nil {
		return false
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
	return err == nil
}
