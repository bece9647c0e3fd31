package commitlog

import (
	"context"
	"errors"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Telemetry of the commit log: a span per conditional store write of a
// Committer ("commitlog.PutIfNotExists", "commitlog.PutIfMatch",
// "commitlog.CopyIfNotExists") and per append of a Log ("commitlog.Append",
// "commitlog.AppendAt"), under which the mapper's spans of the record
// writes nest; the event ddbkit.commitlog.reclaimed and the counter of the
// same name when a record left by another writer is reclaimed. All come
// from the telemetry of the Mapper (dynamo.WithTracerProvider,
// WithMeterProvider, WithLogger); its logger is used unless WithLogger was
// given here. Object paths, log names and owners are recorded (spans, logs:
// a telemetry.Log) only with dynamo.WithTelemetryKeys; data never.

// newLog returns the logger of a Committer or Log built with o on a mapper
// of telemetry tel (tel.PackageLog), with attrs and the owner (an
// identifier) on every line.
func newLog(o options, tel *telemetry.T, attrs ...slog.Attr) *telemetry.Log {
	return tel.PackageLog(o.logger, errorClass).With(append(attrs, telemetry.ID("owner", o.owner))...)
}

// startSpan starts span op on table when tracing is on; nil when off or
// not recording. path (the object, or the log's name) is recorded with
// dynamo.WithTelemetryKeys only, as ddbkit.key (key, for a log's name).
func startSpan(ctx context.Context, tel *telemetry.T, op, table string, path attribute.KeyValue, more ...attribute.KeyValue) (context.Context, trace.Span) {
	st := tel.State()
	if st.Tracer == nil {
		return ctx, nil
	}
	attrs := append([]attribute.KeyValue{telemetry.DBSystemName.String(telemetry.SystemDynamoDB), telemetry.DBOperationName.String(op),
		telemetry.DBTableNames.StringSlice([]string{table})}, more...)
	if st.Keys && path.Value.AsString() != "" {
		attrs = append(attrs, path)
	}
	ctx, span := st.Tracer.Start(ctx, op+" "+table, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if !span.IsRecording() {
		return ctx, nil
	}
	return ctx, span
}

// endSpan ends span (nil: none) with err.
func endSpan(span trace.Span, err error, more ...attribute.KeyValue) {
	if span == nil {
		return
	}
	span.SetAttributes(more...)
	if err != nil {
		class := errorClass(err)
		span.SetAttributes(telemetry.ErrorType.String(class))
		if errors.Is(err, ErrUnknownOutcome) { // dynamo.ErrUnknownOutcome
			span.AddEvent(telemetry.EventUnknown)
		}
		span.SetStatus(codes.Error, class)
	}
	span.End()
}

// errorClasses are the commit-log errors named in error.type, tried before
// the mapper's classes (telemetry.ErrorClass).
var errorClasses = []telemetry.Class{
	{Err: ErrUnknownOutcome, Name: "unknown_outcome"},
	{Err: ErrPreconditionFailed, Name: "precondition_failed"},
	{Err: ErrExists, Name: "exists"},
	{Err: ErrGap, Name: "gap"},
	{Err: ErrInvalidInput, Name: "invalid_input"},
}

// errorClass names the kind of a commit-log error, never its message: a
// commit-log sentinel, else as the mapper names it.
func errorClass(err error) string { return telemetry.ErrorClass(err, errorClasses...) }

// noteReclaimed records that a record left by another writer is reclaimed:
// an event on the operation's span, ddbkit.commitlog.reclaimed counted.
func noteReclaimed(ctx context.Context, tel *telemetry.T, table string, generation int64) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(telemetry.EventReclaimed, trace.WithAttributes(attribute.Int64("ddbkit.commitlog.generation", generation)))
	}
	if im := tel.State().M; im != nil {
		im.Reclaimed.Add(ctx, 1, metric.WithAttributes(telemetry.DBTableNames.StringSlice([]string{table})))
	}
}

// spanNames are the span names of the Committer's operations, by
// operation name.
var spanNames = map[string]string{
	"put if not exists":  "commitlog.PutIfNotExists",
	"put if match":       "commitlog.PutIfMatch",
	"copy if not exists": "commitlog.CopyIfNotExists",
}

// commit is Committer.commitOp in a span.
func (c *Committer) commit(ctx context.Context, op operation) (ObjectInfo, error) {
	name := spanNames[op.name]
	if name == "" {
		name = "commitlog." + op.name
	}
	ctx, span := startSpan(ctx, c.tel, name, c.table.Name(), telemetry.Key.String(op.path))
	info, err := c.commitOp(ctx, op)
	endSpan(span, err)
	return info, err
}
