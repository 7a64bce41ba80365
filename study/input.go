package study

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Reference is one citation of a URL: the unit of a study.
type Reference struct {
	// Line is where the reference starts in its input (1-based).
	Line int
	// URL is the cited URL, an absolute http or https URL.
	URL string
	// CitedAt is when the reference was made.
	CitedAt CitedAt
	// ID names the citing work (a DOI, a citation key); Group is a
	// journal, a court, a venue; Title is the cited work's title. All
	// optional.
	ID, Group, Title string
}

// RowError is a malformed row or entry of the input: skipped and counted,
// the reader goes on.
type RowError struct {
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (e RowError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Format is an input format.
type Format string

// Input formats.
const (
	FormatCSV     Format = "csv"
	FormatJSONL   Format = "jsonl"
	FormatBibTeX  Format = "bibtex"
	FormatCSLJSON Format = "csl-json"
)

// Input is a parsed reference list.
type Input struct {
	// Name is the file name the input came from.
	Name   string
	Format Format
	// Digest is the SHA-256 of the input's bytes, hex.
	Digest     string
	References []Reference
	// Errors are the malformed rows, in input order.
	Errors []RowError
}

// ReadFile reads a reference list from a file (Read).
func ReadFile(path string) (*Input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read references: %w", err)
	}
	return Parse(b, filepath.Base(path), "")
}

// Read reads a whole reference list from r; name (a file name) helps
// detect its format (DetectFormat).
func Read(r io.Reader, name string) (*Input, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read references: %w", err)
	}
	return Parse(b, name, "")
}

// Parse parses a reference list in format f, or in the format
// DetectFormat finds when f is "". Malformed rows go to Input.Errors; the
// error is for input that cannot be read at all.
func Parse(b []byte, name string, f Format) (*Input, error) {
	if f == "" {
		f = DetectFormat(name, b)
	}
	sum := sha256.Sum256(b)
	in := &Input{Name: name, Format: f, Digest: hex.EncodeToString(sum[:])}
	b = bytes.TrimPrefix(b, []byte("\ufeff"))
	var err error
	switch f {
	case FormatCSV:
		err = parseCSV(b, in)
	case FormatJSONL:
		parseJSONL(b, in)
	case FormatBibTeX:
		parseBibTeX(b, in)
	case FormatCSLJSON:
		parseCSLJSON(b, in)
	default:
		return nil, fmt.Errorf("unknown reference format %q", f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return in, nil
}

// DetectFormat tells the format from the file name's extension (.csv,
// .jsonl/.ndjson, .bib/.bibtex, .json), and for .json and unknown
// extensions from the content: a JSON array is CSL-JSON, a JSON object a
// line of JSON Lines, an @ (or a % comment) starts BibTeX, anything else
// is CSV.
func DetectFormat(name string, content []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv", ".tsv":
		return FormatCSV
	case ".jsonl", ".ndjson":
		return FormatJSONL
	case ".bib", ".bibtex":
		return FormatBibTeX
	}
	c := bytes.TrimLeft(bytes.TrimPrefix(content, []byte("\ufeff")), " \t\r\n")
	switch {
	case len(c) == 0:
		return FormatCSV
	case c[0] == '[':
		return FormatCSLJSON
	case c[0] == '{':
		return FormatJSONL
	case c[0] == '@' || c[0] == '%':
		return FormatBibTeX
	}
	return FormatCSV
}

// newReference validates the fields of one row into a Reference.
func newReference(line int, rawURL, citedAt, id, group, title string) (Reference, error) {
	u, err := checkURL(rawURL)
	if err != nil {
		return Reference{}, err
	}
	if strings.TrimSpace(citedAt) == "" {
		return Reference{}, errors.New("cited_at is missing")
	}
	at, err := ParseCitedAt(citedAt)
	if err != nil {
		return Reference{}, fmt.Errorf("cited_at: %w", err)
	}
	return Reference{Line: line, URL: u, CitedAt: at, ID: clean(id), Group: clean(group), Title: clean(title)}, nil
}

// checkURL accepts an absolute http or https URL with a host.
func checkURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", errors.New("url is missing")
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("url %q does not parse", short(s))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("url %q is not an absolute http(s) URL", short(s))
	}
	return s, nil
}

