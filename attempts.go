package dynamo

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// countAttempts returns a per-call option that counts the HTTP attempts the
// SDK makes for one operation (its retries included) into n.
func countAttempts(n *atomic.Int32) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		// Clip: never append into a backing array shared with the client.
		o.APIOptions = append(slices.Clip(o.APIOptions), func(st *middleware.Stack) error {
			mw := middleware.FinalizeMiddlewareFunc("ddbkitCountAttempts",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					n.Add(1)
					return next.HandleFinalize(ctx, in)
				})
			if _, ok := st.Finalize.Get("Retry"); ok {
				return st.Finalize.Insert(mw, "Retry", middleware.After)
			}
			return st.Finalize.Add(mw, middleware.After)
		})
	}
}
