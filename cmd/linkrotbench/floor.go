package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/html"
	_ "modernc.org/sqlite" // the driver "sqlite", as store/sqlite uses it
)

// floorReps is how many times each part of the floor runs; the smallest
// CPU is kept.
const floorReps = 3

// floorBatch is the pages stored in one transaction (linkrot's batch).
const floorBatch = 200

// floorRowsPerInsert is the most rows one INSERT statement carries.
const floorRowsPerInsert = 100

// sitePage is one HTML page of the site as the floor's crawl got it.
type sitePage struct {
	url  *url.URL
	body []byte
}

// sitePages crawls the seed as the plain checker does and returns the
// body of every page of the site served as text/html.
func sitePages(seed *url.URL, workers, perHost int) []sitePage {
	var (
		mu    sync.Mutex
		pages []sitePage
	)
	client := newClient(perHost)
	crawl(client, seed, workers, func(u *url.URL, body []byte) {
		mu.Lock()
		pages = append(pages, sitePage{u, body})
		mu.Unlock()
	})
	client.CloseIdleConnections()
	return pages
}

// cpuSpread is the CPU of one part of the floor over its repetitions.
type cpuSpread struct{ min, max time.Duration }

// floorParts is what the floor measured on a site's pages.
type floorParts struct {
	tok, tree, store cpuSpread
	withTree         bool // tree measured (-floor-tree)
	bodies           int  // pages the plain checker extracted
	pages            int  // of them, pages of distinct URLs (after redirects)
	links            int  // link rows stored
	targets          int  // targets stored
	htmlBytes        int64
}

// measureFloor times, in this process, the plain checker's extraction of
// every page it extracted (tok), with withTree html.Parse of every page
// (tree), and storing the pages and their links in a fresh SQLite file
// under dir (store), each floorReps times. The plain checker extracts a
// page again when it reaches it under a second URL that redirects to it
// (a directory's "index.html" and "/"); tree and store take each page
// once, as linkrot would.
func measureFloor(all []sitePage, dir string, withTree bool) (floorParts, error) {
	f := floorParts{bodies: len(all), withTree: withTree}
	var pages []sitePage
	seen := map[string]bool{}
	for _, p := range all {
		if u := withoutFragment(p.url); !seen[u] {
			seen[u] = true
			pages = append(pages, p)
			f.htmlBytes += int64(len(p.body))
		}
	}
	f.pages = len(pages)
	var err error
	f.tok, err = minCPU(func() error {
		for _, p := range all {
			extract(bytes.NewReader(p.body), p.url)
		}
		return nil
	})
	if err != nil {
		return f, err
	}
	if withTree {
		f.tree, err = minCPU(func() error {
			for _, p := range pages {
				if _, err := html.Parse(bytes.NewReader(p.body)); err != nil {
					return fmt.Errorf("parse %s: %w", p.url, err)
				}
			}
			return nil
		})
		if err != nil {
			return f, err
		}
	}

	// The rows to store, untimed: each page's URL and the absolute URLs of
	// its links, fragment dropped, as the tokenizer found them.
	rows := make([]pageRow, len(pages))
	for i, p := range pages {
		rows[i].url = withoutFragment(p.url)
		for _, l := range extract(bytes.NewReader(p.body), p.url) {
			rows[i].links = append(rows[i].links, withoutFragment(l))
		}
		f.links += len(rows[i].links)
	}
	rep := 0
	f.store, err = minCPUThen(func() error {
		rep++
		return storeRows(filepath.Join(dir, fmt.Sprintf("floor-%d.db", rep)), rows)
	}, func() error {
		path := filepath.Join(dir, fmt.Sprintf("floor-%d.db", rep))
		defer removeDB(path)
		n, err := countBack(path, rows)
		f.targets = n
		return err
	})
	return f, err
}

// pageRow is one page to store and the targets of its links.
type pageRow struct {
	url   string
	links []string
}

