package warc

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/linkrot/linkrot/urls"
)

// cdxjFields is the JSON block of a CDXJ line (pywb/warcio names, and
// linkrot's refers_to fields for revisits).
type cdxjFields struct {
	URL          string `json:"url"`
	Mime         string `json:"mime,omitempty"`
	Status       string `json:"status,omitempty"`
	Digest       string `json:"digest,omitempty"`
	Length       string `json:"length,omitempty"`
	Offset       string `json:"offset"`
	Filename     string `json:"filename"`
	RefersToURL  string `json:"refers_to_uri,omitempty"`
	RefersToDate string `json:"refers_to_date,omitempty"`
}

// maxCDXJLine caps one index line.
const maxCDXJLine = 1 << 20

// readCDXJ reads a CDXJ index ("<urlkey> <timestamp> {json}" lines; lines
// starting with "!" are metadata). Lines that do not parse are returned
// as errors, never a failure.
func readCDXJ(r io.Reader) ([]Entry, []error) {
	var out []Entry
	var bad []error
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxCDXJLine)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "!") {
			continue
		}
		e, err := parseCDXJLine(line)
		if err != nil {
			if len(bad) < 100 {
				bad = append(bad, fmt.Errorf("index line %d: %w", n, err))
			}
			continue
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		bad = append(bad, fmt.Errorf("index line %d: %w", n+1, err))
	}
	return out, bad
}

func parseCDXJLine(line string) (Entry, error) {
	_, rest, ok := strings.Cut(line, " ")
	if !ok {
		return Entry{}, errors.New("no timestamp")
	}
	ts, js, ok := strings.Cut(rest, " ")
	if !ok {
		return Entry{}, errors.New("no JSON block")
	}
	t, err := parseTimestamp(ts)
	if err != nil {
		return Entry{}, err
	}
	var f cdxjFields
	if err := json.Unmarshal([]byte(js), &f); err != nil {
		return Entry{}, fmt.Errorf("JSON block: %w", err)
	}
	if f.URL == "" || f.Filename == "" {
		return Entry{}, errors.New("no url or filename")
	}
	e := Entry{URL: f.URL, Time: t, Mime: f.Mime, Digest: f.Digest, File: f.Filename, RefersToURL: f.RefersToURL}
	if e.Offset, err = strconv.ParseInt(f.Offset, 10, 64); err != nil || e.Offset < 0 {
		return Entry{}, fmt.Errorf("offset %q", f.Offset)
	}
	if f.Length != "" {
		e.Length, _ = strconv.ParseInt(f.Length, 10, 64)
	}
	e.Status = 200
	if f.Status != "" && f.Status != "-" {
		st, err := strconv.Atoi(f.Status)
		if err != nil || st < 100 || st > 999 {
			return Entry{}, fmt.Errorf("status %q", f.Status)
		}
		e.Status = st
	}
	if f.RefersToDate != "" {
		if rt, err := parseTimestamp(f.RefersToDate); err == nil {
			e.RefersToDate = rt
		}
	}
	return e, nil
}

func parseTimestamp(ts string) (time.Time, error) {
	if len(ts) < 4 || len(ts) > 14 {
		return time.Time{}, fmt.Errorf("timestamp %q", ts)
	}
	for _, r := range ts {
		if r < '0' || r > '9' {
			return time.Time{}, fmt.Errorf("timestamp %q", ts)
		}
	}
	full := ts + "00000101000000"[len(ts)-4:]
	t, err := time.Parse("20060102150405", full[:14])
	if err != nil {
		return time.Time{}, fmt.Errorf("timestamp %q: %w", ts, err)
	}
	return t.UTC(), nil
}

