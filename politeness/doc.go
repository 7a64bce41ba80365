// Package politeness is the per-host budget of a linkrot run: one
// Scheduler, shared by the crawler, the live checker and the archive
// client, decides when a request to a host (or to an archive's pool of
// endpoints) may start, and learns from every answer how fast that host
// wants to be asked.
//
// # Keys
//
// A key is what one budget covers: the lower-cased host[:port] of a URL
// as the URL model (package urls) writes it (Key), or any name a caller chooses for
// a pool of endpoints that share one limit (an archive's API, for
// instance). Every request starts with Acquire or TryAcquire on its key
// and ends with Slot.Release, which feeds the answer back; Transport does
// both around an http.RoundTripper.
//
// # What bounds a key
//
// A request to a key starts only when all of these allow it:
//
//   - PerHost: fewer than the key's current limit in flight. The limit
//     starts at Options.PerHost (or a matching politeness.HostRule) and is
//     adapted by AIMD, below.
//   - Spacing: Options.Delay (or the rule's) between two starts; a
//     robots.txt Crawl-delay (SetCrawlDelay) means one request at a time,
//     starts at least that far apart; a learned rate (below).
//   - A token bucket set with SetBudget: PerMinute tokens a minute, Burst
//     at most, kept Margin (default defaultMargin, 20%) below the published
//     limit so that clock skew and the requests of other clients of the
//     same address do not push the pool over it.
//   - Pauses: a 429 or 503 answer with Retry-After (RFC 9110 section
//     10.2.3: delta-seconds or an HTTP-date) pauses the key until that
//     time for every user of the Scheduler, queued requests included. A
//     429 without Retry-After pauses it DefaultPause, doubling with each
//     further 429 in a row (capped at MaxRetryWait). A server that
//     volunteers its quota is believed: RateLimit-Remaining and
//     RateLimit-Reset (IETF draft-ietf-httpapi-ratelimit-headers, its
//     earlier separate fields, its combined "RateLimit: limit=, remaining=,
//     reset=" form and its structured "RateLimit: "name";r=;t=" form) and
//     the common X-RateLimit-Remaining / X-RateLimit-Reset (delta seconds
//     or a Unix time, as GitHub sends) cap the starts until the reset, and
//     a remaining of 0 pauses the key until then.
//
// # The adaptive controller
//
// The concurrency limit of a key follows TCP's additive-increase,
// multiplicative-decrease rule (Jacobson 1988; Chiu and Jain 1989; RFC
// 5681): a 429 or 503 halves it, floor 1, at most once per round trip (a
// refusal counts only if its request started after the previous cut, so a
// burst of concurrent refusals from one wave is one signal, like the
// losses of one TCP window), and every limit successes in a row add one,
// up to the ceiling. Concurrency alone does not bound a rate when answers
// come back in a millisecond, so a key that refused a request also gets a
// start rate, in the spirit of Scrapy's AutoThrottle (which adapts a
// download delay to the server): at each cut it is set to the rate the
// server accepted since the previous cut (successes over elapsed time,
// pauses included), or halved when there is no such measure, and then
// grows additively, by a tenth of the rate set at the cut per second,
// until the next refusal. A key that never refuses anything is never
// slowed.
//
// Retry-After does not say whether it covers the client or only the
// resource asked for (RFC 6585 section 4 leaves the counting to the
// server). The first refusal is taken to cover the whole key. When the
// answers to requests that were already in flight when a key refused
// one are almost all successes (at least scopeEvidence of them, at most
// one refusal in eight, and refusals at most one answer in eight
// overall), the server is limiting resources, not this client: its
// refusals then pause only the request they answer (Slot.RetryNotBefore
// says until when) and do not cut the key. A token bucket or a per-client
// quota refuses everything after it runs dry and so never looks like
// that; the key stays paused as a whole.
//
// # Long windows
//
// A window longer than Options.MaxRetryWait (a Retry-After, or a RateLimit
// reset with nothing remaining) is more than anyone waits for. When the
// answer names its resource (Outcome.Resource), the window is that
// resource's first: Slot.RetryNotBefore is its end, the resource is
// remembered (RetryAt; a bounded number per key) and not asked for again
// inside it, and the caller records it rate-limited with the time to
// retry. Whether it also covers the key is decided from the evidence
// (decideLong):
//
//   - With no evidence yet, the key pauses for MaxRetryWait (the longest
//     pause accepted) and then takes one request at a time. The first
//     answer to a request started after the pause tells: a success means
//     the window covered its resource (further long windows then cover
//     theirs, and the key goes on at once); a long window on another
//     resource means the limit covers the key.
//   - Refusals seen to cover single resources (the controller's scope
//     evidence above), or a success after an earlier long window's pause,
//     make a long window cover its resource at once, unless it is the
//     second in a row with no success between: the scope is then unknown
//     again.
//   - Long windows of requests that were in flight together count once.
//   - An answer that does not name its resource (an archive's pool, for
//     instance) can only be read as covering the key.
//
// # Giving up
//
// A key is given up when a long window covers it (above), or after
// Options.GiveUpStreak refusals (429, or 503 with Retry-After) in a row
// with no success in between, counting one refusal per round trip as for
// the cut. A 503 without Retry-After cuts the limit but never gives a key
// up: a site that answers 503 to everything is broken, not busy. Acquire
// then returns an error wrapping ErrGivenUp with the reason. Callers try
// the key's remaining work once more at the end of their run (Reprieve)
// and record what still fails as rate-limited: not checked, never broken.
//
// A kept key (Keep: the audited site's own) is never given up: a long
// window that covers it pauses it until the window's end, a refusal
// streak pauses it for MaxRetryWait, and its requests wait (State.Waiting
// says why; Waiting lists the kept keys paused now).
//
// A Scheduler is safe for concurrent use. It starts no goroutines; its
// memory per key is bounded (no per-request history is kept; at most
// 16384 resource windows).
package politeness