func withoutFragment(u *url.URL) string {
	c := *u
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// cpuTime is the CPU (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(fmt.Sprintf("getrusage: %v", err))
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// minCPU runs f floorReps times and returns the spread of its CPU; each
// run starts after a collection, so that it pays only for its own garbage.
func minCPU(f func() error) (cpuSpread, error) {
	return minCPUThen(f, nil)
}

// minCPUThen is minCPU with after run, untimed, after each run of f.
func minCPUThen(f, after func() error) (cpuSpread, error) {
	var s cpuSpread
	for i := range floorReps {
		runtime.GC()
		start := cpuTime()
		err := f()
		d := cpuTime() - start
		if err != nil {
			return s, err
		}
		if after != nil {
			if err := after(); err != nil {
				return s, err
			}
		}
		if i == 0 || d < s.min {
			s.min = d
		}
		s.max = max(s.max, d)
	}
	return s, nil
}

// floorDSN is the driver name of the SQLite file at path with linkrot's
// pragmas (store/sqlite's dsn).
func floorDSN(path string) string {
	uri := "file:" + strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23").Replace(filepath.ToSlash(path))
	return uri + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate"
}

const floorSchema = `
CREATE TABLE targets(id INTEGER PRIMARY KEY, url TEXT NOT NULL UNIQUE);
CREATE TABLE pages(id INTEGER PRIMARY KEY, url TEXT NOT NULL, target_id INTEGER NOT NULL REFERENCES targets(id));
CREATE TABLE links(id INTEGER PRIMARY KEY, page_id INTEGER NOT NULL REFERENCES pages(id), target_id INTEGER NOT NULL REFERENCES targets(id));
`

// storeRows stores the pages and their links in a new SQLite file at
// path: URLs interned in a map (each target inserted once, ids assigned
// here), floorBatch pages a transaction, multi-row INSERTs.
func storeRows(path string, rows []pageRow) (err error) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", floorDSN(path))
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close %s: %w", path, cerr)
		}
	}()
	db.SetMaxOpenConns(1) // statements prepared on the one connection
	if _, err := db.ExecContext(ctx, floorSchema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	ins := &inserter{db: db, stmts: map[string]*sql.Stmt{}}
	defer ins.close()
	ids := map[string]int64{}
	var targetArgs, pageArgs, linkArgs []any
	intern := func(u string) int64 {
		if id, ok := ids[u]; ok {
			return id
		}
		id := int64(len(ids) + 1)
		ids[u] = id
		targetArgs = append(targetArgs, id, u)
		return id
	}
	for start := 0; start < len(rows); start += floorBatch {
		batch := rows[start:min(start+floorBatch, len(rows))]
		targetArgs, pageArgs, linkArgs = targetArgs[:0], pageArgs[:0], linkArgs[:0]
		for i, p := range batch {
			pageID := int64(start + i + 1)
			pageArgs = append(pageArgs, pageID, p.url, intern(p.url))
			for _, l := range p.links {
				linkArgs = append(linkArgs, pageID, intern(l))
			}
		}
		inserts := []struct {
			table string
			cols  int
			args  []any
		}{
			{"targets(id, url)", 2, targetArgs},
			{"pages(id, url, target_id)", 3, pageArgs},
			{"links(page_id, target_id)", 2, linkArgs},
		}
		// Prepared before the transaction, which holds the one connection.
		for _, in := range inserts {
			if err := ins.prepare(ctx, in.table, in.cols, len(in.args)); err != nil {
				return err
			}
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin: %w", err)
		}
		for _, in := range inserts {
			if err := ins.insert(ctx, tx, in.table, in.cols, in.args); err != nil {
				tx.Rollback()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
	}
	return nil
}

// inserter runs multi-row INSERTs through statements prepared once per
// table and row count.
type inserter struct {
	db    *sql.DB
	stmts map[string]*sql.Stmt
}

// rowCounts returns the row counts of the statements that insert rows
// rows: floorRowsPerInsert each, then the rest.
func rowCounts(rows int) (full, rest int) {
	return rows / floorRowsPerInsert, rows % floorRowsPerInsert
}

func stmtKey(table string, n int) string { return fmt.Sprintf("%s/%d", table, n) }

// prepare prepares the statements that insert nargs values into table,
// cols a row, unless prepared before.
func (ins *inserter) prepare(ctx context.Context, table string, cols, nargs int) error {
	full, rest := rowCounts(nargs / cols)
	for _, n := range []int{floorRowsPerInsert * min(full, 1), rest} {
		if n == 0 || ins.stmts[stmtKey(table, n)] != nil {
			continue
		}
		row := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
		q := "INSERT INTO " + table + " VALUES " + strings.TrimSuffix(strings.Repeat(row+",", n), ",")
		stmt, err := ins.db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("prepare insert into %s: %w", table, err)
		}
		ins.stmts[stmtKey(table, n)] = stmt
	}
	return nil
}

// insert inserts args, cols values a row, in statements of at most
// floorRowsPerInsert rows, prepared before by prepare.
func (ins *inserter) insert(ctx context.Context, tx *sql.Tx, table string, cols int, args []any) error {
	for len(args) > 0 {
		n := min(len(args)/cols, floorRowsPerInsert)
		stmt := ins.stmts[stmtKey(table, n)]
		if stmt == nil {
			return fmt.Errorf("insert into %s: no statement of %d rows prepared", table, n)
		}
		if _, err := tx.StmtContext(ctx, stmt).ExecContext(ctx, args[:n*cols]...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
		args = args[n*cols:]
	}
	return nil
}

func (ins *inserter) close() {
	for _, s := range ins.stmts {
		s.Close()
	}
}

// countBack counts the rows stored at path, fails if they are not the
// rows given, and returns the targets.
func countBack(path string, rows []pageRow) (targets int, err error) {
	db, err := sql.Open("sqlite", floorDSN(path))
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	want := map[string]int{"pages": len(rows)}
	urls := map[string]bool{}
	for _, p := range rows {
		urls[p.url] = true
		want["links"] += len(p.links)
		for _, l := range p.links {
			urls[l] = true
		}
	}
	want["targets"] = len(urls)
	for _, table := range []string{"targets", "pages", "links"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			return 0, fmt.Errorf("count %s: %w", table, err)
		}
		if n != want[table] {
			return 0, fmt.Errorf("floor store: %d rows in %s, want %d", n, table, want[table])
		}
	}
	return want["targets"], nil
}

func removeDB(path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
}

// floorCPU is the CPU a run of linkrot must at least use. By default
// (one tokenizer pass per page, issue 26's design) it is the plain
// checker's whole CPU, its own extraction included, plus storing; with
// the tree (the design before, -floor-tree) the plain checker's
// extraction is replaced by one tree per page.
func (f floorParts) floorCPU(plainCPU time.Duration) time.Duration {
	if f.withTree {
		return plainCPU - f.tok.min + f.tree.min + f.store.min
	}
	return plainCPU + f.store.min
}

// floorBeside is what the floor is printed beside: the medians of the
// rounds and the processors.
type floorBeside struct {
	plainCPU, plainWall time.Duration
	muffetWall          time.Duration // 0 without -muffet
	cores               int
}

// floorAllowance is issue 26's bound on linkrot beside the plain checker
// on the generated web: at most 1.5× its wall.
const floorAllowance = 1.5

// print writes the floor, what it includes and leaves out, and its wall
// time on the processors beside the plain checker's (and muffet's)
// median wall time.
func (f floorParts) print(w io.Writer, b floorBeside) {
	floor := f.floorCPU(b.plainCPU)
	wall := time.Duration(int64(floor) / int64(b.cores))
	stored := fmt.Sprintf("storing %s pages, %s link rows, %s targets %.2f s", thousands(f.pages), thousands(f.links), thousands(f.targets), f.store.min.Seconds())
	if f.withTree {
		fmt.Fprintf(w, "floor (-floor-tree: one html.Parse tree per page): plain CPU %.2f s (median) − its extraction %.2f s + one tree per page %.2f s + %s = %.2f CPU-s\n",
			b.plainCPU.Seconds(), f.tok.min.Seconds(), f.tree.min.Seconds(), stored, floor.Seconds())
	} else {
		fmt.Fprintf(w, "floor (one tokenizer pass per page): plain CPU %.2f s (median; its own tokenizer pass, %.2f s, included) + %s = %.2f CPU-s\n",
			b.plainCPU.Seconds(), f.tok.min.Seconds(), stored, floor.Seconds())
	}
	includes := "the plain checker's whole run (its requests and its one tokenizer pass per page)"
	if f.withTree {
		includes = "the plain checker's run less its tokenizer pass, one html.Parse tree per page"
	}
	fmt.Fprintf(w, "       includes: %s, and storing pages and links in a narrow interned schema; leaves out: linkrot's own URL handling, evidence, soft-404 signals, fingerprints, checks rows, history, findings\n", includes)
	allows := time.Duration(floorAllowance * float64(b.plainWall) * float64(b.cores))
	fmt.Fprintf(w, "       on %d processors (runtime.NumCPU) ", b.cores)
	if wall >= b.plainWall {
		fmt.Fprintf(w, "at least %.2f s wall = %.2f× the plain checker's median wall %.2f s", wall.Seconds(), wall.Seconds()/b.plainWall.Seconds(), b.plainWall.Seconds())
	} else {
		fmt.Fprintf(w, "at least %.2f s wall, below the plain checker's median wall %.2f s: the floor is its wall, 1.00×", wall.Seconds(), b.plainWall.Seconds())
	}
	fmt.Fprintf(w, " (%.1f× allows %.2f CPU-s)", floorAllowance, allows.Seconds())
	if b.muffetWall > 0 {
		fmt.Fprintf(w, "; muffet's median wall %.2f s: floor/muffet %.2f×", b.muffetWall.Seconds(), max(wall, b.plainWall).Seconds()/b.muffetWall.Seconds())
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "       parts, smallest CPU of %d (min–max): extraction %.3f s (%.3f–%.3f), ", floorReps, f.tok.min.Seconds(), f.tok.min.Seconds(), f.tok.max.Seconds())
	if f.withTree {
		fmt.Fprintf(w, "tree %.3f s (%.3f–%.3f), ", f.tree.min.Seconds(), f.tree.min.Seconds(), f.tree.max.Seconds())
	}
	fmt.Fprintf(w, "store %.3f s (%.3f–%.3f); %s pages, %.1f MB of HTML; the plain checker extracted %s (%s again under a second URL)\n",
		f.store.min.Seconds(), f.store.min.Seconds(), f.store.max.Seconds(),
		thousands(f.pages), float64(f.htmlBytes)/1e6, thousands(f.bodies), thousands(f.bodies-f.pages))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
