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
// Go field name, and `dynamo:"-"` leaves the field out. A field's
// `dynamodbav` tag is read too, as attributevalue reads it: a non-empty
// `dynamo` tag names the field instead, an empty one is no tag, and the
// options of both apply; nested structs are read the same way (NewTable
// refuses tags that disagree). Only exported fields are
// stored; a tag on an unexported field is refused by NewTable (the encoder
// could not see it). An embedded struct is flattened into the item, as attributevalue
// does (tag its fields, not the embedding); given a name in its tag, it is
// stored as a map instead. Options:
//
//   - hash: the partition key. Exactly one field has it. Keys are strings,
//     numbers, []byte, time.Time, text types (a UUID, netip.Addr: see Text
//     types below; stored as S), or types implementing
//     attributevalue.Marshaler (pointers to them too).
//   - range: the sort key; at most one field. A field is one key or the other.
//   - version: the optimistic-locking version (see Versions below); at most
//     one field, of an integer type or a pointer to one, never a key, not
//     inside an embedded pointer, and not with string or omitempty (the mapper
//     always writes it as a number). Its settings (see Version settings
//     below): versionstart=N, the first version written (default 1);
//     versionstart=clock, the first version taken from the mapper's clock;
//     versionstep=N, what every later write adds (default 1).
//   - created, modified: timestamps the mapper writes from its clock (see
//     Timestamps below); a time.Time or *time.Time (RFC 3339 with
//     nanoseconds in UTC; with unixtime epoch seconds; with javadate Java's
//     date string), or an int64 or uint64 of Unix milliseconds. At most one
//     of each, never a key, the version or the ttl.
//   - ttl: the table's time-to-live attribute, which CreateTable enables: an
//     integer of epoch seconds, or a time.Time (or *time.Time) tagged unixtime
//     too; at most one field. DynamoDB may delete expired items days late.
//   - set: store a slice or array as a DynamoDB set, its type from the
//     element type: strings and text types SS, numbers NS, [][]byte BS (as
//     guregu/dynamo's `set`). Duplicate elements are dropped (numbers compared by value) and
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
//   - entity=NAME: on a string field, declares the type an entity of a table
//     that holds several types (see "Several types in one table"); the
//     attribute holds NAME on every item of the type. At most one field; no
//     other option with it.
//
// omitempty, omitemptyelem, nullempty, nullemptyelem, string, stringset,
// numberset, binaryset and unixtime are passed to attributevalue unchanged.
//
// Items are encoded and decoded exactly as attributevalue's Encoder and
// Decoder (TagKey "dynamo") do, but for text types (below), and through code
// compiled once per struct type instead of a reflective walk per call;
// fields of types it does not compile (custom Marshalers, interfaces, arrays,
// maps with non-string keys) are handed to attributevalue in place. A mapper
// given WithEncoderOptions or WithDecoderOptions uses attributevalue alone.
//
// # Text types
//
// A value whose type implements both encoding.TextMarshaler and
// encoding.TextUnmarshaler (on the type or its pointer) is stored as a
// string (S) holding MarshalText's output and read back with UnmarshalText:
// a uuid.UUID-style [16]byte type, netip.Addr, netip.Prefix, net.IP,
// big.Int. This is how guregu/dynamo stores them and how Java's mappers
// store a java.util.UUID, so the same table serves both. It holds wherever
// the Go type says so — fields, keys (S keys in CreateTable), pointers,
// slices (a `set` of them is an SS), string-keyed maps, nested and
// recursive structs — and in the values compared with such an attribute in
// conditions, filters and key conditions (see If). Exceptions:
//
//   - A type's own attributevalue.Marshaler or Unmarshaler wins over its
//     text methods; time.Time keeps its encoding (RFC 3339, or unixtime);
//     a struct that has text methods only by embedding a type with them is
//     stored as the struct it is (its other fields are kept).
//   - A type with only one of the two methods is not a text type: it is
//     stored as it always was.
//   - What an interface value (any) holds is encoded by attributevalue: a
//     [16]byte there stays binary, and a text type whose fields are all
//     unexported (netip.Addr, big.Int), which attributevalue would store as
//     an empty map, is refused with ErrInvalidInput.
//   - Arrays, maps with keys other than strings and pointers to pointers are
//     encoded by attributevalue with its UseEncodingMarshalers option, which
//     stores text types as text but also turns a time.Time into text
//     (ignoring unixtime); so is every item of a mapper given
//     WithEncoderOptions or WithDecoderOptions. NewTable refuses, naming
//     the field and the fix, a type for which that would store a time.Time
//     (or a type with only some of the text and binary methods) otherwise
//     than the mapper does.
//
// Reading a byte-array text type also accepts a binary value (B) of its
// length, which is what this mapper wrote for such types before it stored
// them as text; new writes are S, so a key of such a type needs a table
// whose key attribute is S, and a condition comparing the attribute with a
// value stored as B does not match. A MarshalText or UnmarshalText error is
// an error of the call (ErrInvalidInput on writes, before anything is sent),
// never a zero value.
//
// DynamoDB orders a text type's attribute by its text, character by
// character, which is not the order of the values in general: for a big.Int
// "99" >= "100", for an address "10.0.0.9" > "10.0.0.10". An ordering
// comparison (<, <=, >, >=, BETWEEN) of an attribute of a text type with a
// value the mapper would turn into its text (a number, a byte array, a
// big.Int, another attribute) — in an If condition, a Filter, a Query's key
// condition on a sort key of a text type, or a transaction member's
// condition — is refused with ErrInvalidInput naming the attribute, its Go
// type and the fix, before anything is sent: store values you order as
// numbers (an int64 field, or attributevalue.Number); compare a text type
// with =, <> and IN; or, where its text sorts as its values do (a
// fixed-width ID such as a ULID), compare with the text itself,
// expression.Value(v.String()), which is then your own string comparison.
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
// omitempty so that items without them stay out of the index (an omitempty
// index key of a text type, such as netip.Addr, is left out when its text
// is empty). An index key held as NULL — a nil pointer, a nullempty field's
// empty value — is left out of the item too (DynamoDB refuses NULL there),
// by every write: the item is stored, outside the index. A write of an item
// holding an empty one, or a key of the table or an index over DynamoDB's
// limits (2048 bytes for a partition key, 1024 for a sort key), fails with
// ErrInvalidInput before anything is sent; a change an Update function
// returns with one fails only its caller.
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
// a global and a local index; versionstart or versionstep without version,
// of 0, or beyond the field's type, and versionstart=clock on a field
// narrower than 64 bits; created or modified twice, together, on a key, the
// version or the ttl, or on a type other than time.Time or a 64-bit
// integer. A versioned type's attribute may not be the
// one the mapper keeps its write token in (see WithWriteTokenAttribute).
// A struct (also one T holds) that embeds time.Time or a text type whose
// fields are unexported (netip.Addr) next to other fields is refused: it is
// stored as a map of its fields, embedded structs flattened, which would
// lose the embedded value; a struct that only wraps a text type is stored
// as its text. An unnamed one (struct{ netip.Addr }) is refused where
// attributevalue decodes it (with WithDecoderOptions or WithEncoderOptions,
// or as an array element): attributevalue finds UnmarshalText only on named
// types, so such items could be written but not read; declare a named type.
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
// # Timestamps
//
// A field tagged modified is set to the mapper's clock (WithClock) on every
// write: Save with each SaveBehavior, Update, transactions (TxSave),
// BatchSave and Add. A field tagged created is set once, by the write that
// creates the item, and never overwritten: an UpdateItem writes it with
// if_not_exists, and the saved copy carries the creation time as stored (for
// SaveUpdate the mapper asks for ReturnValues=ALL_NEW to learn it). Writes
// that cannot keep or learn the stored one — SavePut, which replaces the
// item, and transaction members, which return nothing — write the creation
// time the item holds (the clock's when it is zero) on condition that the
// stored one is absent or the same; otherwise they fail with
// ErrConditionFailed, whose message names both times: load the item first.
// An item that holds a creation time when it is first written keeps it
// (importing). BatchSave cannot carry conditions: it writes the item's
// creation time, or the clock's when zero, over the stored one. The values
// are rounded to what is stored (seconds with unixtime, milliseconds with
// javadate), so the saved copy equals what Load returns; the value passed in
// is never modified.
//
// # Counters without a read
//
// Table.Add changes numbers and sets in DynamoDB with one UpdateItem (ADD
// and DELETE), without reading the item first and without a version
// condition, so concurrent Adds never conflict and none is lost:
//
//	page, err := pages.Add(ctx, Page{URL: u}, dynamo.Increment("views", 1).AddToSet("referrers", []string{ref}))
//
// The changes are DynamoDB's ADD and DELETE: atomic, so that concurrent
// Adds all count and none is lost. For a versioned type the same request
// advances the stored version by its step (a missing item gets the first
// version), so that whoever holds a copy read before it conflicts on their
// next Save, Delete or transaction. Fields tagged modified are set to the
// clock, created ones where the item has none; a type's `entity=NAME`
// attribute is set to NAME, and the Add fails with ErrConditionFailed when
// the key holds another entity's item. A missing item is created with the
// key and the changes (a number added to a missing attribute counts from
// 0). The item is returned as stored (ReturnValues=ALL_NEW).
//
// Attributes are named as stored (the tag's name, not the Go field's). An
// attribute stored as NULL (SavePut of a nil set or pointer writes NULL, and
// other writers may) is changed as a missing one: from 0, from the empty
// set; a version stored as NULL is no version, and the first one is written
// over it. DynamoDB refuses ADD on NULL, so this takes a second request,
// sent when the first finds the NULL (SaveAppendSet and SaveClobber do the
// same). An integer or float32 field is guarded in DynamoDB: the condition
// that the result still fits the field's Go type (an int8 counter stops at
// 127, a float32 one at 3.4E38, with ErrConditionFailed), so that the item
// always loads. If conditions are ANDed; MustExist requires the item.
//
// Refused before anything is sent, with an error wrapping ErrInvalidInput
// that names the attribute and the fix: an empty delta; an attribute the
// type does not model, a key, the version, a created or modified time; a
// number added to a field that is not numeric (or stored as a string), a
// fraction added to an integer field, NaN or ±Inf; set changes to a field
// that is not a set (tag it `set`; a []byte, [N]byte or text type is one
// value whatever its set option), elements of the wrong type, or none; two
// changes of one attribute; a SaveBehavior other than the default; an index
// key a Save of the item would refuse (see "Struct tags": the key over an
// index's limit, an entity name over it, a set).
//
// Lost answers: an ADD applied twice counts twice, so the mapper never lets
// the SDK send it again blindly. It reads the item: the write token of this
// Add there (versioned types, tokens on) means it was applied, and Add
// returns the item read; anything else — and any lost answer for a type
// without a version — is an error satisfying errors.Is(err,
// ErrUnknownOutcome): look at the stored item (Table.Current) before adding
// again, or give the Add an IdempotencyKey and simply run it again.
//
// # Save behaviours
//
// SaveUpdate (default), SaveUpdateSkipNulls, SavePut, SaveClobber and
// SaveAppendSet mirror DynamoDBMapper's SaveBehavior; see their docs. One
// difference: SaveClobber increments the version inside DynamoDB (ADD), so a
// stored version never moves backwards, and never past the largest version
// the field's type holds (an error names the type to widen); a version
// stored as NULL (by another writer) counts as none, and the first version
// is written over it, as over a stored 0 (unsaved). SaveAppendSet adds to a
// set stored as NULL as to a missing one. (Both take a second request when
// the first finds the NULL, or a 0 with versionstart other than the step;
// another writer that keeps storing and replacing the NULL under every
// request stops the write after four with ErrConditionFailed saying so,
// nothing written. One flipping a version between 0 and NULL costs one
// request more: both are "no version".) A transaction member (TxSave,
// Table.In(tx).Save) over a NULL set writes what Save does with the same
// behaviour, SaveUpdate or SavePut; the three behaviours whose copy is the
// item as stored are refused in a transaction (ErrInvalidInput, nothing
// sent), NULL or not.
//
// A Save that knows the item as stored at the version it holds (a raw
// Scan's, Query's or GetItem's, ConditionError.Item) can send only what it
// changes from it with ChangedFrom: the attributes whose value differs are
// SET, those it drops REMOVEd, the version and write token written as
// always, under the same version condition. DynamoDB does less per write.
// It is sound because a version names one state of the item when every
// writer moves the version (as the mapper does); an attribute changed by a
// writer that does not, and left as it was by the Save, stays as stored.
// Only SaveUpdate of a saved item of a versioned type takes it.
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
// # Exactly once across your own retries
//
// IdempotencyKey(id) on an Update or Add records id in the item with its
// change, in a window of the item's last IdempotencyWindow keys, and a run
// that finds id there applies nothing and returns the item as stored. Such a
// call may be run again after ErrUnknownOutcome, a timeout or a crash, from
// any process: its change is applied once. What the window costs, and what
// the other writes do to it (the UpdateItem writes keep it, SavePut carries it
// over, Delete, batch puts and transaction puts end it): docs/idempotency.md.
//
// A version is not an identity. With the default settings, Save and Delete
// of a copy loaded before the item was deleted and created again succeed when
// the numbers match: both incarnations start at version 1, so a copy loaded
// at version 1 before the delete saves over the item created afterwards,
// silently (DynamoDBMapper and the Enhanced Client behave the same way).
// Table.Update pins every write to the token it read, so it never writes over
// another incarnation. For your own Saves and Deletes, start versions from
// the clock (versionstart=clock, below), or add an If condition on an
// attribute that identifies the incarnation.
//
// # Version settings
//
// Three tag options on the version field change the numbers written, never
// the rules: unsaved is still zero (or nil), a save holding v is still
// conditioned on v, and every call — Save with each SaveBehavior, Update,
// Delete, Add, transactions, BatchSave with SaveClobber — writes by them.
//
//   - versionstart=N: the first version written is N (N ≥ 1). This is the
//     Java v2 Enhanced Client's initialValue, except that 0 is refused:
//     version 0 means unsaved here, so a second create of the key would
//     overwrite the first. (Its deprecated startAt=S wrote S+incrementBy
//     first; write versionstart to that sum.)
//   - versionstep=N: every later write adds N (N ≥ 1), as incrementBy does.
//     SaveClobber and Add advance the stored version by N in DynamoDB, and
//     write the first version over a stored 0, NULL or none.
//   - versionstart=clock: the first version is the mapper's clock in Unix
//     milliseconds (see WithClock), as lease does for fencing tokens. Each
//     incarnation of an item then starts above every version the previous
//     one reached, as long as that one was written fewer times than the
//     milliseconds it lived divided by the step, and the writers' clocks agree
//     to within the time between the delete and the new create. With step 1
//     DynamoDB's limit of 1,000 writes a second to one item keeps the versions
//     behind the clock. A copy loaded before a delete then conflicts with the
//     item created afterwards instead of saving over it. The field must be
//     64 bits wide (int64, uint64). Java's DynamoDBMapper (a Long version)
//     saves such items; the Enhanced Client parses versions as an int and
//     cannot save an item whose version passed 2147483647 (checked with the
//     one DynamoDB Local ships).
//
// NewTable refuses a step or start of 0, a value that does not fit the
// field's type, and a clock start on a narrower field. Versions written with
// other settings (or by Java) stay valid: a holder of any version v saves
// v+step under the condition that v is stored.
//
// A stored version 0 (Java's CLOBBER holding -1 stores it; so do backfills)
// counts as unsaved: holding 0 saves it to 1. That is the rule of a plain
// Save (or Delete) of an unsaved item, which was computed from nothing read.
// A write computed from an item read as absent — Table.Update's, or a
// Transact function's after its Load said ErrNotFound — commits only over
// absence: when another writer created the item meanwhile, with version 0
// or without a version, the write fails and the function runs again on the
// stored item, never replacing it. No write stores a version the field's
// type cannot hold.
//
// # More than one item
//
// Mapper.Transact runs a function over a transaction view and commits what
// it did as one serializable transaction: reads through Table.In(tx) (and
// Tx.Prefetch, which reads several items in one snapshot) record what they
// saw, absence included; Saves and Deletes are buffered; one
// TransactWriteItems writes them with their version checks plus a
// ConditionCheck that each item read but not written is unchanged. When
// something read changed, the function runs again from the items the
// cancellation carried; a read-only run writes nothing. The function may run
// several times, may see an inconsistent mix of items in a run that then
// does not commit, and must have no side effects.
//
// Mapper.WriteTx saves, deletes and checks up to 100 items in one
// TransactWriteItems with the same version rules (Table.TxSave, TxDelete,
// TxCheck), and Mapper.ReadTx reads them (Table.TxGet). Table.BatchLoad reads
// any number of keys; Table.BatchSave and BatchDelete write in batches, which
// cannot carry conditions, so they refuse versioned items unless
// WithSaveBehavior(SaveClobber) is given. Table.Query, Scan and ParallelScan
// are iter.Seq2 iterators over all pages; QueryPage and ScanPage return one
// page and a Cursor to resume from. An item that does not decode into T
// does not hide the others: the iterators yield an ItemDecodeError naming
// it by its key in its place and go on, the pages return the other items
// with a PageDecodeError naming it. Key conditions and cursors are checked against the key schema before
// anything is sent. Table.CreateTable creates the table the tags describe (keys, indexes
// from `index`/`localIndex` tags, TTL from `ttl`, on-demand billing).
//
// # Queries
//
// Values in a Query's key condition are marshaled by the expression package
// with the default attributevalue options, not the mapper's (see Filter). A
// key of a text type (see If) is a string key:
// expression.Key("id").Equal(expression.Value(u)) for a uuid-style [16]byte
// u sends u's MarshalText string, not its bytes. DynamoDB orders such a sort
// key by its text, so Between, LessThan and the other ordering conditions on
// it are refused with ErrInvalidInput unless given strings (for a big.Int
// "99" sorts after "100"): store a number you range over as a number (see
// "Text types").
//
// The key condition is checked before anything is sent. It may name only
// the partition key and the sort key of what the query reads (the table, or
// an Index the tags declare), each once, and must fix the partition key with
// Equal; its values must have the keys' types (S, N or B), be numbers
// DynamoDB stores (38 significant digits, magnitudes 1E-130 to
// 9.9999999999999999999999999999999999999E+125), strings of valid UTF-8
// (the SDK would replace invalid bytes with U+FFFD and read another key),
// and within DynamoDB's key sizes: 2048 bytes for the partition key's value,
// 1024 for the sort key's, of the table and of an index alike (DynamoDB
// Local would answer a longer partition value with no items).
// Anything else is refused with ErrInvalidInput naming the attribute, e.g.
// "isbn" for "ISBN". Filter values and attribute names must be valid UTF-8
// too. For an index the tags do not declare, only the values are checked.
//
// # Write transactions
//
// Mapper.WriteTx sends its members in one TransactWriteItems. When a
// member's condition fails, the *TxError names each failing member by its
// index in ops, table and key, and carries the item as stored
// (TxError.Failure(i).Err is a *ConditionError: pass it to that member's
// Table.Current).
//
// Bad input is refused before anything is sent, with an error wrapping
// ErrInvalidInput: no ops or more than MaxTxItems, a nil op or item, an unset
// key, two ops on the same item (DynamoDB refuses that), an item over 400 KB,
// members over 4 MB in all, a save behaviour a transaction cannot report
// (see TxSave), an invalid request token.
//
// The request is built once and sent with one client request token (see
// WithRequestToken), so when DynamoDB applied it but the response was lost,
// the SDK's retry succeeds without writing again. A transaction cancelled
// because another one was in flight on the same items (TransactionConflict)
// is sent again, with jittered backoff, at most MaxAttempts times in all, as
// the RetryPolicy says (WithRetry, given to this call or to NewMapper; by
// default 8 times, waits from 10 ms up to 500 ms).
//
// An error after an attempt that may have been applied (no answer, a 5xx, a
// transaction still in progress under the token when the attempts ran out,
// ctx ending while an attempt was under way) satisfies
// errors.Is(err, ErrUnknownOutcome): resend the same members with the same
// request token within 10 minutes to settle it — an applied transaction then
// succeeds without writing again.
//
// GuardedBy, given to WriteTx or to its members, adds its checks after the
// ops, once each. The members are sent through the client of the Mapper
// WriteTx is called on, whichever Mapper their tables were made with. An op
// may be used in several WriteTx calls one after another (e.g. resent with
// the same request token), not in two at once.
//
// # Update: one key, many callers
//
// Calls to Update for one key through one Table do not fail each other's
// version checks: they queue, and while one write is in flight the calls
// arriving behind it are combined into the next write. Their functions are
// called one after another, each in its caller's goroutine and on the item
// as the previous one left it, and the result is written once, advancing the
// version by one per change: the outcome is exactly that of running the calls
// one after another (each change applied once; each caller gets the copy
// after its own change, with its own version, so every copy but the last is
// already stale). The write sets only the attributes the changes altered
// and removes those they emptied: its condition pins the stored item to the
// one the first function was given (the version and the write token the
// Table read or wrote last; without a token, every attribute the type
// models), so whatever the functions left as it was is stored already, and
// an item of many attributes whose functions change one sends one. A field
// counts as unaltered when it encodes to the very value stored: a string,
// number, bool or time, a string set, a map of strings; a pointer, struct,
// list, marshaler or text type is written whenever it holds a value. Types
// with javabool or javadate fields, `set` fields, an entity type, a text
// type in an index key or more than 64 attributes, and writes with
// GuardedBy, write the whole item. (A writer that changes an item without
// advancing its version, which optimistic locking never allows, keeps its
// values in the attributes the functions did not alter, where a whole-item
// write would replace them.) A hot key thus takes one write per round trip, whatever
// the number of goroutines: the next write waits for the callers the last
// one released to queue again — until all have, at most half the Table's
// recent write round trip — so that it carries every waiting change; a
// caller alone on its key never waits. A function's error or panic reaches only its
// caller; calls with If conditions or other save behaviours than SaveUpdate
// and SavePut are written alone. Every caller returns when its own ctx ends,
// waits included: with the ctx error while its change is in no write, or an
// error satisfying errors.Is(err, ErrUnknownOutcome) once it may be. A
// function that has run for 50 ms without returning while changes before it wait
// is left to the next write (and called again there): a slow or blocked
// function (one waiting for a lock that an earlier caller holds, say)
// delays only the calls after it.
//
// Update starts from the item this Table stored last, when it remembers it
// (a bounded cache of recently written items), so that an Update of a key
// this Table wrote last needs one round trip; when someone else wrote it
// since, the write's condition fails and the conflict carries the current
// item. A function that returns an error on such a remembered item is
// called again on the stored item if that differs, so the error it returns
// is one it returned on the current item. Writers elsewhere — other
// processes, other Tables, Save — are caught by the version check as usual.
//
// When fn returns ErrNoChange on an item this Table remembered, the item
// returned is the one read, not the remembered one.
//
// # Transactions as a function
//
// What fn sees in a run of Mapper.Transact:
//
//   - Load returns the item as stored (ErrNotFound when absent: the
//     absence is recorded and checked like any item); after a Save or
//     Delete in the same run, it returns the buffered item (ErrNotFound
//     after Delete), without a request.
//   - Items named by one Prefetch call are read together, with one
//     TransactGetItems: a consistent snapshot of all of them. Every other
//     first read of an item is a strongly consistent GetItem of that item
//     alone, and in a run after a conflict, items the cancellation carried
//     (or that were read before and still held) are reused without a read.
//     So fn may see a mix of items that never existed together — a balance
//     moved out of one account and not yet into the other. Such a run never
//     commits (its condition checks fail, or for a read-only run the check
//     read below differs) and fn runs again; but fn must not act on what it
//     saw before it returns — no side effects, no panics on "impossible"
//     states — because fn may run several times and only the committed run
//     counts. Return an error from fn to give up.
//
// Committing: a run that wrote sends one TransactWriteItems with one member
// per item touched: each write with its version check (for a type without
// a version, a check that each attribute still holds what was read), and a
// ConditionCheck for each item read but not written: its version and write
// token unchanged — for a type without a version, every attribute it models
// unchanged — or, read as absent, still absent. A read-only run writes
// nothing: when its reads all came from one snapshot (one Prefetch, or a
// single item) Transact returns at once; otherwise it reads them again with
// one TransactGetItems and returns if they are unchanged, else fn runs
// again on that snapshot.
//
// A Save or Delete of an item fn did not read is checked against the
// version the passed item holds (0: that none is stored), as Table.TxSave
// does; when that check fails, fn's input was stale, not its reads, so
// Transact returns the *TxError instead of running fn again. An If
// condition that fails on the item fn read is returned the
// same way (errors.Is(err, ErrConditionFailed)).
//
// Retries: a commit DynamoDB cancels because another transaction was in
// flight on its items (TransactionConflict) is sent again, and a run whose
// reads went stale is run again, with jittered backoff, as often as the
// RetryPolicy allows (WithRetry, given to Transact or to NewMapper;
// RetryPolicy lists the defaults). The error after the last attempt
// satisfies errors.Is(err, ErrVersionConflict).
//
// ctx bounds the whole call: reads, commits, backoff and further runs (fn
// itself is not interrupted: use tx.Context()). A panic in fn propagates;
// nothing of that run is written.
//
// Lost answers: each commit carries a client request token of its own,
// which every resend of that commit reuses — the SDK's, and up to 3 rounds
// of Transact's own after the SDK gave up on an attempt that may have been
// applied — so a commit DynamoDB applied whose answer was lost is
// acknowledged by a resend (within DynamoDB's 10 minutes) and Transact
// succeeds, the function having run once. When no resend gets an answer,
// the error satisfies errors.Is(err, ErrUnknownOutcome) and fn is NOT run
// again — that could apply its change twice; read the items to find out.
//
// Limits, refused with ErrInvalidInput before anything is sent: more than
// MaxTxItems items touched in a run (every item read or written is a
// member), members over 4 MB in all, an item over 400 KB, a key of a table
// used with two types. One item is one member: several Saves of an item in a
// run send the last one. WithRequestToken is refused (each commit needs its
// own token; for a fixed token use WriteTx).
//
// # Guarded writes
//
// A write that must land only while a condition on another item holds — a
// lease still ours (package lease), an account not frozen — takes
// GuardedBy(checks...), condition checks made by Table.TxCheck (or a
// lease's Guard). The write and the checks go in one TransactWriteItems,
// all or nothing, so no other writer can slip between the check and the
// write.
//
//   - Save, Delete and Update send their write as that transaction, keeping
//     their own version checks, If conditions, retries and errors (a failure
//     of their own condition is the *ConditionError the unguarded call
//     returns; Update's conflicts run its function again on the item the
//     conflict carried). Save and Update write with SaveUpdate or SavePut
//     only, since a transaction returns no stored item.
//   - Transact adds the checks to the commit of every run that writes;
//     Table.In(tx).Save and Delete put them on the run's commit.
//   - WriteTx adds the checks after its ops, once each (TxError.Failure
//     indexes them from len(ops) on); for the other calls member 0 is the
//     write and the checks follow in order.
//   - Checks go only with a write: an Update whose function returns
//     ErrNoChange, and a Transact run that writes nothing, send none.
//
// A failed check is a *TxError naming it, satisfying
// errors.Is(err, ErrConditionFailed) (or ErrVersionConflict, for a check of
// a version): nothing is written, nothing is retried and no function runs
// again, since running it again would not change the check. A lost answer is
// settled by resending the transaction under its request token, as Transact
// does. An op given several times is one member. Only ConditionChecks are
// taken: any other op, and an op on an item the write itself touches, is
// refused with ErrInvalidInput before anything is sent. The cost: a guarded
// write is a transaction (twice the write units of its items, plus a read
// unit per check).
//
// # Narrow types are projections
//
// A type may model only some of an item's attributes: a summary of a big
// item, say. Its reads ask for those attributes only, and the write token
// (a ProjectionExpression prepared once per type): Load, Query and Scan of
// the table, BatchLoad, TxGet — fewer bytes on the wire (DynamoDB still
// charges read units for the whole item). Its saves with SaveUpdate (the default) set the attributes it
// models and keep the others, and still check the version, so reading and
// updating a summary never loses the rest of the item; SavePut replaces the
// whole item and so does drop them. Reads of an Index are left to the
// index's own projection. A projection names attributes exactly: an item
// whose attribute differs from the field's name only in case (written by
// another tool), which attributevalue's case-folding decoder would have
// matched, is read without it — tag the field with the stored name.
//
// # Several types in one table
//
// In a single-table design, types tell their items apart by an attribute:
// tag a string field `dynamo:"kind,entity=order"`. Every write of such a type
// stores the name and is conditioned on the key holding no item or an item
// of the same entity, so a value of one type can never overwrite (or delete)
// another type's item at the same key unnoticed; Load, BatchLoad and TxGet do
// not take another entity's item for theirs (ErrNotFound), and Query and Scan
// of the type's Table read only its items. BatchSave and BatchDelete, which
// cannot carry the condition, refuse entity types unless
// WithSaveBehavior(SaveClobber) is given.
// NewEntities(Member(customers), Member(orders)) reads a partition of mixed
// items with one Query or Scan, yielding each as its own type for a type
// switch; items of an existing table that lack the attribute are told apart
// with Member(t, KeyPrefix("sk", "NOTE#")) or MatchFunc, and items no member
// claims are yielded as UnknownItem. Each type keeps its own version rules.
//
// A type that gains `entity=NAME` on an existing table does not take the
// items written before (which lack the attribute) for its own: its Load says
// ErrNotFound, its writes fail their condition — nothing of unknown type is
// overwritten. Read them with Member(t, KeyPrefix(...)) and backfill the
// attribute (an UpdateItem `SET kind = :name` conditioned on
// attribute_not_exists(kind)) before using the type's Table on them.
//
// # Conditions
//
// Values in an If or Filter condition are marshaled by the expression
// package with the default attributevalue options, not the mapper's: pass
// types.AttributeValue values where that matters. Values compared with a javabool or javadate attribute
// (by =, <>, <, <=, >, >=, BETWEEN, IN, contains or begins_with, also at a
// path inside a document) are sent as that attribute is stored, so
// expression.Name("paid").Equal(expression.Value(true)) compares with the
// number 1; a value that cannot be converted (a string compared with a
// javabool attribute, say) is an error wrapping ErrInvalidInput before
// anything is sent, and dynamo.JavaBool and dynamo.JavaDate give the stored
// form by hand.
//
// Likewise for attributes of text types (types with MarshalText and
// UnmarshalText, such as a uuid-style [16]byte, netip.Addr or net.IP, which
// the mapper stores as the string MarshalText returns): a string is sent as
// it is, a value of a byte-array or []byte text type (which
// expression.Value makes a binary) as its MarshalText string, so
// expression.Name("owner").Equal(expression.Value(id)) matches. A value
// expression.Value cannot encode faithfully — a netip.Addr, whose fields are
// unexported, becomes an empty map — is refused with ErrInvalidInput: pass
// its text, expression.Value(addr.String()).
//
// expression.Name splits a name at its dots into a path. When the type has
// a top-level attribute named "a.b" and none named "a",
// expression.Name("a.b") is taken to mean that attribute; otherwise (or to
// be explicit) use expression.NameNoDotSplit("a.b").
//
// # Options and retries
//
// Each call takes an option type of its own, and an option type is an
// interface that only the options working for that call satisfy, so most
// misplaced options do not compile: WriteOption (If, WithSaveBehavior,
// MustExist, GuardedBy, ChangedFrom) for Save, Delete, Update, Add and transaction
// members; ReadOption
// (ConsistentRead) for Load, which is also a QueryOption and a
// BatchReadOption; QueryOption for queries and scans; BatchReadOption and
// BatchWriteOption (WithRetry, and every WriteOption) for batches;
// TxOption (WithRequestToken,
// GuardedBy) and ReadTxOption for transactions; CreateTableOption and TableSpecOption for
// table creation; Option for NewMapper. WithRetry is an option of every call
// that repeats requests. A nil option is no option, for every call.
//
// Where one type serves calls that take different values, the values a call
// cannot use compile but are refused before anything is sent, with an error
// wrapping ErrInvalidInput that names the option and the fix. What each call
// taking WriteOptions does with each kind of them — one rule, which every
// such call follows and a test checks this table against — is: "." takes
// it; "-" takes it and does nothing; a letter refuses it, for the reason
// the letter stands for below. The first five columns are the values of
// WithSaveBehavior (SaveUpdate, the default, is taken everywhere; "other"
// is a value that is no Save* constant). The rows "with GuardedBy" are Save
// and Update given GuardedBy checks (GuardedBy() with none guards nothing
// and is taken everywhere). Options given together are each ruled so; of
// a behaviour given twice the last counts, as it does when it is taken.
//
//	                       SkipNulls Put Clobber AppendSet other If MustExist GuardedBy ChangedFrom IdempotencyKey
//	Save                   .         .   .       .         u     .  -         .         .           i
//	Save with GuardedBy    t         .   t       t         u     .  -         .         w           i
//	Update                 .         .   .       .         u     .  .         .         r           .
//	Update with GuardedBy  t         .   t       t         u     .  .         .         r           i
//	Add                    a         a   a       a         u     .  .         g         f           .
//	Delete                 d         d   .       d         u     .  -         .         f           i
//	TxSave                 t         .   t       t         u     .  -         .         w           i
//	TxDelete               d         d   .       d         u     .  -         .         f           i
//	TxCheck                d         d   .       d         u     .  -         .         f           i
//	Table.In(tx).Save      c         .   c       c         u     .  -         .         w           i
//	Table.In(tx).Delete    x         x   x       x         u     .  -         .         f           i
//	BatchSave              b         b   .       b         u     b  b         b         b           i
//	BatchDelete            b         b   .       b         u     b  b         b         b           i
//
//	u  not a save behaviour
//	a  Add adds without a version check
//	g  Add returns the item as stored, a transaction none; use Update
//	d  only SaveClobber means anything to a delete or a check
//	t  a transaction returns no stored item
//	c  the commit writes what the function computed
//	x  a delete in Transact takes only If
//	b  a batch write carries no condition
//	f  only Save sends the changes from an item read
//	r  Update knows the stored item itself
//	w  a transaction writes whole items
//	i  only Update and Add record an idempotency key
//
// MustExist is a rule of Update and Add: a Save of an unsaved item creates
// it (require an existing item there with If). The other refusals depend on
// the values given, or are of other option types:
//
//	option                                        call                           what happens
//	WithSaveBehavior(SaveClobber) without If      TxCheck                        refused: the check would check nothing
//	WithRequestToken                              Transact                       refused: each commit needs its own token; use WriteTx
//	Descending                                    Scan, ScanPage, ParallelScan   refused: a scan has no order
//	Segment                                       Query, QueryPage, ParallelScan refused: only Scan and ScanPage take a segment
//	StartAfter                                    ParallelScan                   refused: it has one position per segment
//	ConsistentRead with Index(a global index      Query, Scan (and pages)        refused: DynamoDB reads a global index only
//	  the tags declare)                                                            eventually consistently
//	ChangedFrom with WithSaveBehavior(any but     Save                           refused: only SaveUpdate writes the changes alone;
//	  SaveUpdate), on an unversioned type, an                                      only the version condition makes the stored
//	  unsaved item, an item read of another                                        item the one read
//	  key or version, or nil
//	WithSaveBehavior(SaveClobber)                 BatchSave, BatchDelete of a    accepted, does nothing: there is no check
//	                                              type with no version or entity to turn off
//
// The calls that repeat requests — Update after a conflict, batches after
// unprocessed items, transactions after TransactionConflict, CreateTable
// while polling — follow one RetryPolicy, given with WithRetry to NewMapper
// or to the call; Save and Delete send one write and take none.
//
// # Telemetry
//
// Every call (Load, Save, Delete, Update, Add, the batch calls, each Query
// or Scan page, WriteTx, ReadTx, Transact, CreateTable) is an OpenTelemetry
// span with the semantic conventions' DynamoDB attributes, and what only
// the mapper knows is reported as span events and metrics: conflicts and
// retries, lost answers settled by a read and their verdict, unknown
// outcomes, combined writes, transaction re-runs, batch items sent again.
// WithTracerProvider and WithMeterProvider set the providers (the global
// ones, looked up at each call, by default), WithLogger a *slog.Logger for
// the events an operator must see (an unknown outcome, at Warn); lease and
// commitlog clients built on the mapper use the same. No item value is
// recorded anywhere; keys only with WithTelemetryKeys. Off — no provider
// set, or no-op ones — it allocates nothing. docs/telemetry.md lists every
// span, attribute, event and metric.
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
