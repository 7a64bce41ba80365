package sqlstore

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/linkrot/linkrot/audit"
)

func TestStore_SaveCrawlManyQueued(t *testing.T) { forEachBackend(t, testStore_SaveCrawlManyQueued) }

// testStore_SaveCrawlManyQueued: a batch queueing more URLs than one
// statement writes (frontierChunk), with duplicates inside a statement,
// across statements and from an earlier batch, keeps each URL once with
// its first depth.
func testStore_SaveCrawlManyQueued(t *testing.T) {
	ctx := context.Background()
	db := MustOpen(t)
	run := mustCreateRun(t, db)
	u := func(i int) string { return fmt.Sprintf("https://example.org/q/%03d", i) }
	if err := db.SaveCrawl(ctx, run, nil, []audit.FrontierEntry{{URL: u(5), Depth: 9}}); err != nil {
		t.Fatal(err)
	}
	var batch []audit.FrontierEntry
	want := map[string]int{u(5): 9}
	for i := range 3*frontierChunk + 7 {
		batch = append(batch, audit.FrontierEntry{URL: u(i % 150), Depth: i})
		if _, ok := want[u(i%150)]; !ok {
			want[u(i%150)] = i
		}
	}
	batch = append(batch, audit.FrontierEntry{URL: "https://user:s3cret@example.org/seed", Depth: 0})
	want["https://user:***@example.org/seed"] = 0
	if err := db.SaveCrawl(ctx, run, nil, batch); err != nil {
		t.Fatal(err)
	}
	queued, _, err := db.Frontier(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, q := range queued {
		if _, dup := got[q.URL]; dup {
			t.Errorf("%s queued twice", q.URL)
		}
		got[q.URL] = q.Depth
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("queued %d URLs %v\nwant %d %v", len(got), got, len(want), want)
	}
}
