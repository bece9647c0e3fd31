package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the OpenTelemetry semantic conventions for DynamoDB
// (status: development), defined here rather than imported from a semconv
// package, whose versions move.
const (
	DBSystemName         = attribute.Key("db.system.name")           // always "aws.dynamodb"
	DBOperationName      = attribute.Key("db.operation.name")        // the library's call: "Load", "Save", ...
	DBTableNames         = attribute.Key("aws.dynamodb.table_names") // []string
	DBIndexName          = attribute.Key("aws.dynamodb.index_name")
	DBConsistentRead     = attribute.Key("aws.dynamodb.consistent_read")
	DBLimit              = attribute.Key("aws.dynamodb.limit")
	DBSegment            = attribute.Key("aws.dynamodb.segment")
	DBTotalSegments      = attribute.Key("aws.dynamodb.total_segments")
	ErrorType            = attribute.Key("error.type")
	SystemDynamoDB       = "aws.dynamodb"
	DBItemCount          = attribute.Key("aws.dynamodb.item_count") // items a batch call or page carried
	DBTransactItemsCount = attribute.Key("ddbkit.tx.items")         // members of a transaction
	// DBThrottlingReason is the first ThrottlingReason of a throttled call
	// (e.g. TableWriteKeyRangeThroughputExceeded; "other" when not of
	// DynamoDB's shape): never the resource's ARN, nor a key.
	DBThrottlingReason = attribute.Key("aws.dynamodb.throttling_reason")
)

// The library's own attribute keys.
const (
	Attempt       = attribute.Key("ddbkit.attempt")        // 1 for the first write of a call
	VersionHeld   = attribute.Key("ddbkit.version.held")   // the version a conflicting write held
	VersionFound  = attribute.Key("ddbkit.version.found")  // the version it found stored (-1: no item)
	Verdict       = attribute.Key("ddbkit.settle.verdict") // what the read settling a lost answer found
	Changes       = attribute.Key("ddbkit.write.changes")  // the changes one combined write carried
	Reason        = attribute.Key("ddbkit.tx.rerun.reason")
	Run           = attribute.Key("ddbkit.tx.run") // the run of a Transact function, 1 first
	Key           = attribute.Key("ddbkit.key")    // an item's key, only with WithTelemetryKeys
	LeaseKey      = attribute.Key("ddbkit.lease.key")
	LeaseToken    = attribute.Key("ddbkit.lease.token")
	LeaseReason   = attribute.Key("ddbkit.lease.lost.reason")
	LogName       = attribute.Key("ddbkit.commitlog.name")
	LogVersion    = attribute.Key("ddbkit.commitlog.version")
	CommitOp      = attribute.Key("ddbkit.commitlog.op")
	ResentItems   = attribute.Key("ddbkit.batch.resent")
	UnknownReason = attribute.Key("ddbkit.unknown.reason")
)

// Settle verdicts (Verdict).
const (
	VerdictApplied    = "applied"     // the write's own token found: a success
	VerdictNotApplied = "not_applied" // the item as the write found it: sent again
	VerdictConflict   = "conflict"    // someone else's write: reported as a conflict (unknown outcome)
	VerdictReadFailed = "read_failed" // the settling read failed: unknown outcome
)

// Span event names.
const (
	EventConflict  = "ddbkit.conflict"        // a write's condition failed on another version; attributes: Attempt, VersionHeld, VersionFound
	EventRetry     = "ddbkit.retry"           // the call tries again; Attempt is the next attempt
	EventSettle    = "ddbkit.settle"          // a lost answer settled by a consistent read; Verdict
	EventUnknown   = "ddbkit.unknown_outcome" // the call ends not knowing whether its write was applied
	EventCombined  = "ddbkit.combined_write"  // Update wrote several callers' changes at once; Changes
	EventRerun     = "ddbkit.tx.rerun"        // Transact runs its function again; Reason, Run
	EventResent    = "ddbkit.batch.resent"    // a batch sends again the items DynamoDB left unprocessed; ResentItems
	EventLeaseLost = "ddbkit.lease.lost"      // a held lease was lost; LeaseReason
	EventReclaimed = "ddbkit.commitlog.reclaimed"
	// EventReplicatedConflict: an MRSC table refused Update's write for a
	// concurrent write from another Region; Attempt. Update reads again.
	EventReplicatedConflict = "ddbkit.replicated_conflict"
)

