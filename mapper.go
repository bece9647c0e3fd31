package dynamo

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/ddbkit/dynamo/clock"
	"github.com/ddbkit/dynamo/internal/telemetry"
)

// DefaultWriteTokenAttribute is the attribute in which the mapper stores a
// random token with every versioned write (see WithWriteTokenAttribute).
const DefaultWriteTokenAttribute = "ddbkit_wt"

// Mapper maps tagged Go structs to DynamoDB items. It is safe for concurrent
// use and holds no per-call state; create one per Client and share it.
type Mapper struct {
	client Client // the caller's, wrapped in tableErrors; nil when none was given
	tel    *telemetry.T
	raw    Client // the caller's
	opts   mapperOptions
	enc    *attributevalue.Encoder // stateless after construction
	dec    *attributevalue.Decoder // stateless after construction
	// encText and decText are enc and dec with attributevalue's
	// UseEncodingMarshalers and UseEncodingUnmarshalers on, for the tables
	// whose types hold text types and that encode through attributevalue
	// (the caller gave encoder or decoder options); stateless.
	encText *attributevalue.Encoder
	decText *attributevalue.Decoder
	// compiledEnc and compiledDec report whether items may be encoded and
	// decoded by the compiled codecs (internal/codec), which produce what
	// enc and dec produce with their default options: true unless the
	// caller gave encoder or decoder options.
	compiledEnc, compiledDec bool
}

// Option configures a Mapper: WithWriteTokenAttribute, WithEncoderOptions,
// WithDecoderOptions, WithRetry, WithClock, WithStrongGlobalTables, and its
// telemetry: WithTracerProvider, WithMeterProvider, WithLogger,
// WithTelemetryKeys.
type Option interface {
	applyMapper(*mapperOptions)
}

type mapperOption func(*mapperOptions)

func (f mapperOption) applyMapper(o *mapperOptions) { f(o) }

type mapperOptions struct {
	tokenAttr   string
	clock       clock.Clock
	encoderOpts []func(*attributevalue.EncoderOptions)
	decoderOpts []func(*attributevalue.DecoderOptions)
	retry       RetryPolicy // Update, batches, transactions; when retrySet
	retrySet    bool
	tel         telemetry.Config
	strong      map[string]bool // the MRSC tables (WithStrongGlobalTables); read-only once built
}

// WithWriteTokenAttribute names the attribute in which every versioned write
// stores a random 16-byte token. The token lets the mapper tell its own write
// from someone else's when DynamoDB applied a write but the response was lost
// and the SDK's retry then failed its condition: with the token that retry is
// reported as the success it was, without it as a version conflict (which is
// what Java's DynamoDBMapper reports) that also satisfies
// errors.Is(err, ErrUnknownOutcome), so that Table.Update does not apply its
// change twice. Other clients ignore the attribute.
//
// The default is DefaultWriteTokenAttribute; "" turns tokens off.
func WithWriteTokenAttribute(name string) Option {
	return mapperOption(func(o *mapperOptions) { o.tokenAttr = name })
}

// WithClock sets the clock the mapper reads the time from: the first
// version of a `versionstart=clock` version attribute, and the times written
// to `created` and `modified` attributes. The default is clock.Real(); tests
// pass a *clock.Fake. A nil c is the default. Nothing else runs on c: the
// mapper's own timing (retry backoff, how long Update's combined writes
// wait for each other) uses the real clock, so a fake clock that stands
// still holds no call.
func WithClock(c clock.Clock) Option {
	return mapperOption(func(o *mapperOptions) { o.clock = c })
}

// WithEncoderOptions adjusts the attributevalue encoder the mapper uses.
// TagKey is always "dynamo" and cannot be changed.
func WithEncoderOptions(fn func(*attributevalue.EncoderOptions)) Option {
	return mapperOption(func(o *mapperOptions) { o.encoderOpts = append(o.encoderOpts, fn) })
}

// WithDecoderOptions adjusts the attributevalue decoder the mapper uses.
// TagKey is always "dynamo" and cannot be changed. UseNumber is on by
// default: a number decoded into an interface value (a field of type any,
// map[string]any, []any) is an attributevalue.Number holding the stored
// digits, which encodes back unchanged; turn it off to get float64, which
// cannot hold every number DynamoDB stores (Java's Long.MAX_VALUE, say).
func WithDecoderOptions(fn func(*attributevalue.DecoderOptions)) Option {
	return mapperOption(func(o *mapperOptions) { o.decoderOpts = append(o.decoderOpts, fn) })
}

// NewMapper returns a Mapper that sends its requests through c. It sends no
// request itself. A nil c is refused by NewTable (and the constructors of
// lease and commitlog built on it). Every call on a table that does not exist
// returns an error satisfying errors.Is(err, ErrTableNotFound).
func NewMapper(c Client, opts ...Option) *Mapper {
	o := mapperOptions{tokenAttr: DefaultWriteTokenAttribute}
	applyOptions(&o, opts, Option.applyMapper)
	if o.clock == nil {
		o.clock = clock.Real()
	}
	return newMapper(c, o)
}

// WithClient returns a Mapper with m's options that sends its requests
// through c: for a package that wraps the caller's client (to meter or
// pace its requests, say) and must write items as the caller's mapper
// does. It sends no request; m is unchanged.
func (m *Mapper) WithClient(c Client) *Mapper { return newMapper(c, m.opts) }

// newMapper is NewMapper once the options are applied.
func newMapper(c Client, o mapperOptions) *Mapper {
	m := &Mapper{raw: c, opts: o, compiledEnc: len(o.encoderOpts) == 0, compiledDec: len(o.decoderOpts) == 0}
	m.tel = &telemetry.T{Config: o.tel}
	if c != nil {
		m.client = tableErrors{c}
	}
	encOpts := func(eo *attributevalue.EncoderOptions) {
		for _, fn := range o.encoderOpts {
			if fn == nil {
				continue
			}
			fn(eo)
		}
		eo.TagKey = TagKey
	}
	decOpts := func(do *attributevalue.DecoderOptions) {
		// Numbers decoded into interface values (any, map[string]any,
		// []any) keep their exact digits as attributevalue.Number, so a
		// load-then-save writes back what was read: a float64 would turn
		// Java's Long.MAX_VALUE into 9223372036854776000.
		do.UseNumber = true
		for _, fn := range o.decoderOpts {
			if fn == nil {
				continue
			}
			fn(do)
		}
		do.TagKey = TagKey
	}
	m.enc = attributevalue.NewEncoder(encOpts)
	m.dec = attributevalue.NewDecoder(decOpts)
	m.encText = attributevalue.NewEncoder(encOpts, func(eo *attributevalue.EncoderOptions) { eo.UseEncodingMarshalers = true })
	m.decText = attributevalue.NewDecoder(decOpts, func(do *attributevalue.DecoderOptions) { do.UseEncodingUnmarshalers = true })
	return m
}

// Client returns the client the mapper sends its requests through.
func (m *Mapper) Client() Client { return m.raw }

// WriteTokenAttribute returns the attribute in which the mapper stores its
// write tokens (WithWriteTokenAttribute), "" when tokens are off. With
// tokens on, a Save with ChangedFrom is pinned to the incarnation read (the
// token read still stored), so that the stored item it writes over is the
// state read.
func (m *Mapper) WriteTokenAttribute() string { return m.opts.tokenAttr }