// clean collapses white space (line breaks of a wrapped BibTeX field).
func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// csvColumns are the CSV header names the reader knows.
var csvColumns = []string{"url", "cited_at", "id", "group", "title"}

// parseCSV reads CSV with a header row. The delimiter is the one of comma,
// semicolon (spreadsheets in locales with a decimal comma) and tab that
// the header line has most of, comma on a tie.
func parseCSV(b []byte, in *Input) error {
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = -1
	r.Comma = csvDelimiter(b)
	header, err := r.Read()
	if err == io.EOF {
		return errors.New("empty CSV: no header row")
	}
	if err != nil {
		return fmt.Errorf("CSV header: %w", err)
	}
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if _, dup := col[h]; !dup {
			col[h] = i
		}
	}
	for _, need := range []string{"url", "cited_at"} {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("CSV header has no %q column (it needs url and cited_at; id, group and title are optional)", need)
		}
	}
	field := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	lastOffset := r.InputOffset()
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return fmt.Errorf("CSV: %w", err)
			}
			in.Errors = append(in.Errors, RowError{Line: pe.StartLine, Reason: "CSV: " + pe.Err.Error()})
			if r.InputOffset() == lastOffset {
				return nil
			}
			lastOffset = r.InputOffset()
			continue
		}
		lastOffset = r.InputOffset()
		line, _ := r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		ref, err := newReference(line, field(rec, "url"), field(rec, "cited_at"), field(rec, "id"), field(rec, "group"), field(rec, "title"))
		if err != nil {
			in.Errors = append(in.Errors, RowError{Line: line, Reason: err.Error()})
			continue
		}
		in.References = append(in.References, ref)
	}
}

func csvDelimiter(b []byte) rune {
	header := b
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		header = b[:i]
	}
	best, n := ',', bytes.Count(header, []byte(","))
	for _, c := range []rune{';', '\t'} {
		if k := bytes.Count(header, []byte(string(c))); k > n {
			best, n = c, k
		}
	}
	return best
}

// parseJSONL reads one JSON object a line; keys are matched without
// regard to case, other keys are ignored, blank lines skipped.
func parseJSONL(b []byte, in *Input) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(text, &obj); err != nil {
			in.Errors = append(in.Errors, RowError{Line: line, Reason: "not a JSON object: " + err.Error()})
			continue
		}
		fields := map[string]string{}
		bad := ""
		// Keys in sorted order, so that of "URL" and "url" in one object
		// the lower-case one wins, every time.
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, name := range names {
			k, v := strings.ToLower(name), obj[name]
			if !known(k) {
				continue
			}
			s, err := jsonScalar(v)
			if err != nil {
				bad = fmt.Sprintf("%s: %v", k, err)
				break
			}
			fields[k] = s
		}
		if bad != "" {
			in.Errors = append(in.Errors, RowError{Line: line, Reason: bad})
			continue
		}
		ref, err := newReference(line, fields["url"], fields["cited_at"], fields["id"], fields["group"], fields["title"])
		if err != nil {
			in.Errors = append(in.Errors, RowError{Line: line, Reason: err.Error()})
			continue
		}
		in.References = append(in.References, ref)
	}
	if err := sc.Err(); err != nil {
		in.Errors = append(in.Errors, RowError{Line: line + 1, Reason: "line too long: " + err.Error()})
	}
}

func known(k string) bool {
	for _, c := range csvColumns {
		if c == k {
			return true
		}
	}
	return false
}

// jsonScalar turns a JSON string, number or null into a string.
func jsonScalar(v json.RawMessage) (string, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return "", err
	}
	switch x := x.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	}
	return "", errors.New("not a string or a number")
}
