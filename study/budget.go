package study

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ArchiveBudget is an archive asked and how many TimeMap lookups a minute
// its politeness budget allows; 0 means no limit (a local CDX/WARC
// collection).
type ArchiveBudget struct {
	Name      string
	PerMinute float64
}

// Estimate is what the archive budgets imply for a study, printed before
// it starts.
type Estimate struct {
	// Lookups is one TimeMap per distinct URL per archive.
	Lookups int
	// Duration is the wall time of the lookups: archives are asked in
	// parallel, so the slowest archive's share sets it.
	Duration time.Duration
	// Sentence says it for people, with advice when it takes longer than
	// a day.
	Sentence string
}

// EstimateBudget estimates the archive lookups of a study of distinctURLs
// URLs, e.g. "1,800,000 lookups at 24 a minute on the Internet Archive: 52
// days; use a local CDX/WARC collection with --archive-warc or add
// archives".
func EstimateBudget(distinctURLs int, archives []ArchiveBudget) Estimate {
	if distinctURLs < 0 {
		distinctURLs = 0
	}
	var e Estimate
	var parts []string
	for _, a := range archives {
		e.Lookups += distinctURLs
		rate := "with no rate limit"
		if a.PerMinute > 0 {
			rate = "at " + strconv.FormatFloat(a.PerMinute, 'f', -1, 64) + " a minute"
			d := time.Duration(math.Ceil(float64(distinctURLs) / a.PerMinute * float64(time.Minute)))
			if d > e.Duration {
				e.Duration = d
			}
		}
		parts = append(parts, fmt.Sprintf("%s lookups %s on %s", Thousands(distinctURLs), rate, a.Name))
	}
	if len(archives) == 0 {
		e.Sentence = "no archives asked: 0 lookups"
		return e
	}
	e.Sentence = strings.Join(parts, ", ") + ": " + HumanDuration(e.Duration)
	if e.Duration > 24*time.Hour {
		e.Sentence += "; use a local CDX/WARC collection with --archive-warc or add archives"
	}
	return e
}

// Thousands formats n with comma thousands separators.
func Thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// HumanDuration rounds a duration to the unit people plan with: seconds
// under a minute, minutes under two hours, hours under two days, days
// beyond.
func HumanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.FormatInt(n, 10) + " " + unit + "s"
	}
	switch {
	case d <= 0:
		return "no time"
	case d < time.Minute:
		return plural(int64(math.Ceil(d.Seconds())), "second")
	case d < 2*time.Hour:
		return plural(int64(math.Round(d.Minutes())), "minute")
	case d < 48*time.Hour:
		return plural(int64(math.Round(d.Hours())), "hour")
	}
	return plural(int64(math.Round(d.Hours()/24)), "day")
}
