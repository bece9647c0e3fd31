// Package telemetry is the OpenTelemetry and slog plumbing shared by the
// mapper (package dynamo), lease and commitlog: the providers a Mapper was
// given (or the global ones), the tracer and instruments made from them, the
// names of every span, attribute, event and metric, and the logger.
//
// It depends on the OpenTelemetry API only. What it costs when off: with
// no provider given and none set globally (or no-op providers given),
// State reports Off and nothing else is done — no span is started, no
// attribute built, nothing allocated. Providers are resolved on every call
// (an atomic load per provider) rather than once, so that a global provider
// set after NewMapper (otel.SetTracerProvider, as programs do after their
// libraries are set up) is used from then on.
package telemetry

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every tracer and meter: the
// module path.
const ScopeName = "github.com/ddbkit/dynamo"

// Config is what a Mapper was given.
type Config struct {
	TP   trace.TracerProvider // nil: otel.GetTracerProvider() at each call
	MP   metric.MeterProvider // nil: otel.GetMeterProvider() at each call
	Log  *slog.Logger         // nil: no logs
	Keys bool                 // record item keys (never values) on spans and logs
}

// T is the telemetry of one Mapper. Nil uses the global providers and logs
// nothing.
type T struct {
	Config
	st atomic.Pointer[State]
	mu sync.Mutex
}

// State is what T resolved its providers to: a tracer when tracing is on,
// instruments when metrics are on.
type State struct {
	tp     trace.TracerProvider
	mp     metric.MeterProvider
	ptrs   bool         // tp and mp are pointers, or nil (holds)
	Tracer trace.Tracer // nil when tracing is off
	M      *Instruments // nil when metrics are off
	Keys   bool
	Log    *slog.Logger
}

// Off reports whether neither traces nor metrics are recorded.
func (s *State) Off() bool { return s.Tracer == nil && s.M == nil }

// globalTP and globalMP are the global providers OpenTelemetry starts with
// (delegating no-ops until a program sets its own): seen there, the global
// provider is not set and telemetry is off. When this package's variables
// are initialised after a program set its own already (in an init
// function), they are not the defaults: nil then, never matched.
var (
	globalTP = defaultOnly(otel.GetTracerProvider())
	globalMP = defaultOnly(otel.GetMeterProvider())
)

func defaultOnly[P any](p P) any {
	if t := reflect.TypeOf(p); t != nil && t.PkgPath() == "" && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "go.opentelemetry.io/otel/internal/global" {
		return p
	}
	return nil
}

// offState is the State of telemetry that is off.
var offState = &State{}

// State returns the current state of t: its providers, or the global ones
// as set now. It allocates nothing unless a provider changed since the last
// call.
func (t *T) State() *State {
	if t == nil {
		return offState
	}
	tp, mp := t.TP, t.MP
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	if s := t.st.Load(); s != nil && s.holds(tp, mp) {
		return s
	}
	return t.resolve(tp, mp)
}

// holds reports whether s was resolved from tp and mp. == on two
// interfaces panics only when both hold one type and its values cannot be
// compared; a pointer's always can, so providers that are pointers (as
// OpenTelemetry's are) are compared without same's deferred recover.
func (s *State) holds(tp trace.TracerProvider, mp metric.MeterProvider) bool {
	if s.ptrs {
		return s.tp == tp && s.mp == mp
	}
	return same(s.tp, tp) && same(s.mp, mp)
}

// same compares two providers; providers of types that cannot be compared
// (a struct holding a slice, say) are never the same, and are resolved
// again on every call.
func same(a, b any) (eq bool) {
	defer func() {
		if recover() != nil {
			eq = false
		}
	}()
	return a == b
}

// isPointer reports whether p holds a pointer, or nothing.
func isPointer(p any) bool {
	typ := reflect.TypeOf(p)
	return typ == nil || typ.Kind() == reflect.Pointer
}

func (t *T) resolve(tp trace.TracerProvider, mp metric.MeterProvider) *State {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s := t.st.Load(); s != nil && same(s.tp, tp) && same(s.mp, mp) {
		return s
	}
	s := &State{tp: tp, mp: mp, Keys: t.Keys, Log: t.Log, ptrs: isPointer(tp) && isPointer(mp)}
	if tracingOn(tp) {
		s.Tracer = tp.Tracer(ScopeName)
	}
	if meteringOn(mp) {
		s.M = newInstruments(mp.Meter(ScopeName))
	}
	t.st.Store(s)
	return s
}

func tracingOn(tp trace.TracerProvider) bool {
	switch tp.(type) {
	case tracenoop.TracerProvider, *tracenoop.TracerProvider:
		return false
	}
	return globalTP == nil || !same(tp, globalTP)
}

func meteringOn(mp metric.MeterProvider) bool {
	switch mp.(type) {
	case metricnoop.MeterProvider, *metricnoop.MeterProvider:
		return false
	}
	return globalMP == nil || !same(mp, globalMP)
}

// Logger returns the logger of t, nil when none was given.
func (t *T) Logger() *slog.Logger {
	if t == nil {
		return nil
	}
	return t.Log
}

// Event adds an event to the span in ctx when it records.
func Event(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// Recording reports whether the span in ctx records: whether building
// attributes for it is worth it.
func Recording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// SetAttributes sets attributes on the span in ctx when it records.
func SetAttributes(ctx context.Context, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attrs...)
	}
}

// OfMapper returns the telemetry of a *dynamo.Mapper (nil for anything
// else); package dynamo sets it, so that lease and commitlog take the
// telemetry of the mapper they are built on without an exported accessor.
var OfMapper func(mapper any) *T
