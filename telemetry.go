package dynamo

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Telemetry: every call of the package (Load, Save, Delete, Update, Add,
// the batch calls, each page of a Query or Scan, WriteTx, ReadTx, Transact,
// CreateTable) is one OpenTelemetry span with the semantic conventions'
// DynamoDB attributes, and records its duration; the library's own events
// (conflicts, retries, settled lost answers, unknown outcomes, combined
// writes, transaction re-runs, batch items sent again) are span events and
// metrics. The names are listed in docs/telemetry.md. Operation code calls
// the small hooks below; when telemetry is off they return at once and
// allocate nothing.

// WithTracerProvider sets the OpenTelemetry tracer provider of the mapper
// (and of the lease and commitlog clients built on it). The default is the
// global one (otel.GetTracerProvider()), looked up at each call, so that a
// provider set globally after NewMapper is used; while none is set, no span
// is started. A nil tp is the default.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return mapperOption(func(o *mapperOptions) { o.tel.TP = tp })
}

// WithMeterProvider sets the OpenTelemetry meter provider of the mapper (and
// of the lease and commitlog clients built on it). The default is the
// global one (otel.GetMeterProvider()), looked up at each call as with
// WithTracerProvider. A nil mp is the default.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return mapperOption(func(o *mapperOptions) { o.tel.MP = mp })
}

// WithLogger sets where the mapper logs the few events an operator must see:
// a write whose outcome stayed unknown (Warn); the lease and commitlog
// clients built on the mapper log there too (lease loss, commit-log records
// reclaimed) unless given their own. The default, nil, logs nothing. No
// item value is ever logged; keys only with WithTelemetryKeys.
func WithLogger(l *slog.Logger) Option {
	return mapperOption(func(o *mapperOptions) { o.tel.Log = l })
}

// WithTelemetryKeys makes spans and logs carry the primary key of the item a
// call reads or writes (attribute ddbkit.key). Off by default: keys may be
// personal data. Item values other than keys are never recorded.
func WithTelemetryKeys() Option {
	return mapperOption(func(o *mapperOptions) { o.tel.Keys = true })
}

func init() {
	telemetry.OfMapper = func(m any) *telemetry.T {
		if m, ok := m.(*Mapper); ok && m != nil {
			return m.tel
		}
		return nil
	}
	telemetry.MapperErrorClass = errorClass
}

// call is the telemetry of one call in progress (telemetry.Call); the
// zero value (telemetry off) does nothing.
type call struct{ telemetry.Call }

// begin starts the telemetry of call op on table (telemetry.Begin).
func (m *Mapper) begin(ctx context.Context, op, table string) (context.Context, call) {
	ctx, c := telemetry.Begin(m.tel, ctx, op, table)
	return ctx, call{c}
}

// recording reports whether the call has a span that records.
func (c *call) recording() bool { return c.Recording() }

// end ends the call with err (nil: success) and returns err.
func (c *call) end(err error) error { return c.End(err, errorClass, throttleReasonAttr) }

// noteTables records the tables of a transaction's members on a
// transaction call (telemetry.Call.NoteTables).
func (c *call) noteTables(members []*txMember) {
	if c == nil {
		return
	}
	c.NoteTables(func(yield func(string) bool) {
		for _, mem := range members {
			if !yield(mem.table) {
				return
			}
		}
	})
}

// endp is end for a deferred call with a named error result: the call ends
// with that error, or, when it is unwinding from a panic (a function of the
// caller's — Update's, Transact's — panicked), with telemetry.ErrPanicked,
// and the panic goes on with its value. The one way a call that runs the
// caller's code ends its span.
func (c *call) endp(err *error) {
	if r := recover(); r != nil {
		c.end(telemetry.ErrPanicked)
		panic(r)
	}
	c.end(*err)
}

// mapperClasses are the mapper's sentinels named in error.type, in the
// order they are tried.
var mapperClasses = []telemetry.Class{
	{Err: ErrUnknownOutcome, Name: "unknown_outcome"},
	{Err: ErrVersionConflict, Name: "version_conflict"},
	{Err: ErrConditionFailed, Name: "condition_failed"},
	{Err: ErrReplicatedConflict, Name: "replicated_conflict"},
	{Err: ErrNotFound, Name: "not_found"},
	{Err: ErrInvalidInput, Name: "invalid_input"},
	{Err: ErrTableNotFound, Name: "table_not_found"},
	{Err: context.Canceled, Name: "canceled"},
	{Err: context.DeadlineExceeded, Name: "deadline_exceeded"},
	{Err: telemetry.ErrPanicked, Name: "panic"},
}

// errorClass names the kind of err for error.type: the package's sentinel
// it wraps, a transaction's or a batch's error, else the Go type of the
// error it wraps (telemetry.ContextClass). Never its message, which names
// keys and the values of conditions. lease and commitlog name the errors
// of the mapper they return with it (telemetry.MapperErrorClass).
func errorClass(err error) string {
	for _, c := range mapperClasses {
		if errors.Is(err, c.Err) {
			return c.Name
		}
	}
	var te *TxError
	if errors.As(err, &te) {
		return "transaction_canceled"
	}
	var be *BatchWriteError
	if errors.As(err, &be) {
		return "batch_incomplete"
	}
	var th *ThrottlingError
	if errors.As(err, &th) {
		return "throttled"
	}
	return telemetry.ContextClass(err)
}

// instruments returns the metric instruments of the mapper, nil when
// metrics are off.
func (m *Mapper) instruments() *telemetry.Instruments { return m.tel.State().M }

