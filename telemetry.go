package dynamo

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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

// call is the telemetry of one call in progress; the zero value (telemetry
// off) does nothing.
type call struct {
	ctx   context.Context
	span  trace.Span // nil when tracing is off
	m     *telemetry.Instruments
	log   *slog.Logger
	start time.Time
	op    string // "" when telemetry is off
	table string
	// tables are the tables a transaction call (table "") writes, once
	// known (noteTables).
	tables []string
}

// begin starts the telemetry of call op on table: a span (returned in ctx,
// so that the SDK's request spans nest under it) when tracing is on, the
// clock when metrics are on.
func (m *Mapper) begin(ctx context.Context, op, table string) (context.Context, call) {
	return beginCall(m.tel, ctx, op, table)
}

func beginCall(tel *telemetry.T, ctx context.Context, op, table string) (context.Context, call) {
	st := tel.State()
	if st.Off() && st.Log == nil {
		return ctx, call{}
	}
	c := call{op: op, table: table, m: st.M, log: st.Log}
	if st.Tracer != nil {
		name := op
		attrs := []attribute.KeyValue{telemetry.DBSystemName.String(telemetry.SystemDynamoDB), telemetry.DBOperationName.String(op)}
		if table != "" { // transactions span tables
			name = op + " " + table
			attrs = append(attrs, telemetry.DBTableNames.StringSlice([]string{table}))
		}
		ctx, c.span = st.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		if !c.span.IsRecording() {
			c.span = nil // sampled out: nothing to add; End is not needed either
		}
	}
	if c.m != nil {
		c.start = time.Now()
	}
	c.ctx = ctx
	return ctx, c
}

// recording reports whether the call has a span that records.
func (c *call) recording() bool { return c.span != nil }

// end ends the call with err (nil: success) and returns err.
func (c *call) end(err error) error {
	if c.op == "" {
		return err
	}
	var class, reason string
	unknown := false
	if err != nil {
		class = errorClass(err)
		unknown = errors.Is(err, ErrUnknownOutcome)
		reason = throttleReasonAttr(err)
	}
	if c.span != nil {
		if err != nil {
			c.span.SetAttributes(telemetry.ErrorType.String(class))
			if reason != "" {
				c.span.SetAttributes(telemetry.DBThrottlingReason.String(reason))
			}
			if unknown {
				c.span.AddEvent(telemetry.EventUnknown)
			}
			if !errors.Is(err, ErrNotFound) {
				// The class only: messages name keys and conditions' values.
				c.span.SetStatus(codes.Error, class)
			}
		}
		c.span.End()
	}
	if c.m != nil {
		attrs := c.metricAttrs(class)
		if reason != "" {
			attrs = attribute.NewSet(append(attrs.ToSlice(), telemetry.DBThrottlingReason.String(reason))...)
		}
		c.m.Duration.Record(c.ctx, time.Since(c.start).Seconds(), metric.WithAttributeSet(attrs))
		if unknown {
			c.m.Unknown.Add(c.ctx, 1, metric.WithAttributeSet(c.metricAttrs("")))
		}
		if !unknown && errors.Is(err, ErrVersionConflict) {
			c.m.Conflicts.Add(c.ctx, 1, metric.WithAttributeSet(c.metricAttrs("")))
		}
	}
	if unknown && c.log != nil {
		where := slog.String("table", c.table)
		if c.table == "" {
			where = slog.Any("tables", c.tables)
		}
		c.log.LogAttrs(c.ctx, slog.LevelWarn, "dynamo: a write's outcome is unknown: it may or may not have been applied; read the item to find out",
			slog.String("op", c.op), where)
	}
	return err
}

// noteTables records the tables of a transaction's members on a
// transaction call (c nil or telemetry off: nothing): the unknown-outcome
// log names them, and so does the span (aws.dynamodb.table_names).
func (c *call) noteTables(members []*txMember) {
	if c == nil || c.op == "" || c.table != "" {
		return
	}
	c.tables = c.tables[:0]
	for _, mem := range members {
		if !slices.Contains(c.tables, mem.table) {
			c.tables = append(c.tables, mem.table)
		}
	}
	slices.Sort(c.tables)
	if c.span != nil {
		c.span.SetAttributes(telemetry.DBTableNames.StringSlice(c.tables))
	}
}

