// Package plan holds the request-plan rules the root package applies: a
// type's Plan (built once per Table from its schema.Schema: the names,
// placeholders and fixed conditions of its requests), the version math
// (first, next, advance; the stored version read: storedversion.go), the
// conditions that pin a write to the state it was computed from (basis.go: BasisCond, SameState), the caller's If
// conditions compiled (CompileConds), and the UpdateExpressions and
// conditions of saves, puts and deletes (expr.go: ExprBuilder, BuildUpdate,
// BuildPutCond), a Query's key condition read and checked against the
// key schema (keycond.go, keycheck.go: KeyRules), a listing's options
// checked and its expressions built (listing.go), the refusals of batch
// writes it cannot check (batchcheck.go), cursor positions checked
// against a listing (cursorcheck.go),
// and cursor positions encoded, decoded and compared with a key condition
// (cursor.go; the root's Cursor and ParseCursor call them), and an Add's
// operands checked against their field, with the bounds that keep a
// counter within its Go type (addvalues.go), and the window of
// idempotency keys a keyed write records and is conditioned on (window.go),
// and the write tokens a transaction derives from its request token
// (txtoken.go). SaveBehavior is defined here; the root re-exports it.
//
// It is pure: no I/O, no clock (callers pass the time), no client. A Plan
// is read-only once built, but for its cache of SaveUpdate expressions,
// which is safe for concurrent use.
package plan
