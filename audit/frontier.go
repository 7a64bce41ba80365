package audit

// FrontierEntry is a URL a crawl queued for fetching, at its depth (links
// away from the seeds). The queued entries of a run, together with the
// pages it recorded (its visited URLs), are the crawl's frontier: what an
// interrupted crawl needs to resume.
type FrontierEntry struct {
	URL   string `json:"url"`
	Depth int    `json:"depth"`
}
