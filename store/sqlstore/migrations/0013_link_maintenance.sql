-- 0013: link maintenance on the wire (linkrot serve, linkrot notify).
--
-- Conventions are those of 0001 and 0002. Every URL and client string here
-- comes from a notification sent over the internet: stored verbatim, bound
-- as a parameter, escaped wherever it is shown.

-- wire_inbox holds every notification serve accepted (LINK, UNLINK,
-- UNLINKR, LINKMOD from either framing, WEBMENTION, and the dashboard's
-- RECHECK), before and after it was processed: the durable queue of the
-- verifier. A row is inserted when the notification is answered and
-- changes state once, in one transaction with its effect; a row left
-- 'queued' by a stopped serve is processed at the next start.
CREATE TABLE wire_inbox (
	id          INTEGER PRIMARY KEY,
	received_at TEXT    NOT NULL,
	framing     TEXT    NOT NULL CHECK (framing IN ('draft', 'http', 'webmention', 'dashboard')),
	method      TEXT    NOT NULL CHECK (method IN ('LINK', 'UNLINK', 'UNLINKR', 'LINKMOD', 'WEBMENTION', 'RECHECK')),
	source      TEXT    NOT NULL,
	target      TEXT    NOT NULL,
	repl        TEXT    NOT NULL,                 -- replacement URL, '' when none
	linkmod     INTEGER NOT NULL CHECK (linkmod IN (0, 1)),
	client      TEXT    NOT NULL,                 -- the sender's address
	state       TEXT    NOT NULL CHECK (state IN ('queued', 'done', 'rejected', 'failed')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	not_before  TEXT,                             -- deferred (per-host budget, retry) until then
	result      TEXT    NOT NULL DEFAULT '',      -- what processing concluded, one line
	done_at     TEXT
) STRICT;

CREATE INDEX wire_inbox_queue ON wire_inbox (state, id);

-- backlinks are the pages of other sites that told us (LINK or Webmention)
-- that they link to one of our pages, once the source was fetched and
-- found to link to it. One row per (source, target); a repeated
-- notification updates it (the draft's idempotency, section 9).
CREATE TABLE backlinks (
	id          INTEGER PRIMARY KEY,
	source      TEXT    NOT NULL,                 -- their page
	target      TEXT    NOT NULL,                 -- our page
	via         TEXT    NOT NULL CHECK (via IN ('link', 'webmention')),
	linkmod     INTEGER NOT NULL CHECK (linkmod IN (0, 1)), -- LINK ... LINKMOD: they want LINKMOD calls
	draft       INTEGER NOT NULL CHECK (draft IN (0, 1)),   -- they spoke the draft framing to us
	client      TEXT    NOT NULL,
	verified_at TEXT    NOT NULL,
	UNIQUE (source, target)
) STRICT;

CREATE INDEX backlinks_target ON backlinks (target);

-- live_checks are checks serve made on its own: of a target and its
-- replacement named by an UNLINKR, of a target a LINKMOD says changed (with
-- the drift band against the check before it), of a target the dashboard
-- asked to re-check. They never replace the checks of a run.
CREATE TABLE live_checks (
	id          INTEGER PRIMARY KEY,
	inbox_id    INTEGER REFERENCES wire_inbox (id) ON DELETE SET NULL,
	reason      TEXT    NOT NULL CHECK (reason IN ('unlinkr-target', 'unlinkr-replacement', 'linkmod', 'recheck')),
	url         TEXT    NOT NULL,
	verdict     TEXT    NOT NULL,
	status      INTEGER NOT NULL,
	final_url   TEXT    NOT NULL,
	detail      TEXT    NOT NULL,                 -- the check's reason
	sha256      TEXT    NOT NULL,
	simhash     INTEGER NOT NULL,
	words       INTEGER NOT NULL,
	prev_sha256 TEXT    NOT NULL,                 -- the check compared with ('' when none)
	band        TEXT    NOT NULL,                 -- drift band against it ('' when not compared)
	checked_at  TEXT    NOT NULL
) STRICT;

CREATE INDEX live_checks_url ON live_checks (url, id);

-- maintenance gains inbound claims: an UNLINKR received for a link of the
-- run is recorded on it with the sender's claim and the verdicts of the
-- checks of the target and the replacement. origin 'check' rows come from
-- the run's own checks (0002) and stay what they were; a claim about the
-- same link adds its columns to that row. confirmed is 0 for a claim the
-- checks did not bear out: linkrot fixes lists it apart, never as a fix.
ALTER TABLE maintenance ADD COLUMN origin TEXT NOT NULL DEFAULT 'check' CHECK (origin IN ('check', 'unlinkr'));
ALTER TABLE maintenance ADD COLUMN confirmed INTEGER NOT NULL DEFAULT 1 CHECK (confirmed IN (0, 1));
ALTER TABLE maintenance ADD COLUMN claimant TEXT NOT NULL DEFAULT '';
ALTER TABLE maintenance ADD COLUMN claimed_at TEXT;
ALTER TABLE maintenance ADD COLUMN claimed_replacement TEXT NOT NULL DEFAULT '';
ALTER TABLE maintenance ADD COLUMN target_verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE maintenance ADD COLUMN replacement_verdict TEXT NOT NULL DEFAULT '';
ALTER TABLE maintenance ADD COLUMN claim_note TEXT NOT NULL DEFAULT '';

-- notifications are what linkrot notify sent: one row per notification
-- (its key: method, source, target, replacement, and for LINKMOD the
-- fingerprint of the change), with the answer. A notification answered
-- (any status below 500) is never sent again; a failed one is retried by a
-- later notify up to its attempt limit.
CREATE TABLE notifications (
	id          INTEGER PRIMARY KEY,
	method      TEXT    NOT NULL CHECK (method IN ('UNLINKR', 'LINKMOD')),
	source      TEXT    NOT NULL,                 -- their page (the receiver's)
	target      TEXT    NOT NULL,                 -- our page
	repl        TEXT    NOT NULL,
	change_key  TEXT    NOT NULL,                 -- LINKMOD: the new fingerprint; '' for UNLINKR
	run_id      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
	framing     TEXT    NOT NULL CHECK (framing IN ('draft', 'http')),
	attempts    INTEGER NOT NULL,
	status      INTEGER NOT NULL,                 -- the answer's status, 0 without one
	answer      TEXT    NOT NULL,                 -- status line or error, one line
	sent_at     TEXT    NOT NULL,
	done        INTEGER NOT NULL CHECK (done IN (0, 1)),
	UNIQUE (method, source, target, repl, change_key)
) STRICT;

-- dismissals are findings a dashboard user dismissed (behind the serve
-- token): the dashboard hides them; reports are unchanged.
CREATE TABLE dismissals (
	id           INTEGER PRIMARY KEY,
	page_url     TEXT    NOT NULL,
	target       TEXT    NOT NULL,
	note         TEXT    NOT NULL,
	dismissed_at TEXT    NOT NULL,
	UNIQUE (page_url, target)
) STRICT;
