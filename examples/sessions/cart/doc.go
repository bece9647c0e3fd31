// Package cart is a small HTTP service that keeps the shopping carts of user
// sessions in DynamoDB, through the dynamo mapper. It keeps no state of its
// own, so any number of instances can serve the same carts from one table.
//
// Endpoints (JSON):
//
//	POST   /carts/{session}/items        {"sku":"book-42","qty":1}  add (the same SKU again adds to its quantity)
//	DELETE /carts/{session}/items/{sku}                             remove a SKU
//	GET    /carts/{session}                                         the cart, or 404
//
// Every change is a read-modify-write through dynamo.Table.Update on a
// versioned item: when two instances change one cart at the same moment,
// the loser's write is a version conflict, and Update applies its change
// again to the cart the conflict carries. No change is lost and none is
// applied twice.
//
// Answers are JSON: the cart (Cart) with 200 OK, or {"error": "..."} with
// 400 for invalid input (the message says what to send instead), 404 for a
// cart that does not exist or has expired (and for removing a SKU the cart
// does not hold), 409 when an add would exceed MaxItems or MaxLineQty, 413 for
// a body over 4 KiB, and 503 with Retry-After when the request's time ran out.
//
// Carts expire WithTTL after their last change. The expiry time is the
// table's TTL attribute, so DynamoDB deletes expired carts eventually —
// which on AWS can take days. Nothing here depends on that deletion: a cart
// whose expiry time has passed is absent to every request, and the next add
// starts a fresh cart in its place (its version goes on counting from the
// expired one's: the item is written over, version-checked as ever).
//
// An add carrying an Idempotency-Key header is applied at most once per key:
// the cart remembers the keys of its last RememberedKeys adds, and a repeated
// key (sent to any instance) returns the cart without adding again, with the
// header Idempotent-Replayed: true.
//
// The keys also settle lost database answers. When DynamoDB applied a write
// but its answer was lost, and another instance changed the cart before the
// SDK resent it, nobody can tell from the conflict whether the write took
// effect (dynamo.ErrUnknownOutcome). An add with a key then simply runs
// again — the key in the cart says whether it landed — and a remove runs
// again too, since removing is idempotent. An add without a key answers 503
// saying that it may or may not have been applied.
package cart
