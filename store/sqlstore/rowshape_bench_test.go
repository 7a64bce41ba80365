package sqlstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// BenchmarkLinkRowShapes measures what storing a documentation tree's link
// occurrences costs SQLite in two shapes, in the same database: "rows",
// one row per occurrence in links, through the writer's own multi-row
// statement (every index, constraint and foreign key of the schema), and
// "compact", the shape issue 26 names: one row per page holding its
// occurrences (target by ID, position, text, flags) in a blob, plus one
// row per distinct (target, run, page) so that a target's pages stay
// found by an index. Each op stores the occurrences of 20 pages shaped
// like the python3.11-doc tree's (330 a page on 58 targets, most with a
// fragment) in one transaction; ns/link is the figure to compare. The compact shape is not the schema: this benchmark
// is the measurement that decides whether to move the links' readers onto
// it (docs/performance.md).
func BenchmarkLinkRowShapes(b *testing.B) {
	const perBatch = 20
	ctx := context.Background()
	db := MustOpen(b)
	runID := mustCreateRun(b, db)
	// The pages and targets the links point at, stored once
	// (docsBenchPages: 600 pages of the site as targets).
	pages := docsBenchPages(0, perBatch)
	if err := db.SaveCrawl(ctx, runID, pages, nil); err != nil {
		b.Fatal(err)
	}
	targets := map[string]int64{}
	pageIDs := map[string]int64{}
	for _, q := range []struct {
		sql string
		m   map[string]int64
	}{{`SELECT url, id FROM targets`, targets}, {`SELECT url, id FROM pages`, pageIDs}} {
		rows, err := db.read.Query(q.sql)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var (
				u  string
				id int64
			)
			if err := rows.Scan(&u, &id); err != nil {
				b.Fatal(err)
			}
			q.m[u] = id
		}
		rows.Close()
	}
	type occ struct {
		target       int64
		text, frag   string
		line, column int
		hash         string
	}
	// The occurrences of 20 pages shaped like the python3.11-doc tree's
	// (176,234 occurrences on 528 pages, 30,954 distinct page and target
	// pairs, 140,018 with a fragment): 330 a page, on 58 targets of the
	// site, four in five with a fragment.
	var siteTargets []int64
	for u, id := range targets {
		if strings.Contains(u, "/library/") {
			siteTargets = append(siteTargets, id)
		}
	}
	slices.Sort(siteTargets)
	rng := rand.New(rand.NewPCG(26, 1))
	batch := make(map[int64][]occ) // by page ID
	for _, p := range pages {
		id := pageIDs[p.URL]
		mine := make([]int64, 58)
		for k := range mine {
			mine[k] = siteTargets[rng.IntN(len(siteTargets))]
		}
		for j := range 330 {
			o := occ{target: mine[rng.IntN(len(mine))], text: fmt.Sprintf("section %d", j), line: 40 + j, column: 9,
				hash: fmt.Sprintf("%032x", rng.Uint64())}
			if rng.IntN(5) != 0 {
				o.frag = fmt.Sprintf("module-%d", rng.IntN(200))
			}
			batch[id] = append(batch[id], o)
		}
	}
	var op int // numbers the ops across the benchmark's calls (new ords each)

	b.Run("rows", func(b *testing.B) {
		const chunk = 64
		var n int
		for i := 0; i < b.N; i++ {
			op++
			tx, err := db.write.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			stmt, err := tx.PrepareContext(ctx, insertPlainLinksSQL(chunk))
			if err != nil {
				b.Fatal(err)
			}
			for pageID, links := range batch {
				for lo := 0; lo+chunk <= len(links); lo += chunk {
					args := make([]any, 0, chunk*16)
					for j, o := range links[lo : lo+chunk] {
						ord := op*100_000 + lo + j // a new occurrence each op
						args = append(args, pageID, runID, ord, "a", "href", "", "", o.target, o.text, "", 0, o.frag,
							formHrefTarget|formRawHref, o.line, o.column, o.hash)
					}
					if _, err := stmt.ExecContext(ctx, args...); err != nil {
						b.Fatal(err)
					}
					n += chunk
				}
			}
			stmt.Close()
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/link")
	})

	created := false
	b.Run("compact", func(b *testing.B) {
		for _, ddl := range []string{
			`CREATE TABLE bench_page_links (page_id INTEGER NOT NULL REFERENCES pages (id), op INTEGER NOT NULL,
				run_id INTEGER NOT NULL REFERENCES runs (id), n INTEGER NOT NULL, data BLOB NOT NULL,
				PRIMARY KEY (page_id, op)) STRICT`,
			`CREATE TABLE bench_link_targets (target_id INTEGER NOT NULL REFERENCES targets (id), run_id INTEGER NOT NULL,
				page_id INTEGER NOT NULL, op INTEGER NOT NULL, PRIMARY KEY (target_id, run_id, page_id, op)) STRICT, WITHOUT ROWID`,
		} {
			if created {
				break
			}
			if _, err := db.write.ExecContext(ctx, ddl); err != nil {
				b.Fatal(err)
			}
		}
		created = true
		var n int
		for i := 0; i < b.N; i++ {
			op++
			tx, err := db.write.BeginTx(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			ins, err := tx.PrepareContext(ctx, `INSERT INTO bench_page_links VALUES (?, ?, ?, ?, ?)`)
			if err != nil {
				b.Fatal(err)
			}
			pair, err := tx.PrepareContext(ctx, `INSERT INTO bench_link_targets VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING`)
			if err != nil {
				b.Fatal(err)
			}
			for pageID, links := range batch {
				var blob []byte
				seen := map[int64]bool{}
				for _, o := range links {
					blob = binary.AppendUvarint(blob, uint64(o.target))
					blob = binary.AppendUvarint(blob, uint64(o.line))
					blob = binary.AppendUvarint(blob, uint64(o.column))
					for _, s := range []string{o.text, o.frag, o.hash} {
						blob = binary.AppendUvarint(blob, uint64(len(s)))
						blob = append(blob, s...)
					}
					seen[o.target] = true
				}
				if _, err := ins.ExecContext(ctx, pageID, op, runID, len(links), blob); err != nil {
					b.Fatal(err)
				}
				for t := range seen {
					if _, err := pair.ExecContext(ctx, t, runID, pageID, op); err != nil {
						b.Fatal(err)
					}
				}
				n += len(links)
			}
			ins.Close()
			pair.Close()
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/link")
	})
}