// endp is end for a deferred call with a named error result: the call ends
// with that error, or, when it is unwinding from a panic (a function of the
// caller's — Update's, Transact's — panicked), with errPanicked, and the
// panic goes on with its value. The one way a call that runs the caller's
// code ends its span.
func (c *call) endp(err *error) {
	if r := recover(); r != nil {
		c.end(errPanicked)
		panic(r)
	}
	c.end(*err)
}

// errPanicked is the error a call's telemetry records when the call ended
// by a panic (error.type "panic"); the caller gets the panic, never it.
var errPanicked = errors.New("dynamo: the call panicked")

func (c *call) metricAttrs(class string) attribute.Set {
	kv := make([]attribute.KeyValue, 1, 3)
	kv[0] = telemetry.DBOperationName.String(c.op)
	if c.table != "" {
		kv = append(kv, telemetry.DBTableNames.StringSlice([]string{c.table}))
	}
	if class != "" {
		kv = append(kv, telemetry.ErrorType.String(class))
	}
	return attribute.NewSet(kv...)
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
	{Err: errPanicked, Name: "panic"},
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

// tableAttrs is the metric attribute set of op on table.
func tableAttrs(op, table string, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := append([]attribute.KeyValue{telemetry.DBOperationName.String(op), telemetry.DBTableNames.StringSlice([]string{table})}, more...)
	return metric.WithAttributes(kv...)
}

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
		im.Conflicts.Add(ctx, 1, tableAttrs("Update", t.name))
		im.Retries.Add(ctx, 1, tableAttrs("Update", t.name))
	}
}

// noteCombined records a write of Update carrying n changes (n > 1: several
// callers' changes combined).
func (t *table) noteCombined(ctx context.Context, n int) {
	if span := trace.SpanFromContext(ctx); n > 1 && span.IsRecording() {
		span.AddEvent(telemetry.EventCombined, trace.WithAttributes(telemetry.Changes.Int(n)))
	}
	if im := t.m.instruments(); im != nil {
		im.WriteSize.Record(ctx, int64(n), tableAttrs("Update", t.name))
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
		im.Resent.Add(ctx, int64(n), tableAttrs(op, table))
		im.Retries.Add(ctx, 1, tableAttrs(op, table))
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

// Reasons a Transact function runs again (ddbkit.tx.rerun.reason).
const (
	rerunItemChanged = "item_changed"         // an item it read changed before the commit
	rerunTxConflict  = "transaction_conflict" // another transaction was in flight on an item
	rerunSnapshots   = "read_snapshots"       // a read-only run read items from several snapshots that differ
)

// rerunReason tells why the commit that failed with err makes Transact run
// its function again.
func rerunReason(err error) string {
	var te *TxError
	if !errors.As(err, &te) {
		return rerunSnapshots
	}
	for _, f := range te.Failures {
		if f.Code == TxCodeConditionFailed {
			return rerunItemChanged
		}
	}
	return rerunTxConflict
}

// begin starts the span of one Query or Scan page: at most n items (0:
// DynamoDB's default), scan segment segment.
func (l *listing) begin(ctx context.Context, n, segment int) (context.Context, call) {
	op := "Query"
	if l.query == nil {
		op = "Scan"
	}
	ctx, c := beginCall(l.tel, ctx, op, l.table)
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
	c.span.SetAttributes(attrs...)
	return ctx, c
}

// noteConsistent sets aws.dynamodb.consistent_read on the call's span.
func (c *call) noteConsistent(consistent bool) {
	if c.recording() {
		c.span.SetAttributes(telemetry.DBConsistentRead.Bool(consistent))
	}
}

// noteItems sets the number of items a batch or transaction carries.
func (c *call) noteItems(n int) {
	if c.recording() {
		c.span.SetAttributes(telemetry.DBItemCount.Int(n))
	}
}
