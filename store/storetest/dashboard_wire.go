package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/linkrot/linkrot/audit"
	"github.com/linkrot/linkrot/store"
)

func testDashboardWire_Reads(t *testing.T, open Opener) {
	ctx := context.Background()
	db := open(t)
	run := mustCreateRun(t, db)
	const (
		page   = "https://example.org/a"
		target = "https://old.example/x"
		repl   = "https://new.example/x"
		friend = "https://friend.example/post"
	)
	if c, err := db.WireSummary(ctx); err != nil || c != (store.WireCounts{}) {
		t.Fatalf("empty WireSummary = %+v, %v", c, err)
	}
	at := time.Date(2026, 11, 4, 12, 0, 0, 0, time.UTC)
	reqs := []*audit.WireRequest{
		{ReceivedAt: at, Framing: audit.FramingDraft, Method: audit.WireUNLINKR, Source: page, Target: target, Repl: repl, Client: "a"},
		{ReceivedAt: at.Add(time.Minute), Framing: audit.FramingHTTP, Method: audit.WireUNLINKR, Source: page, Target: target, Client: "b"},
		{ReceivedAt: at.Add(2 * time.Minute), Framing: audit.FramingHTTP, Method: audit.WireLINKMOD, Source: page, Target: target, Client: "c"},
		{ReceivedAt: at.Add(3 * time.Minute), Framing: audit.FramingHTTP, Method: audit.WireLINKMOD, Source: page, Target: "https://other.example/", Client: "d"},
		{ReceivedAt: at.Add(4 * time.Minute), Framing: audit.FramingWebmention, Method: audit.WireWebmention, Source: friend, Target: page, Client: "e"},
	}
	if err := db.EnqueueWire(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	done := at.Add(time.Hour)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.FinishWire(ctx, reqs[0].ID, audit.WireDone, "confirmed", store.WireEffect{Claim: &audit.Claim{RunID: run, Source: page,
		Target: target, Claimant: "a", ClaimedAt: at, Replacement: repl, TargetVerdict: audit.VerdictGone, TargetStatus: 410,
		ReplacementVerdict: audit.VerdictOK, Confirmed: true, Note: "gone"}}, done))
	must(db.FinishWire(ctx, reqs[2].ID, audit.WireDone, "checked", store.WireEffect{LiveChecks: []audit.LiveCheck{
		{Reason: audit.LiveLinkmod, URL: target, Verdict: audit.VerdictOK, Status: 200, Band: audit.BandMinor, CheckedAt: done}}}, done))
	must(db.FinishWire(ctx, reqs[4].ID, audit.WireDone, "stored", store.WireEffect{UpsertBacklink: &audit.Backlink{Source: friend,
		Target: page, Via: "webmention", LinkMod: true, Client: "e", VerifiedAt: done}}, done))

	claims, err := db.TargetClaims(ctx, target, 0)
	must(err)
	if len(claims) != 3 {
		t.Fatalf("TargetClaims = %+v, want 3", claims)
	}
	// Newest first: the LINKMOD, the pending UNLINKR, the recorded one.
	if c := claims[0]; c.Method != audit.WireLINKMOD || c.State != store.ClaimChecked || c.Verdict != audit.VerdictOK || c.Band != audit.BandMinor {
		t.Errorf("LINKMOD claim = %+v", c)
	}
	if c := claims[1]; c.Method != audit.WireUNLINKR || c.State != store.ClaimPending || c.Claimant != "b" || c.Verdict != "" {
		t.Errorf("pending claim = %+v", c)
	}
	if c := claims[2]; c.State != store.ClaimChecked || !c.Confirmed || c.RunID != run || c.Replacement != repl ||
		c.Verdict != audit.VerdictGone || c.ReplacementVerdict != audit.VerdictOK || !c.ReceivedAt.Equal(at) {
		t.Errorf("recorded claim = %+v", c)
	}
	if claims, err := db.TargetClaims(ctx, target, 1); err != nil || len(claims) != 1 {
		t.Errorf("TargetClaims(limit 1) = %d, %v", len(claims), err)
	}
	bl, err := db.PageBacklinks(ctx, page, 0)
	must(err)
	if len(bl) != 1 || bl[0].Source != friend || bl[0].Via != "webmention" || !bl[0].LinkMod || !bl[0].VerifiedAt.Equal(done) {
		t.Errorf("PageBacklinks = %+v", bl)
	}
	if bl, err := db.PageBacklinks(ctx, friend, 0); err != nil || len(bl) != 0 {
		t.Errorf("PageBacklinks(their page) = %+v, %v", bl, err)
	}
	c, err := db.WireSummary(ctx)
	must(err)
	// Pending: the UNLINKR left queued and the other target's LINKMOD.
	if want := (store.WireCounts{Pending: 2, Confirmed: 1, Backlinks: 1}); c != want {
		t.Errorf("WireSummary = %+v, want %+v", c, want)
	}
}
