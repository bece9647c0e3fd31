package dynamo

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// attempts records the HTTP attempts the SDK makes for one operation, its
// retries included, through the per-call option that option returns.
// Clients other than *dynamodb.Client may ignore that option; then nothing
// is recorded.
type attempts struct {
	sent atomic.Int32 // attempts sent
	// unknown is set when an attempt failed in a way that leaves open
	// whether DynamoDB applied it: no answer (a reset connection, a timeout)
	// or a 5xx answer. A 4xx answer (throttling, a failed condition, a
	// validation error) means the attempt was not applied.
	unknown atomic.Bool
}

// option returns the per-call option that records into a.
func (a *attempts) option() func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		// Clip: never append into a backing array shared with the client.
		o.APIOptions = append(slices.Clip(o.APIOptions), func(st *middleware.Stack) error {
			mw := middleware.FinalizeMiddlewareFunc("ddbkitCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					a.sent.Add(1)
					out, md, err := next.HandleFinalize(ctx, in)
					if err != nil && mayHaveApplied(err) {
						a.unknown.Store(true)
					}
					return out, md, err
				})
			if _, ok := st.Finalize.Get("Retry"); ok {
				return st.Finalize.Insert(mw, "Retry", middleware.After)
			}
			return st.Finalize.Add(mw, middleware.After)
		})
	}
}

// maybeApplied reports whether an earlier attempt may have been applied
// although it failed: the SDK sent the request more than once, and one of
// the failed attempts got no answer or a 5xx one.
func (a *attempts) maybeApplied() bool { return a.sent.Load() > 1 && a.unknown.Load() }

// mayHaveApplied reports whether a failed attempt may have been applied by
// DynamoDB: only a 4xx answer says that it was not. (An attempt that got no
// answer also carries a response error, with status 0.)
func mayHaveApplied(err error) bool {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		code := re.HTTPStatusCode()
		return code < 400 || code >= 500
	}
	return true
}
