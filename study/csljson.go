package study

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CSL-JSON (the Citation Style Language's data format, which Zotero,
// Mendeley and Pandoc export) is an array of items. From an item: URL,
// the date cited from accessed, else issued; id (string or number);
// title; group from a key named group. A CSL date is
// {"date-parts": [[y, m, d]]} (month and day optional, parts as numbers
// or strings; only the first part of a range counts), or {"raw": ...} or
// {"literal": ...} holding a date ParseCitedAt reads.

func parseCSLJSON(b []byte, in *Input) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	lineAt := func(off int64) int {
		if off > int64(len(b)) {
			off = int64(len(b))
		}
		return 1 + bytes.Count(b[:off], []byte("\n"))
	}
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('[') {
		in.Errors = append(in.Errors, RowError{Line: 1, Reason: "CSL-JSON: not a JSON array of items"})
		return
	}
	for dec.More() {
		off := dec.InputOffset()
		// The item starts after the separator and white space.
		for off < int64(len(b)) && strings.IndexByte(", \t\r\n", b[off]) >= 0 {
			off++
		}
		line := lineAt(off)
		var item map[string]json.RawMessage
		if err := dec.Decode(&item); err != nil {
			if _, isType := err.(*json.UnmarshalTypeError); isType {
				in.Errors = append(in.Errors, RowError{Line: line, Reason: "CSL-JSON: an item is not an object"})
				continue
			}
			// Malformed JSON: nothing after it can be trusted.
			in.Errors = append(in.Errors, RowError{Line: line, Reason: "CSL-JSON: " + err.Error() + " (the rest of the file is skipped)"})
			return
		}
		ref, err := cslReference(line, item)
		if err != nil {
			in.Errors = append(in.Errors, RowError{Line: line, Reason: err.Error()})
			continue
		}
		in.References = append(in.References, ref)
	}
	if _, err := dec.Token(); err != nil {
		in.Errors = append(in.Errors, RowError{Line: lineAt(dec.InputOffset()), Reason: "CSL-JSON: array not closed"})
	}
}

func cslReference(line int, item map[string]json.RawMessage) (Reference, error) {
	str := func(k string) (string, error) {
		v, ok := item[k]
		if !ok {
			return "", nil
		}
		s, err := jsonScalar(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", k, err)
		}
		return s, nil
	}
	id, err := str("id")
	if err != nil {
		return Reference{}, err
	}
	u, err := str("URL")
	if err != nil {
		return Reference{}, err
	}
	title, err := str("title")
	if err != nil {
		return Reference{}, err
	}
	group, err := str("group")
	if err != nil {
		return Reference{}, err
	}
	if _, err := checkURL(u); err != nil {
		return Reference{}, fmt.Errorf("URL: %w", err)
	}
	var at CitedAt
	switch {
	case item["accessed"] != nil && string(item["accessed"]) != "null":
		at, err = cslDate(item["accessed"])
		if err != nil {
			return Reference{}, fmt.Errorf("accessed: %w", err)
		}
	case item["issued"] != nil && string(item["issued"]) != "null":
		at, err = cslDate(item["issued"])
		if err != nil {
			return Reference{}, fmt.Errorf("issued: %w", err)
		}
	default:
		return Reference{}, fmt.Errorf("no accessed or issued date")
	}
	return Reference{Line: line, URL: strings.TrimSpace(u), CitedAt: at, ID: clean(id), Group: clean(group), Title: clean(title)}, nil
}

func cslDate(raw json.RawMessage) (CitedAt, error) {
	var d struct {
		DateParts [][]json.RawMessage `json:"date-parts"`
		Raw       string              `json:"raw"`
		Literal   string              `json:"literal"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return CitedAt{}, fmt.Errorf("not a CSL date object: %w", err)
	}
	if len(d.DateParts) > 0 && len(d.DateParts[0]) > 0 {
		parts := d.DateParts[0]
		if len(parts) > 3 {
			return CitedAt{}, fmt.Errorf("date-parts has %d parts", len(parts))
		}
		var ymd [3]int
		for i, p := range parts {
			s, err := jsonScalar(p)
			if err != nil {
				return CitedAt{}, fmt.Errorf("date-parts: %w", err)
			}
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return CitedAt{}, fmt.Errorf("date-parts: %q is not a number", short(s))
			}
			ymd[i] = n
		}
		return datePartsAt(ymd[0], ymd[1], ymd[2])
	}
	if d.Raw != "" {
		return ParseCitedAt(d.Raw)
	}
	if d.Literal != "" {
		return ParseCitedAt(d.Literal)
	}
	return CitedAt{}, fmt.Errorf("neither date-parts, raw nor literal")
}
