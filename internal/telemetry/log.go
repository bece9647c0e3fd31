package telemetry

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/smithy-go"
)

// Log is the logger of lease and commitlog: every line they log goes
// through it, and it owns the rule that identifiers — lease and item keys,
// object paths, log names, owner and worker ids — are logged only with
// WithTelemetryKeys. An attribute made with ID is such an identifier: kept
// with the opt-in, left out without it. An error made with Err is logged
// by its message with the opt-in (messages name keys and owners), by its
// class (as error.type) without it. Other attributes are logged as given.
// The zero Log and a nil *Log log nothing.
type Log struct {
	l     *slog.Logger
	keys  bool
	class func(error) string
}

// NewLog returns a Log writing to l (nil: nowhere), with identifiers when
// keys, naming errors with class (nil: ErrorClass).
func NewLog(l *slog.Logger, keys bool, class func(error) string) *Log {
	if class == nil {
		class = func(err error) string { return ErrorClass(err) }
	}
	return &Log{l: l, keys: keys, class: class}
}

// PackageLog returns the Log of a lease Client, Committer or Log built on
// a mapper of telemetry t (nil: none) with WithLogger(own): own, else (nil)
// the mapper's logger, else nowhere; identifiers only with the mapper's
// WithTelemetryKeys; errors named by class.
func (t *T) PackageLog(own *slog.Logger, class func(error) string) *Log {
	if own == nil && t != nil {
		own = t.Log
	}
	return NewLog(own, t != nil && t.Keys, class)
}

// Keys reports whether identifiers are logged.
func (g *Log) Keys() bool { return g != nil && g.keys }

// With returns a Log that adds attrs to every line, by the same rule.
func (g *Log) With(attrs ...slog.Attr) *Log {
	if g == nil || g.l == nil {
		return g
	}
	out := *g
	args := make([]any, 0, len(attrs))
	for _, a := range g.filter(attrs) {
		args = append(args, a)
	}
	out.l = g.l.With(args...)
	return &out
}

// Debug logs msg at Debug: per-key events (a key taken, released, handed
// over), which a fleet of many keys makes often.
func (g *Log) Debug(ctx context.Context, msg string, attrs ...slog.Attr) {
	g.log(ctx, slog.LevelDebug, msg, attrs)
}

// Info logs msg at Info: events per worker or client, or rare ones.
func (g *Log) Info(ctx context.Context, msg string, attrs ...slog.Attr) {
	g.log(ctx, slog.LevelInfo, msg, attrs)
}

// Warn logs msg at Warn: failures and losses an operator must see.
func (g *Log) Warn(ctx context.Context, msg string, attrs ...slog.Attr) {
	g.log(ctx, slog.LevelWarn, msg, attrs)
}

func (g *Log) log(ctx context.Context, level slog.Level, msg string, attrs []slog.Attr) {
	if g == nil || g.l == nil {
		return
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if !g.l.Enabled(ctx, level) {
		return
	}
	g.l.LogAttrs(ctx, level, msg, g.filter(attrs)...)
}

// filter applies the rule to attrs: identifiers kept or left out, errors
// by message or class.
func (g *Log) filter(attrs []slog.Attr) []slog.Attr {
	out := attrs[:0:0]
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindAny {
			switch v := a.Value.Any().(type) {
			case identifier:
				if g.keys {
					out = append(out, slog.Any(a.Key, v.v))
				}
				continue
			case errValue:
				if v.err == nil {
					continue
				}
				if g.keys {
					out = append(out, slog.Any(a.Key, v.err))
				} else {
					out = append(out, slog.String(a.Key, g.safeError(v.err)))
				}
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// safeError names err without its message: its class, and the error code
// of the DynamoDB or S3 answer it wraps, if any (codes name no keys).
func (g *Log) safeError(err error) string {
	s := g.class(err)
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() != "" && ae.ErrorCode() != s {
		s += " (" + ae.ErrorCode() + ")"
	}
	return s
}

type identifier struct{ v any }

type errValue struct{ err error }

// ID is an attribute holding an identifier (a key, a path, a log name, an
// owner or worker id): Log keeps it only with WithTelemetryKeys.
func ID(name string, v any) slog.Attr { return slog.Any(name, identifier{v}) }

// Err is an attribute holding an error: Log logs its message only with
// WithTelemetryKeys, its class without. A nil err is left out.
func Err(name string, err error) slog.Attr { return slog.Any(name, errValue{err}) }
