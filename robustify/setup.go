package robustify

import (
	"fmt"
	"io"

	"github.com/linkrot/linkrot/archives/memento"
	"github.com/linkrot/linkrot/httpx"
)

// ArchiveConfig names the archives linkrot robustify asks and how.
type ArchiveConfig struct {
	// Specs are --archive values (memento.ParseArchive); none: the
	// default archives. Archives given here may be on private addresses.
	Specs []string
	// AllowPrivate allows any archive on loopback or private addresses.
	AllowPrivate bool
	// TimeMaps: see LookupOptions.
	TimeMaps bool
	// Save asks an archive to capture targets without any memento, with
	// SaveAuth (Save Page Now 2 keys).
	Save     bool
	SaveAuth string
}

// Apply sets o's Lookup, Verify and, with Save, Save to ask the archives
// of c through one client. The returned function releases its transport
// once the run is over. A bad spec is an error naming --archive.
func (c ArchiveConfig) Apply(o *Options) (release func(), err error) {
	list := memento.Defaults()
	var private []string
	if len(c.Specs) > 0 {
		list = nil
		for _, s := range c.Specs {
			a, err := memento.ParseArchive(s)
			if err != nil {
				return nil, fmt.Errorf("--archive: %w", err)
			}
			list = append(list, a)
			private = append(private, a.TimeGate, a.TimeMap, a.Save)
		}
	}
	rt, closeRT := httpx.NewTransportAllowing(httpx.Options{AllowPrivate: c.AllowPrivate}, private)
	client := memento.NewClient(memento.Options{Archives: list, Transport: rt})
	o.Lookup = ArchiveLookupWith(client, list, LookupOptions{TimeMaps: c.TimeMaps})
	o.Verify = ArchiveVerify(client)
	if c.Save {
		o.Save = ArchiveSave(client, list, memento.SaveOptions{Auth: c.SaveAuth})
	}
	return closeRT, nil
}

// WriteText writes a run for a person: with dryRun the unified diff of
// every change on out; on notes each link skipped or broken as
// file:line, each file skipped, and the totals.
func (r *Result) WriteText(out, notes io.Writer, dryRun bool) {
	if dryRun {
		for _, f := range r.Files {
			fmt.Fprint(out, f.Diff)
		}
	}
	for _, l := range r.Links {
		if l.Action == ActionSkipped || l.Action == ActionBroken {
			fmt.Fprintf(notes, "%s:%d: %s %s: %s\n", l.File, l.Line, l.Action, l.Href, l.Reason)
		}
	}
	for _, f := range r.Files {
		if f.Skipped != "" {
			fmt.Fprintf(notes, "%s: skipped: %s\n", f.Path, f.Skipped)
		}
	}
	changed := 0
	for _, f := range r.Files {
		if f.Changed {
			changed++
		}
	}
	verb := "changed"
	if dryRun {
		verb = "would change"
	}
	fmt.Fprintf(notes, "robustify: %d files, %d %s; links: %d added, %d saved, %d audited, %d broken, %d fixed, %d skipped\n",
		len(r.Files), changed, verb, r.Count(ActionAdded), r.Count(ActionSaved), r.Count(ActionAudited),
		r.Count(ActionBroken), r.Count(ActionFixed), r.Count(ActionSkipped))
}
