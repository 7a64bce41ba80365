package crawltest

import "maps"

// AllHits returns how many times each path (with its query, if any) was
// requested so far: a snapshot, for comparing requests before and after.
func (s *Site) AllHits() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.hits)
}