// Metric names.
const (
	MetricDuration   = "ddbkit.dynamo.operation.duration" // histogram, s; DBOperationName, DBTableNames, ErrorType
	MetricConflicts  = "ddbkit.dynamo.conflicts"          // counter; DBOperationName, DBTableNames
	MetricRetries    = "ddbkit.dynamo.retries"            // counter; DBOperationName, DBTableNames
	MetricSettled    = "ddbkit.dynamo.settled"            // counter; Verdict
	MetricUnknown    = "ddbkit.dynamo.unknown_outcomes"   // counter; DBOperationName, DBTableNames
	MetricReruns     = "ddbkit.dynamo.tx.reruns"          // counter; Reason
	MetricResent     = "ddbkit.dynamo.batch.resent_items" // counter; DBOperationName, DBTableNames
	MetricWriteSize  = "ddbkit.dynamo.write.changes"      // histogram; changes per combined write
	MetricLeasesHeld = "ddbkit.lease.held"                // up-down counter; DBTableNames
	MetricLeasesLost = "ddbkit.lease.lost"                // counter; DBTableNames, LeaseReason
	MetricReclaimed  = "ddbkit.commitlog.reclaimed"       // counter; DBTableNames
)

// Instruments are the metric instruments of one meter.
type Instruments struct {
	Duration   metric.Float64Histogram
	Conflicts  metric.Int64Counter
	Retries    metric.Int64Counter
	Settled    metric.Int64Counter
	Unknown    metric.Int64Counter
	Reruns     metric.Int64Counter
	Resent     metric.Int64Counter
	WriteSize  metric.Int64Histogram
	LeasesHeld metric.Int64UpDownCounter
	LeasesLost metric.Int64Counter
	Reclaimed  metric.Int64Counter
}

// newInstruments makes the instruments from m. An instrument m fails to make
// is a no-op (OpenTelemetry's meters return one along with the error, and
// report the error to the global error handler).
func newInstruments(m metric.Meter) *Instruments {
	i := &Instruments{}
	i.Duration, _ = m.Float64Histogram(MetricDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of the library's calls, from the call to its return, retries and settling reads included."),
		metric.WithExplicitBucketBoundaries(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
	i.Conflicts, _ = m.Int64Counter(MetricConflicts, metric.WithUnit("{conflict}"),
		metric.WithDescription("Writes refused because the item held another version than the one the writer held."))
	i.Retries, _ = m.Int64Counter(MetricRetries, metric.WithUnit("{retry}"),
		metric.WithDescription("Attempts made again after a conflict (Update) or a throttled or cancelled request (batches, transactions)."))
	i.Settled, _ = m.Int64Counter(MetricSettled, metric.WithUnit("{write}"),
		metric.WithDescription("Writes whose answer was lost, settled by a consistent read, by verdict."))
	i.Unknown, _ = m.Int64Counter(MetricUnknown, metric.WithUnit("{call}"),
		metric.WithDescription("Calls that returned ErrUnknownOutcome: their write may or may not have been applied."))
	i.Reruns, _ = m.Int64Counter(MetricReruns, metric.WithUnit("{run}"),
		metric.WithDescription("Transact functions run again, by reason."))
	i.Resent, _ = m.Int64Counter(MetricResent, metric.WithUnit("{item}"),
		metric.WithDescription("Batch items DynamoDB left unprocessed and that were sent again."))
	i.WriteSize, _ = m.Int64Histogram(MetricWriteSize, metric.WithUnit("{change}"),
		metric.WithDescription("Changes carried by one write of Update (several callers of one key are combined)."),
		metric.WithExplicitBucketBoundaries(1, 2, 4, 8, 16, 32, 64))
	i.LeasesHeld, _ = m.Int64UpDownCounter(MetricLeasesHeld, metric.WithUnit("{lease}"),
		metric.WithDescription("Leases held by this process."))
	i.LeasesLost, _ = m.Int64Counter(MetricLeasesLost, metric.WithUnit("{lease}"),
		metric.WithDescription("Leases lost while held (not released): taken over, expired, or the heartbeat failed."))
	i.Reclaimed, _ = m.Int64Counter(MetricReclaimed, metric.WithUnit("{record}"),
		metric.WithDescription("Commit-log records left by a writer that stopped, reclaimed by another."))
	return i
}
