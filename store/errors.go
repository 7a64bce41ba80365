package store

import "errors"

// ErrLocked is wrapped by the error TryLock returns when another live
// linkrot process holds the database's run lock.
var ErrLocked = errors.New("database is in use by another linkrot")

// ErrNewerSchema is returned (wrapped) by Open when the database's schema
// version is newer than the newest migration this program knows: it was
// written by a newer linkrot, and this one cannot know what the new schema
// means. The file is left untouched.
var ErrNewerSchema = errors.New("database schema is newer than this linkrot")

// ErrIntegrity is returned by IntegrityCheck when the engine reports a problem
// with the database (its file, its foreign keys, or its schema version).
var ErrIntegrity = errors.New("database integrity check failed")

// States of a WireClaim.
const (
	ClaimPending  = "pending"  // received, its check not made yet
	ClaimChecked  = "checked"  // its check made (Verdict and Confirmed hold)
	ClaimRejected = "rejected" // refused when processed (Note says why)
	ClaimFailed   = "failed"   // its check could not be made (Note says why)
)
