package study

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Precision is how much of a citation date is known.
type Precision int

// Precisions of a CitedAt, finest first.
const (
	// Instant: an RFC 3339 date-time.
	Instant Precision = iota
	// Day: YYYY-MM-DD, the whole (UTC) day.
	Day
	// Month: YYYY-MM, the whole month (a BibTeX year with a month, a
	// CSL date-parts of two parts).
	Month
	// Year: YYYY, the whole year (a BibTeX year alone, a CSL date-parts
	// of one part).
	Year
)

// CitedAt is when a reference was made, as an interval of time: an
// instant, or the whole day, month or year the source gives. A year alone
// is not placed on a made-up day (1 January, 1 July): the citation may
// have been made any time that year, so the memento distance is measured
// to the interval (0 for a memento inside it) and the window extends the
// interval on both sides (Nearest). Studies that only know a publication
// year face the same choice; keeping the interval makes the uncertainty
// visible instead of hiding it in a fixed day. The summary's citation year
// is the interval's year either way.
type CitedAt struct {
	// From is the interval's start (UTC), To its end, exclusive (From for
	// an instant).
	From, To  time.Time
	Precision Precision
}

// String formats the date as it was given: RFC 3339, YYYY-MM-DD,
// YYYY-MM or YYYY.
func (c CitedAt) String() string {
	switch c.Precision {
	case Instant:
		return c.From.Format(time.RFC3339)
	case Day:
		return c.From.Format("2006-01-02")
	case Month:
		return c.From.Format("2006-01")
	default:
		return c.From.Format("2006")
	}
}

// Year is the citation year.
func (c CitedAt) Year() int { return c.From.Year() }

// IsZero reports whether the date is unset.
func (c CitedAt) IsZero() bool { return c.From.IsZero() }

// ParseCitedAt parses a citation date: RFC 3339 (an instant), YYYY-MM-DD
// (that UTC day), and, for the dates reference managers export with less
// than a day known, YYYY-MM and YYYY. Years before 1000 are refused (a
// typo, and the zero time.Time would stand for "no date").
func ParseCitedAt(s string) (CitedAt, error) {
	at, err := parseCitedAt(s)
	if err == nil && at.From.Year() < minYear {
		return CitedAt{}, fmt.Errorf("date %q is before the year %d", s, minYear)
	}
	return at, err
}

// minYear is the earliest citation year accepted: a four-digit year (and
// no zero time.Time, which is year 1).
const minYear = 1000

func parseCitedAt(s string) (CitedAt, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return CitedAt{}, fmt.Errorf("empty date")
	}
	if strings.ContainsAny(s, "Tt") {
		t, err := time.Parse(time.RFC3339, strings.ToUpper(s))
		if err != nil {
			return CitedAt{}, fmt.Errorf("date %q is not RFC 3339", s)
		}
		t = t.UTC()
		return CitedAt{From: t, To: t, Precision: Instant}, nil
	}
	parts := strings.Split(s, "-")
	switch {
	case len(parts) == 3 && len(parts[0]) == 4 && len(parts[1]) == 2 && len(parts[2]) == 2:
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return CitedAt{}, fmt.Errorf("date %q is not a valid YYYY-MM-DD", s)
		}
		return CitedAt{From: t, To: t.AddDate(0, 0, 1), Precision: Day}, nil
	case len(parts) == 2 && len(parts[0]) == 4 && len(parts[1]) == 2:
		t, err := time.Parse("2006-01", s)
		if err != nil {
			return CitedAt{}, fmt.Errorf("date %q is not a valid YYYY-MM", s)
		}
		return CitedAt{From: t, To: t.AddDate(0, 1, 0), Precision: Month}, nil
	case len(parts) == 1 && len(s) == 4:
		y, err := strconv.Atoi(s)
		if err != nil || y < 1 {
			return CitedAt{}, fmt.Errorf("date %q is not a year", s)
		}
		return datePartsAt(y, 0, 0)
	}
	return CitedAt{}, fmt.Errorf("date %q is neither YYYY-MM-DD nor RFC 3339 (nor YYYY-MM, YYYY)", s)
}

// datePartsAt builds a CitedAt from a year and an optional month and day
// (0 when unknown), as CSL date-parts and BibTeX year/month give them.
func datePartsAt(y, m, d int) (CitedAt, error) {
	if y < minYear || y > 9999 {
		return CitedAt{}, fmt.Errorf("year %d out of range", y)
	}
	if m == 0 {
		if d != 0 {
			return CitedAt{}, fmt.Errorf("a day without a month")
		}
		t := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		return CitedAt{From: t, To: t.AddDate(1, 0, 0), Precision: Year}, nil
	}
	if m < 1 || m > 12 {
		return CitedAt{}, fmt.Errorf("month %d out of range", m)
	}
	if d == 0 {
		t := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
		return CitedAt{From: t, To: t.AddDate(0, 1, 0), Precision: Month}, nil
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if d < 1 || t.Day() != d {
		return CitedAt{}, fmt.Errorf("day %d out of range for %d-%02d", d, y, m)
	}
	return CitedAt{From: t, To: t.AddDate(0, 0, 1), Precision: Day}, nil
}
