package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ddbkit/dynamo/internal/errs"
)

// Call is the telemetry of one call of the mapper in progress; the zero
// value (telemetry off) does nothing.
type Call struct {
	ctx   context.Context
	span  trace.Span // nil when tracing is off
	m     *Instruments
	log   *slog.Logger
	start time.Time
	op    string // "" when telemetry is off
	table string
	// tables are the tables a transaction call (table "") writes, once
	// known (NoteTables).
	tables []string
}

// ErrPanicked is the error a call's telemetry records when the call ended
// by a panic (error.type "panic"); the caller gets the panic, never it.
var ErrPanicked = errors.New("dynamo: the call panicked")

// Begin starts the telemetry of call op on table: a span (returned in ctx,
// so that the SDK's request spans nest under it) when tracing is on, the
// clock when metrics are on.
func Begin(tel *T, ctx context.Context, op, table string) (context.Context, Call) {
	st := tel.State()
	if st.Off() && st.Log == nil {
		return ctx, Call{}
	}
	c := Call{op: op, table: table, m: st.M, log: st.Log}
	if st.Tracer != nil {
		name := op
		attrs := []attribute.KeyValue{DBSystemName.String(SystemDynamoDB), DBOperationName.String(op)}
		if table != "" { // transactions span tables
			name = op + " " + table
			attrs = append(attrs, DBTableNames.StringSlice([]string{table}))
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

// Recording reports whether the call has a span that records.
func (c *Call) Recording() bool { return c.span != nil }

// SetAttributes sets attrs on the call's span, when it records.
func (c *Call) SetAttributes(attrs ...attribute.KeyValue) {
	if c.span != nil {
		c.span.SetAttributes(attrs...)
	}
}

// End ends the call with err (nil: success) and returns err: class names
// err's kind (error.type), reason its throttling reason ("" none).
func (c *Call) End(err error, class, reason func(error) string) error {
	if c.op == "" {
		return err
	}
	var cl, why string
	unknown := false
	if err != nil {
		cl, why = class(err), reason(err)
		unknown = errors.Is(err, errs.ErrUnknownOutcome)
	}
	if c.span != nil {
		c.endSpan(err, cl, why, unknown)
	}
	if c.m != nil {
		attrs := c.metricAttrs(cl)
		if why != "" {
			attrs = attribute.NewSet(append(attrs.ToSlice(), DBThrottlingReason.String(why))...)
		}
		c.m.Duration.Record(c.ctx, time.Since(c.start).Seconds(), metric.WithAttributeSet(attrs))
		if unknown {
			c.m.Unknown.Add(c.ctx, 1, metric.WithAttributeSet(c.metricAttrs("")))
		}
		if !unknown && errors.Is(err, errs.ErrVersionConflict) {
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

func (c *Call) endSpan(err error, class, reason string, unknown bool) {
	if err != nil {
		c.span.SetAttributes(ErrorType.String(class))
		if reason != "" {
			c.span.SetAttributes(DBThrottlingReason.String(reason))
		}
		if unknown {
			c.span.AddEvent(EventUnknown)
		}
		if !errors.Is(err, errs.ErrNotFound) {
			// The class only: messages name keys and conditions' values.
			c.span.SetStatus(codes.Error, class)
		}
	}
	c.span.End()
}

// NoteTables records the tables of a transaction's members on a
// transaction call (c nil or telemetry off: nothing): the unknown-outcome
// log names them, and so does the span (aws.dynamodb.table_names).
func (c *Call) NoteTables(tables func(yield func(string) bool)) {
	if c == nil || c.op == "" || c.table != "" {
		return
	}
	c.tables = c.tables[:0]
	for t := range tables {
		if !slices.Contains(c.tables, t) {
			c.tables = append(c.tables, t)
		}
	}
	slices.Sort(c.tables)
	if c.span != nil {
		c.span.SetAttributes(DBTableNames.StringSlice(c.tables))
	}
}

func (c *Call) metricAttrs(class string) attribute.Set {
	kv := make([]attribute.KeyValue, 1, 3)
	kv[0] = DBOperationName.String(c.op)
	if c.table != "" {
		kv = append(kv, DBTableNames.StringSlice([]string{c.table}))
	}
	if class != "" {
		kv = append(kv, ErrorType.String(class))
	}
	return attribute.NewSet(kv...)
}

// TableAttrs is the metric attribute set of op on table.
func TableAttrs(op, table string, more ...attribute.KeyValue) metric.MeasurementOption {
	kv := append([]attribute.KeyValue{DBOperationName.String(op), DBTableNames.StringSlice([]string{table})}, more...)
	return metric.WithAttributes(kv...)
}

// Reasons a Transact function runs again (Reason).
const (
	RerunItemChanged = "item_changed"         // an item it read changed before the commit
	RerunTxConflict  = "transaction_conflict" // another transaction was in flight on an item
	RerunSnapshots   = "read_snapshots"       // a read-only run read items from several snapshots that differ
)