// writeCDXJ writes entries as CDXJ lines after the given metadata lines
// ("!..." lines).
func writeCDXJ(w io.Writer, meta []string, entries []Entry) error {
	bw := bufio.NewWriter(w)
	for _, m := range meta {
		fmt.Fprintf(bw, "!%s\n", m)
	}
	for _, e := range entries {
		f := cdxjFields{URL: e.URL, Mime: e.Mime, Status: strconv.Itoa(e.Status), Digest: e.Digest,
			Length: strconv.FormatInt(e.Length, 10), Offset: strconv.FormatInt(e.Offset, 10), Filename: e.File,
			RefersToURL: e.RefersToURL}
		if !e.RefersToDate.IsZero() {
			f.RefersToDate = e.RefersToDate.UTC().Format("20060102150405")
		}
		js, err := json.Marshal(f)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "%s %s %s\n", urlKey(e.URL), e.Time.UTC().Format("20060102150405"), js)
	}
	return bw.Flush()
}

// urlKey is the index's sort key (the normalized URL without scheme; a
// reader of linkrot's indexes keys by the JSON url field, so pywb SURT
// keys in a collection's own index serve as well).
func urlKey(u string) string {
	n, err := urls.NormalizeURL(u)
	if err != nil {
		n = u
	}
	k := strings.NewReplacer(" ", "%20", "\t", "%09", "\n", "%0A", "\r", "%0D", "\f", "%0C", "\v", "%0B").Replace(keyOf(n))
	switch {
	case strings.TrimSpace(k) == "":
		return "-"
	case strings.HasPrefix(k, "!"): // a metadata line
		return "%21" + k[1:]
	}
	return k
}

// index returns the entries of a WARC file or WACZ at path: from a CDXJ
// index next to it (name.cdxj, newer than the file), else from linkrot's
// index in opts.IndexDir when it was built from the file as it is now
// (same size and modification time), else built by scan and kept there.
func (c *Collection) index(path string, opts Options, scan func() ([]Entry, error)) ([]Entry, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("archive-warc: %w", err)
	}
	for _, side := range []string{path + ".cdxj", strings.TrimSuffix(strings.TrimSuffix(path, ".gz"), ".warc") + ".cdxj"} {
		if ss, err := os.Stat(side); err == nil && !ss.ModTime().Before(st.ModTime()) && !strings.HasSuffix(path, ".wacz") {
			if es, ok := c.readIndexFile(side, ""); ok {
				for i := range es {
					es[i].File = filepath.Base(es[i].File)
				}
				return es, nil
			}
		}
	}
	stamp := fmt.Sprintf(`linkrot-index {"source":%q,"size":%d,"mtime":%d}`, path, st.Size(), st.ModTime().UnixNano())
	var kept string
	if opts.IndexDir != "" {
		sum := sha256.Sum256([]byte(path))
		kept = filepath.Join(opts.IndexDir, filepath.Base(path)+"-"+hex.EncodeToString(sum[:6])+".cdxj")
		if es, ok := c.readIndexFile(kept, stamp); ok {
			return es, nil
		}
	}
	entries, err := scan()
	if err != nil {
		return nil, fmt.Errorf("archive-warc %s: %w", path, err)
	}
	if kept != "" {
		if err := writeIndex(kept, stamp, entries); err != nil {
			c.diag(kept, 0, fmt.Errorf("index not kept: %w", err))
		} else {
			c.mu.Lock()
			c.indexes = append(c.indexes, kept)
			c.mu.Unlock()
		}
	}
	return entries, nil
}

// readIndexFile reads an index; with stamp set, only when its first line
// is that stamp (built from the file as it is now).
func (c *Collection) readIndexFile(path, stamp string) ([]Entry, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	br := bufio.NewReader(f)
	if stamp != "" {
		first, err := br.ReadString('\n')
		if err != nil || strings.TrimSuffix(first, "\n") != "!"+stamp {
			return nil, false
		}
	}
	es, bad := readCDXJ(br)
	for _, b := range bad {
		c.diag(path, 0, b)
	}
	c.mu.Lock()
	c.indexes = append(c.indexes, path)
	c.mu.Unlock()
	return es, true
}

func writeIndex(path, stamp string, entries []Entry) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeCDXJ(tmp, []string{stamp}, entries); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
