package audit

import "strings"

// dirSeedSep joins a directory run's directory and base URL in its stored
// seed (DirectorySeed, SeedURL).
const dirSeedSep = " as "

// DirectorySeed is the seed a directory run stores: "DIR as BASE", the
// directory and the URL it is served as. Every run database holds this
// form for its directory runs, so it is kept; SeedURL is its one reader.
func DirectorySeed(dir, base string) string { return dir + dirSeedSep + base }

// SeedURL returns the URL a stored seed stands for: the seed itself, or
// the base URL of a directory run's "DIR as BASE" seed (DirectorySeed).
// It is the one place that reads that stored form: everything that needs
// a run's audited site from its seeds goes through it (Run.SeedURLs).
func SeedURL(seed string) string {
	if _, base, ok := strings.Cut(seed, dirSeedSep); ok {
		return base
	}
	return seed
}

// SeedURLs returns the URLs of the run's seeds (SeedURL of each): the
// audited site(s).
func (r *Run) SeedURLs() []string {
	out := make([]string, len(r.Seeds))
	for i, s := range r.Seeds {
		out[i] = SeedURL(s)
	}
	return out
}
