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
// # Struct tags
//
// A field's `dynamo` tag is "name,option,option...": an empty name means the
// Go field name, and `dynamo:"-"` leaves the field out. A field without a
// `dynamo` tag uses its `dynamodbav` tag, if any. Only exported fields are
// stored; a tag on an unexported field is refused by NewTable (the encoder
// could not see it). An embedded struct is flattened into the item, as attributevalue
// does (tag its fields, not the embedding); given a name in its tag, it is
// stored as a map instead. Options:
//
//   - hash: the partition key. Exactly one field has it. Keys are strings,
//     numbers, []byte, time.Time, or types implementing
//     attributevalue.Marshaler (pointers to them too).
//   - range: the sort key; at most one field. A field is one key or the other.
//   - version: the optimistic-locking version (see Versions below); at most
//     one field, of an integer type or a pointer to one, never a key, not
//     inside an embedded pointer, and not with string or omitempty (the mapper
//     always writes it as a number).
//   - ttl: the table's time-to-live attribute, which CreateTable enables: an
//     integer of epoch seconds, or a time.Time (or *time.Time) tagged unixtime
//     too; at most one field. DynamoDB may delete expired items days late.
//   - set: store a slice or array as a DynamoDB set, its type from the
//     element type: strings SS, numbers NS, [][]byte BS (as guregu/dynamo's
//     `set`). Duplicate elements are dropped (numbers compared by value) and
//     nil elements refused. DynamoDB has no empty sets: an empty one is
//     encoded as NULL (a nil one is left out with omitempty). A []byte is one
//     binary value, not a set.
//   - stringset, numberset, binaryset: store the field as that set type
//     (attributevalue's options). At most one of set, stringset, numberset and
//     binaryset.
//   - omitempty: leave the attribute out of the item when the value is empty:
//     0, false, "", a nil pointer, interface, slice or map, and (the mapper
//     adds this to attributevalue's rule, as Java stores a null Date) a zero
//     time.Time; other structs are always stored. Under SaveUpdate an
//     attribute left out is removed from the stored item.
//   - omitemptyelem: leave out the zero elements of a slice or map.
//   - nullempty: store a zero value as NULL; nullemptyelem: store the zero
//     elements of a slice or map as NULL.
//   - string: store a number as a string (S) rather than a number (N).
//   - unixtime: store a time.Time as epoch seconds (N) rather than an RFC 3339
//     string (S).
//   - javabool: store a bool (or *bool, or a slice, array or map of them) as
//     the number 1 or 0, as Java's DynamoDBMapper stores Boolean; loads read
//     N 1/0 and BOOL alike.
//   - javadate: store a time.Time (or *time.Time, or a slice, array or map of
//     them) as a string in JavaDateLayout, UTC with milliseconds, as
//     DynamoDBMapper stores Date and Calendar; loads read any RFC 3339 string.
//     Not with string, unixtime or a set option, and not together with
//     javabool.
//
// omitempty, omitemptyelem, nullempty, nullemptyelem, string, stringset,
// numberset, binaryset and unixtime are passed to attributevalue unchanged.
//
// Items are encoded and decoded exactly as attributevalue's Encoder and
// Decoder (TagKey "dynamo") do, but through code compiled once per struct
// type instead of a reflective walk per call; fields of types it does not
// compile (custom Marshalers, interfaces, arrays, maps with non-string keys)
// are handed to attributevalue in place. A mapper given WithEncoderOptions or
// WithDecoderOptions uses attributevalue alone for what those options
// change.
//
// Secondary indexes are declared in tags of their own, as in guregu/dynamo,
// and used by CreateTable and by Query and Scan with Index(name):
//
//   - index:"Name,hash" and index:"Name,range" make the field the hash
//     (partition) or range (sort) key of the global secondary index Name.
//   - localIndex:"Name,range" makes it the range key of the local secondary
//     index Name, whose hash key is the table's (so the table needs a range
//     key, and the index's range key must be another attribute).
//   - One field can be a key of several indexes, separated by spaces:
//     index:"ByTitle,hash ByYear,range". "partition" and "sort" are accepted
//     for "hash" and "range".
//
// Index names are DynamoDB's: 3 to 255 of a-z A-Z 0-9 _ - and '.'. DynamoDB
// refuses an empty string or binary value as an index key: tag such fields
// omitempty so that items without them stay out of the index.
//
// NewTable refuses, with a *SchemaError wrapping ErrInvalidSchema that names
// the struct, the field and the fix: an unknown, empty or repeated option
// (also in the tags of the structs T holds); a missing hash key, two hash
// keys, two range keys, a field that is both, a key of a type listed above as
// not allowed; two version or two ttl fields, or one of a type not allowed; two set kinds on one field,
// or set on a type that cannot be a set; javabool or javadate on a field of
// another type; two fields with the same attribute name; options or index
// tags on an embedded struct; index tags on a field tagged "-"; and index
// tags DynamoDB would refuse: an entry without ",hash" or ",range", an
// invalid index name, an index named twice in one tag, a global index without
// a hash key, two hash or two range keys in one index, a local index with a
// hash key, on a table without a range key or with the table's range key, a
// key of a type that is not a string, number or binary, and one name used for
// a global and a local index. A versioned type's attribute may not be the
// one the mapper keeps its write token in (see WithWriteTokenAttribute).
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
// # Save behaviours
//
// SaveUpdate (default), SaveUpdateSkipNulls, SavePut, SaveClobber and
// SaveAppendSet mirror DynamoDBMapper's SaveBehavior; see their docs. One
// difference: SaveClobber increments the version inside DynamoDB (ADD), so a
// stored version never moves backwards.
//
// # Lost responses and incarnations
//
// When DynamoDB applies a write but its response is lost, the SDK would send
// it again, and a resend is not safe: version numbers start again at 1 when
// an item is deleted and created again, so a resent create can apply twice
// after someone deleted the item, a resent delete can remove an item someone
// else created since, and a resent SaveClobber overwrites a write
// acknowledged to someone else in between. The mapper therefore turns the
// SDK's resend of such attempts off (attempts DynamoDB refused, e.g.
// throttled ones, are still retried) and settles the write with a strongly
// consistent read. Every versioned write stores a random token (see
// WithWriteTokenAttribute): the write's own token in the item means it was
// applied, and the call succeeds; the exact state the write was computed
// from — which Table.Update knows, version and token — means it was not, and
// it is sent again; anything else is errors.Is(err, ErrUnknownOutcome), and
// Table.Update returns it instead of applying its change a second time. A
// Delete whose item is gone afterwards succeeds only when its own condition
// holds on an absent item (an unsaved holder, or SaveClobber, without If).
// Any error after an attempt that may have been applied (ctx ended, the
// settling read failed) also satisfies ErrUnknownOutcome; so does a WriteTx
// that may have been applied. These guarantees need the per-call options the
// mapper passes to reach the SDK (see Client).
//
// A version is not an identity: Save and Delete of a copy loaded before the
// item was deleted and created again succeed when the numbers match (as in
// DynamoDBMapper). Table.Update pins every write to the token it read, so it
// never writes over another incarnation; for your own Saves, add an If
// condition on an attribute that identifies the incarnation.
//
// A stored version 0 (Java's CLOBBER holding -1 stores it; so do backfills)
// counts as unsaved: holding 0 saves it to 1. No write stores a version the
// field's type cannot hold.
//
// # More than one item
//
// Mapper.WriteTx saves, deletes and checks up to 100 items in one
// TransactWriteItems with the same version rules (Table.TxSave, TxDelete,
// TxCheck), and Mapper.ReadTx reads them (Table.TxGet). Table.BatchLoad reads
// any number of keys; Table.BatchSave and BatchDelete write in batches, which
// cannot carry conditions, so they refuse versioned items unless SaveClobber
// is asked for. Table.Query, Scan and ParallelScan are iter.Seq2 iterators over
// all pages; QueryPage and ScanPage return one page and a Cursor to resume
// from. Key conditions and cursors are checked against the key schema before
// anything is sent. Table.CreateTable creates the table the tags describe (keys, indexes
// from `index`/`localIndex` tags, TTL from `ttl`, on-demand billing).
//
// # Java
//
// Items written by Java's DynamoDBMapper (SDK v1) or the v2 Enhanced Client
// load into Go structs, and Go writes items they load back unchanged. Where
// DynamoDBMapper's encoding differs from Go's, a tag option says so:
// `javabool` stores a bool as the number 1 or 0, `javadate` a time.Time as
// JavaDateLayout; both apply inside nested structs too, and values compared
// with such attributes in If and Filter conditions are sent as stored. A zero
// time.Time tagged omitempty is left out (Java's null Date), and numbers in
// interface-typed fields decode as attributevalue.Number, so a load-then-save
// keeps every digit. Versions interoperate:
// whichever side holds a stale version gets a conflict. The repository's
// docs/porting-from-java.md maps annotations to tags and mapper calls to Go
// calls.
//
// # Limits
//
// Optimistic locking needs one place that decides: DynamoDB global tables
// replicate last-writer-wins across regions, so two regions can both accept a
// write of the same version. Write a versioned item in one region only.
// BatchWriteItem cannot carry conditions; use transactions for
// version-checked writes of several items. Items are at most 400 KB.
//
// # What is refused before sending
//
// Every call that encodes an item or a key (Save, Load, Delete, Update,
// transactions, batches) refuses, with an error wrapping ErrInvalidInput that
// names the field and the fix, what DynamoDB, the SDK or the encoder would
// otherwise refuse late, change silently or crash on: strings, map keys, set
// elements and attribute names that are not valid UTF-8 (the SDK would send
// U+FFFD instead, so two keys would address one item: use []byte for binary
// data), also in If conditions; values that refer to themselves or nest
// deeper than DynamoDB's 32 levels (the item is level 1; each map, list or
// struct one more); func, chan and unsafe.Pointer values (the encoder would
// drop them); nil elements of sets; numbers DynamoDB cannot store (NaN, ±Inf,
// more than 38 significant digits, beyond 1E-130 to 9.99E+125); items over
// 400 KB, counted as DynamoDB counts them. Duplicate set elements are dropped,
// numbers compared by value (0 and -0, 1 and 1.0 are one element). Items read
// back cannot hold cycles: the decoder builds new values, and DynamoDB's own
// nesting limit bounds their depth.
package dynamo