// noteKey records key k on the span in ctx when the user turned keys on
// (WithTelemetryKeys).
func (m *Mapper) noteKey(ctx context.Context, k map[string]types.AttributeValue) {
	if m.tel == nil || !m.tel.Keys {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(telemetry.Key.String(formatKey(k)))
	}
}

// noteConflict records that Update's attempt met another version of the
// item (held, found; found -1: no item) and tries again; ce nil: a
// replicated write conflict (no versions known).
func (t *table) noteConflict(ctx context.Context, attempt int, ce *ConditionError) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		if ce == nil {
			span.AddEvent(telemetry.EventReplicatedConflict, trace.WithAttributes(telemetry.Attempt.Int(attempt)))
		} else {
			found := int64(-1)
			if ce.Exists {
				found = ce.FoundVersion
			}
			span.AddEvent(telemetry.EventConflict, trace.WithAttributes(telemetry.Attempt.Int(attempt),
				telemetry.VersionHeld.Int64(ce.HeldVersion), telemetry.VersionFound.Int64(found)))
		}
		span.AddEvent(telemetry.EventRetry, trace.WithAttributes(telemetry.Attempt.Int(attempt+1)))
	}
	if im := t.m.instruments(); im != nil {
		im.Conflicts.Add(ctx, 1, telemetry.TableAttrs("Update", t.name))
		im.Retries.Add(ctx, 1, telemetry.TableAttrs("Update", t.name))
	}
}

// noteCombined records a write of Update carrying n changes (n > 1: several
// callers' changes combined).
func (t *table) noteCombined(ctx context.Context, n int) {
	if span := trace.SpanFromContext(ctx); n > 1 && span.IsRecording() {
		span.AddEvent(telemetry.EventCombined, trace.WithAttributes(telemetry.Changes.Int(n)))
	}
	if im := t.m.instruments(); im != nil {
		im.WriteSize.Record(ctx, int64(n), telemetry.TableAttrs("Update", t.name))
	}
}

// noteSettle records the verdict of the read that settled a lost answer.
func (t *table) noteSettle(ctx context.Context, verdict string) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(telemetry.EventSettle, trace.WithAttributes(telemetry.Verdict.String(verdict)))
	}
	if im := t.m.instruments(); im != nil {
		im.Settled.Add(ctx, 1, metric.WithAttributes(telemetry.DBTableNames.StringSlice([]string{t.name}), telemetry.Verdict.String(verdict)))
	}
}

// noteResent records that n batch items DynamoDB left unprocessed are sent
// again by call op.
func (m *Mapper) noteResent(ctx context.Context, op, table string, attempt, n int) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(telemetry.EventResent, trace.WithAttributes(telemetry.Attempt.Int(attempt+1), telemetry.ResentItems.Int(n)))
	}
	if im := m.instruments(); im != nil {
		im.Resent.Add(ctx, int64(n), telemetry.TableAttrs(op, table))
		im.Retries.Add(ctx, 1, telemetry.TableAttrs(op, table))
	}
}

// noteRerun records that Transact runs its function again (run is the next
// run) after the commit that failed with err.
func (m *Mapper) noteRerun(ctx context.Context, run int, err error) {
	span := trace.SpanFromContext(ctx)
	im := m.instruments()
	if im == nil && !span.IsRecording() {
		return
	}
	reason := rerunReason(err)
	if span.IsRecording() {
		span.AddEvent(telemetry.EventRerun, trace.WithAttributes(telemetry.Run.Int(run), telemetry.Reason.String(reason)))
	}
	if im != nil {
		im.Reruns.Add(ctx, 1, metric.WithAttributes(telemetry.Reason.String(reason)))
	}
}

// rerunReason tells why the commit that failed with err makes Transact run
// its function again.
func rerunReason(err error) string {
	var te *TxError
	if !errors.As(err, &te) {
		return telemetry.RerunSnapshots
	}
	for _, f := range te.Failures {
		if f.Code == TxCodeConditionFailed {
			return telemetry.RerunItemChanged
		}
	}
	return telemetry.RerunTxConflict
}

// begin starts the span of one Query or Scan page: at most n items (0:
// DynamoDB's default), scan segment segment.
func (l *listing) begin(ctx context.Context, n, segment int) (context.Context, call) {
	op := "Query"
	if l.query == nil {
		op = "Scan"
	}
	ctx, tc := telemetry.Begin(l.tel, ctx, op, l.table)
	c := call{tc}
	if !c.recording() {
		return ctx, c
	}
	consistent := false
	if l.query != nil && l.query.ConsistentRead != nil {
		consistent = *l.query.ConsistentRead
	} else if l.scan != nil && l.scan.ConsistentRead != nil {
		consistent = *l.scan.ConsistentRead
	}
	attrs := []attribute.KeyValue{telemetry.DBConsistentRead.Bool(consistent)}
	if l.index != "" {
		attrs = append(attrs, telemetry.DBIndexName.String(l.index))
	}
	if n > 0 {
		attrs = append(attrs, telemetry.DBLimit.Int(n))
	}
	if l.total > 0 {
		attrs = append(attrs, telemetry.DBSegment.Int(segment), telemetry.DBTotalSegments.Int(l.total))
	}
	c.SetAttributes(attrs...)
	return ctx, c
}

// noteConsistent sets aws.dynamodb.consistent_read on the call's span.
func (c *call) noteConsistent(consistent bool) {
	if c.recording() {
		c.SetAttributes(telemetry.DBConsistentRead.Bool(consistent))
	}
}

// noteItems sets the number of items a batch or transaction carries.
func (c *call) noteItems(n int) {
	if c.recording() {
		c.SetAttributes(telemetry.DBItemCount.Int(n))
	}
}
