// Package dynamo is an optimistic-locking mapper for Amazon DynamoDB.
//
// Tag a struct, open a typed table, and read and write it:
//
//	type Book struct {
//		ISBN    string `dynamo:"ISBN,hash"`
//		Title   string `dynamo:"title"`
//		Version int64  `dynamo:"version,version"`
//	}
//
//	books, err := dynamo.NewTable[Book](dynamo.NewMapper(client), "Books")
//	saved, err := books.Save(ctx, Book{ISBN: "978-0", Title: "Go"}) // saved.Version == 1
//
// # Tags at a glance
//
// A field's `dynamo` tag is "name,option,...": an empty name is the Go field
// name, "-" leaves the field out; `dynamodbav` tags are read too. Options:
//
//   - hash, range: the partition and sort keys (one hash, at most one range).
//   - version: the optimistic-locking version, an integer field; with
//     versionstart=N, versionstart=clock and versionstep=N to set its numbers.
//   - created, modified: timestamps written from the mapper's clock.
//   - ttl: the table's time-to-live attribute, which CreateTable enables.
//   - set (or stringset, numberset, binaryset): a slice stored as a set.
//   - omitempty, omitemptyelem, nullempty, nullemptyelem, string, unixtime:
//     as attributevalue reads them.
//   - javabool, javadate: booleans and dates as Java's DynamoDBMapper stores
//     them.
//   - entity=NAME: the type is one entity of a table holding several.
//
// Secondary index keys have tags of their own, as in guregu/dynamo:
// index:"Name,hash" and index:"Name,range" for a global index,
// localIndex:"Name,range" for a local one; index:"Name,hash,1",
// index:"Name,hash,2" number the attributes of a global key of several
// (up to 4 per role). CreateTable declares them and every write checks
// their values.
//
// Text types (a UUID, netip.Addr: anything with MarshalText and
// UnmarshalText) are stored as strings. NewTable refuses a tag it cannot
// honour, naming the struct, the field and the fix.
//
// # Versions
//
// A field tagged `version` makes the type versioned, the way Java's
// DynamoDBMapper does with @DynamoDBVersionAttribute. Version zero (or a nil
// pointer) means unsaved. Saving an unsaved item writes version 1 on
// condition attribute_not_exists(version); saving version v writes v+1 on
// condition version = v. Delete checks the version the same way. Unlike
// DynamoDBMapper, the mapper never modifies the value passed in: Save returns
// the saved copy, so saving the same value twice is a conflict the second
// time, never a double increment.
//
// A failed version check is an ordinary result: the error is a
// *ConditionError that satisfies errors.Is(err, ErrVersionConflict), names
// the table, the key, the version held and the version found, and carries the
// stored item (ReturnValuesOnConditionCheckFailure=ALL_OLD), which
// Table.Current decodes without another read. Table.Update runs the whole
// read-modify-write loop for you.
//
// A stored version is read as DynamoDB compares it, numerically: 2.0 and
// 20e-1 are version 2 (DynamoDB stores them as 2), for ChangedFrom as for
// the version conditions. A version another writer stored as something
// else — a string "3", a bool, a number that is not whole, a number the
// field cannot hold — is named with the fix by every call over the item:
// writes fail with ErrConditionFailed (not a conflict: reloading does not
// help), and reads (Load, Update, transactions, batches, queries and
// scans) with the decoding error.
//
// # Errors
//
// Every error can be tested with errors.Is against one of:
//
//   - ErrNotFound: Load of a missing item.
//   - ErrVersionConflict: the stored version is not the one held; the
//     *ConditionError names both and carries the stored item (Table.Current).
//   - ErrConditionFailed: an If condition failed while the version matched.
//   - ErrUnknownOutcome: a write may or may not have been applied (its answer
//     was lost and the settling read could not tell); look before retrying,
//     or use IdempotencyKey.
//   - ErrInvalidInput, ErrInvalidSchema: refused before anything was sent;
//     the message names the fix.
//   - ErrTableExists, ErrTableNotFound: from CreateTable and the calls that
//     wait for a table.
//
// Transactions report each item's conflict (*TxError); ErrNoChange from an
// Update function ends it without a write.
//
// # The calls
//
// Table.Load, Save, Delete and Update read and write one item; Table.Add
// changes counters and sets without a read. Mapper.Transact, WriteTx and
// ReadTx work on several items at once; BatchLoad, BatchSave and
// BatchDelete on many without conditions on the batch. Table.Query and
// Table.Scan are iter.Seq2 iterators with pages and cursors; NewEntities
// reads tables holding several types. CreateTable makes a table from the
// tags. Each call takes only the option type that works for it.
//
// # Guides
//
// The rules in depth are in the repository's docs/ folder:
// docs/mapper.md (tags, text types, versions, timestamps, counters, save
// behaviours, lost responses, version settings, transactions, queries,
// guarded writes, projections, entities, conditions, options and the table
// of what each call refuses, telemetry, Java, limits, what is refused before
// sending), docs/transactions-batches-queries.md, docs/idempotency.md,
// docs/leases.md, docs/commitlog.md, docs/backfill.md, docs/streams.md,
// docs/telemetry.md, docs/porting-from-java.md and docs/limitations.md.
//
// # Limits
//
// Optimistic locking needs one place that decides: DynamoDB global tables
// replicate last-writer-wins across regions, so write a versioned item in
// one region only. BatchWriteItem cannot carry conditions; use transactions
// for version-checked writes of several items. Items are at most 400 KB.
package dynamo
