package dynamo

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// attempts records the HTTP attempts the SDK makes for one operation, its
// retries included, through the per-call option that option returns.
// Clients other than *dynamodb.Client may ignore that option; then nothing
// is recorded.
type attempts struct {
	reached atomic.Bool // the current attempt left this process
	// unknown is set when an attempt failed in a way that leaves open
	// whether DynamoDB applied it: no answer (a reset connection, a timeout)
	// or a 5xx answer. A 4xx answer (throttling, a failed condition, a
	// validation error) means the attempt was not applied, and so does a
	// connection that could not be opened.
	unknown atomic.Bool
	// applied is set when the client applied the per-call option. A Client
	// that drops per-call options leaves it unset: then nothing was
	// recorded, and an error may follow an applied attempt.
	applied atomic.Bool
}

// option returns the per-call option that records into a. With noResend,
// it also stops the SDK's retryer from sending again an attempt that may
// have been applied: the caller settles such a write itself (see
// settle.go), because a blind resend can apply the write a second time —
// on an item deleted and created again in between — or overwrite a write
// acknowledged to someone else in between. Attempts that were certainly not
// applied (throttled, refused) are still retried by the SDK.
func (a *attempts) option(noResend bool) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		a.applied.Store(true)
		if noResend && o.Retryer != nil {
			o.Retryer = noResendRetryer{o.Retryer, a}
		}
		// Clip: never append into a backing array shared with the client.
		o.APIOptions = append(slices.Clip(o.APIOptions), a.addMiddleware)
	}
}

// addMiddleware adds the recorder to a stack: around each attempt (after
// the retry middleware, in the finalize step) it notes the outcome; right
// before the request goes to the HTTP client (innermost in the deserialize
// step) it notes that the attempt left this process. An attempt that failed
// before that — credentials, signing, a context already done — was not
// applied, whatever its error says.
func (a *attempts) addMiddleware(st *middleware.Stack) error {
	if err := st.Deserialize.Add((*attemptSent)(a), middleware.After); err != nil {
		return err
	}
	if _, ok := st.Finalize.Get("Retry"); ok {
		return st.Finalize.Insert((*attemptOutcome)(a), "Retry", middleware.After)
	}
	return st.Finalize.Add((*attemptOutcome)(a), middleware.After)
}

// attemptOutcome is the recorder's middleware around each attempt (types
// over attempts rather than closures: nothing to allocate per call).
type attemptOutcome attempts

func (*attemptOutcome) ID() string { return "ddbkitAttemptOutcome" }

func (o *attemptOutcome) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	a := (*attempts)(o)
	a.reached.Store(false)
	out, md, err := next.HandleFinalize(ctx, in)
	if err != nil && a.reached.Load() && mayHaveApplied(err) {
		a.unknown.Store(true)
	}
	return out, md, err
}

// attemptSent is the recorder's middleware right before the request goes
// to the HTTP client.
type attemptSent attempts

func (*attemptSent) ID() string { return "ddbkitAttemptSent" }

func (s *attemptSent) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
	if ctx.Err() == nil {
		(*attempts)(s).reached.Store(true)
	}
	return next.HandleDeserialize(ctx, in)
}

// maybeApplied reports whether an attempt may have been applied although
// it failed: it got no answer, or a 5xx one.
func (a *attempts) maybeApplied() bool { return a.unknown.Load() }

// unrecorded reports whether the client dropped the per-call option, so
// that nothing tells whether an attempt left the process.
func (a *attempts) unrecorded() bool { return !a.applied.Load() }

// mayHaveApplied reports whether a failed attempt may have been applied by
// DynamoDB: only a 4xx answer, or a connection that was never opened, says
// that it was not. (An attempt that got no answer also carries a response
// error, with status 0.)
func mayHaveApplied(err error) bool {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		if code := re.HTTPStatusCode(); code >= 400 && code < 500 {
			return false
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return false // the request never left this machine
	}
	return true
}

// noResendRetryer is the client's retryer, except that an error after which
// the attempt may have been applied is not retryable. The SDK asks right
// after the attempt, so a.reached describes it.
type noResendRetryer struct {
	aws.Retryer
	a *attempts
}

func (r noResendRetryer) IsErrorRetryable(err error) bool {
	if r.a.reached.Load() && mayHaveApplied(err) {
		return false
	}
	return r.Retryer.IsErrorRetryable(err)
}

// GetAttemptToken delegates to the client's retryer (aws.RetryerV2), as the
// SDK's retry middleware would.
func (r noResendRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}
