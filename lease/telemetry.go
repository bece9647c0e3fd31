package lease

import (
	"context"
	"errors"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// Telemetry of leases: the spans lease.Acquire, lease.TryAcquire and
// lease.Release (the mapper's spans of the requests nest under them), a
// span lease.Lost with the event ddbkit.lease.lost when a held lease is
// lost, the up-down counter ddbkit.lease.held and the counter
// ddbkit.lease.lost. All come from the telemetry of the Mapper the client
// was built on (dynamo.WithTracerProvider, WithMeterProvider, WithLogger);
// its logger is used unless WithLogger was given here. The lease key and
// owner ids are recorded (spans, logs: c.log, a telemetry.Log) only with
// dynamo.WithTelemetryKeys; the token always.

// span starts a span of op on key when tracing is on; span is nil when it
// is off or does not record.
func (c *Client) span(ctx context.Context, op, key string) (context.Context, trace.Span) {
	st := c.tel.State()
	if st.Tracer == nil {
		return ctx, nil
	}
	attrs := []attribute.KeyValue{telemetry.DBSystemName.String(telemetry.SystemDynamoDB), telemetry.DBOperationName.String(op),
		telemetry.DBTableNames.StringSlice([]string{c.table.Name()})}
	if st.Keys {
		attrs = append(attrs, telemetry.LeaseKey.String(key))
	}
	ctx, span := st.Tracer.Start(ctx, op+" "+c.table.Name(), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	if !span.IsRecording() {
		return ctx, nil
	}
	return ctx, span
}

// endSpan ends span (nil: none) with the lease l took (nil: none) and err.
func endSpan(span trace.Span, l *Lease, err error) {
	if span == nil {
		return
	}
	if l != nil {
		span.SetAttributes(telemetry.LeaseToken.Int64(l.token))
	}
	if err != nil {
		span.SetAttributes(telemetry.ErrorType.String(errorClass(err)))
		span.SetStatus(codes.Error, errorClass(err))
	}
	span.End()
}

// errorClasses are the lease errors named in error.type, tried before the
// mapper's classes (telemetry.ErrorClass).
var errorClasses = []telemetry.Class{
	{Err: dynamo.ErrUnknownOutcome, Name: "unknown_outcome"},
	{Err: ErrHeld, Name: "held"},
	{Err: ErrLost, Name: "lost"},
	{Err: ErrClosed, Name: "closed"},
}

// errorClass names the kind of a lease error (never its message, which
// names keys and owners): a lease sentinel, else as the mapper names it.
func errorClass(err error) string { return telemetry.ErrorClass(err, errorClasses...) }

func (c *Client) metricAttrs() metric.MeasurementOption {
	return metric.WithAttributes(telemetry.DBTableNames.StringSlice([]string{c.table.Name()}))
}

// noteHeld counts a lease taken (+1, by newHeld) or ended (-1, by
// Lease.end) in ddbkit.lease.held.
func (c *Client) noteHeld(n int64) {
	if im := c.tel.State().M; im != nil {
		im.LeasesHeld.Add(context.Background(), n, c.metricAttrs())
	}
}

// noteLost records the loss of l for reason: a span lease.Lost with the
// event ddbkit.lease.lost, and ddbkit.lease.lost counted.
func (l *Lease) noteLost(reason error) {
	c := l.c
	st := c.tel.State()
	why := lostClass(reason)
	if st.Tracer != nil {
		_, span := c.span(context.Background(), "lease.Lost", l.key)
		if span != nil {
			span.AddEvent(telemetry.EventLeaseLost, trace.WithAttributes(telemetry.LeaseToken.Int64(l.token), telemetry.LeaseReason.String(why)))
			span.SetAttributes(telemetry.LeaseToken.Int64(l.token), telemetry.LeaseReason.String(why))
			span.End()
		}
	}
	if st.M != nil {
		st.M.LeasesLost.Add(context.Background(), 1, metric.WithAttributes(telemetry.DBTableNames.StringSlice([]string{c.table.Name()}), telemetry.LeaseReason.String(why)))
	}
}

// lostClass names why a lease was lost: "expired" (not extended in time),
// "taken_over", "released_by_other", "deleted", or "error" (a heartbeat
// failed for another reason). The phrases are those of the ErrLost errors
// made in held.go.
func lostClass(reason error) string {
	if errors.Is(reason, errRecordDeleted) {
		return "deleted"
	}
	msg := reason.Error()
	for _, c := range [...]struct{ phrase, class string }{
		{"was not extended within", "expired"},
		{"taken over by", "taken_over"},
		{"released by", "released_by_other"},
	} {
		if strings.Contains(msg, c.phrase) {
			return c.class
		}
	}
	return "error"
}
