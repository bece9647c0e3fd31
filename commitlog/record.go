package commitlog

// The DynamoDB items of the package. They are saved through the dynamo
// mapper, so every write is version-checked and carries the mapper's write
// token (attribute ddbkit_wt), which is how a write whose response was lost
// is recognised as our own.

// commitRecord is one Committer record: the lock on one conditional
// operation, keyed by the object's path and the precondition (the ETag held,
// or "*" for "does not exist").
//
// Committer table: hash key "path" (S), range key "etag" (S), TTL on "ttl".
type commitRecord struct {
	// Path is the object the operation writes (the destination of a copy).
	Path string `dynamo:"path,hash"`
	// ETag is the precondition: the ETag the writer holds, or "*" when the
	// object must not exist.
	ETag string `dynamo:"etag,range"`
	// Generation counts the holders of the record: 1 when created, +1 for
	// every reclaim (and for the write that marks it done). It is the
	// mapper's version attribute: create is a save of an unsaved record
	// (attribute_not_exists(generation)), reclaim a save holding the
	// generation seen (generation = :g).
	Generation int64 `dynamo:"generation,version"`
	// TimeoutMS is the holder's timeout in milliseconds; waiters wait this ×
	// their skew rate.
	TimeoutMS int64 `dynamo:"timeout"`
	// TTL is when DynamoDB may delete the record, in epoch seconds.
	TTL int64 `dynamo:"ttl,ttl"`
	// Done is set by the holder once its operation is finished (or was
	// never started): the record can be reclaimed at once.
	Done bool `dynamo:"done"`
	// Owner names the Committer that wrote the record, for people reading
	// the table.
	Owner string `dynamo:"owner"`
	// Incarnation is a random id written when the record is created and
	// kept by every reclaim and done mark. The generation starts again at 1
	// when the record is deleted (by TTL or by hand) and created again, so
	// waits and reclaims are keyed on the incarnation and the generation
	// together: a reclaim holds both (generation = :g AND incarnation =
	// :i). Records written before it existed have none ("").
	Incarnation string `dynamo:"incarnation,omitempty"`
	// Holder is a random id of the hold: new for every create and reclaim,
	// kept by the done mark. A record write whose answer was lost is
	// settled by reading the record: it is ours when it carries our holder
	// id.
	Holder string `dynamo:"holder,omitempty"`
}

// notExists is the ETag of a record whose operation requires that the
// object does not exist.
const notExists = "*"

// logRecord is one Log claim: version Version of log Log. Claims are
// permanent (no TTL): the set of claims is the log, and an entry's number is
// never given out twice.
//
// Log table: hash key "log" (S), range key "version" (N); no TTL.
type logRecord struct {
	// Log is the log's name.
	Log string `dynamo:"log,hash"`
	// Version is the entry's number, from 1.
	Version int64 `dynamo:"version,range"`
	// Temp is the temporary object holding the entry's data until it is
	// copied to its final name.
	Temp string `dynamo:"temp"`
	// Complete is set once the entry is at its final name.
	Complete bool `dynamo:"complete"`
	// Owner names the Log that claimed the version.
	Owner string `dynamo:"owner"`
	// Claimed is when the version was claimed, in epoch milliseconds on the
	// claimer's clock. It only tells other writers whether an incomplete
	// claim is old enough to be finished for its writer (see Log.Append).
	Claimed int64 `dynamo:"claimed"`
	// Rev is the mapper's version attribute: 1 for the claim (saved on
	// condition attribute_not_exists(rev)), 2 once marked complete.
	Rev int64 `dynamo:"rev,version"`
}
