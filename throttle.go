package dynamo

import (
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ThrottlingError is the error of a call whose request DynamoDB throttled
// (ProvisionedThroughputExceededException, ThrottlingException,
// RequestLimitExceeded) after the SDK's retryer gave up, or whose
// transaction DynamoDB cancelled because a member was throttled (found
// through the *TxError; the SDK does not retry those). It carries the
// reasons DynamoDB gave, and unwraps to the SDK's error. Match it with
// errors.As; docs/limitations.md#throttling says what each reason asks for.
type ThrottlingError struct {
	// Table is the table of the request, "" when it named several.
	Table string
	// Reasons are DynamoDB's ThrottlingReasons, in its order; empty when
	// it gave none (DynamoDB Local, older endpoints).
	Reasons []ThrottlingReason
	// Err is the SDK's error.
	Err error

	// cancelled: a transaction cancelled for a throttled member (its
	// cancellation reasons carry no ThrottlingReasons).
	cancelled bool
}

// ThrottlingReason is one reason DynamoDB throttled a request.
type ThrottlingReason struct {
	// Reason is resource type, operation and limit in one word, e.g.
	// TableWriteKeyRangeThroughputExceeded, IndexReadAccountLimitExceeded.
	Reason string
	// Resource is the ARN of the table or index throttled.
	Resource string
}

func (e *ThrottlingError) Error() string {
	var b strings.Builder
	b.WriteString("dynamo: ")
	if e.Table != "" {
		b.WriteString("table " + strconv.Quote(e.Table) + ": ")
	}
	if e.cancelled {
		b.WriteString("transaction cancelled: a member was throttled (the SDK does not retry a cancellation)")
	} else {
		b.WriteString("throttled after the SDK's retries")
	}
	for i, r := range e.Reasons {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(r.Reason)
		if i == len(e.Reasons)-1 {
			b.WriteByte(')')
		}
	}
	switch {
	case len(e.Reasons) > 0:
		b.WriteString(": " + throttleFix(e.Reasons[0].Reason))
	case e.cancelled:
		b.WriteString(": " + throttleFix("") + ", and send it again")
	}
	if e.Err != nil { // nil in a ThrottlingError a caller builds
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the SDK's error.
func (e *ThrottlingError) Unwrap() error { return e.Err }

// throttleFix says what a throttling reason asks for.
func throttleFix(reason string) string {
	switch {
	case strings.HasSuffix(reason, "KeyRangeThroughputExceeded"):
		return "one partition key is hot; spread its writes over several keys (write sharding)"
	case strings.HasSuffix(reason, "ProvisionedThroughputExceeded"):
		return "raise the provisioned capacity, or use on-demand mode"
	case strings.HasSuffix(reason, "MaxOnDemandThroughputExceeded"):
		return "raise the table's or index's MaxOnDemandThroughput"
	case strings.HasSuffix(reason, "AccountLimitExceeded"):
		return "ask AWS for a higher per-table quota"
	}
	return "slow down, or raise the capacity"
}

// throttled returns err as a *ThrottlingError when DynamoDB throttled it;
// nil otherwise.
func throttled(table *string, err error) *ThrottlingError {
	var reasons []types.ThrottlingReason
	var (
		pte *types.ProvisionedThroughputExceededException
		te  *types.ThrottlingException
		rle *types.RequestLimitExceeded
	)
	switch {
	case errors.As(err, &pte):
		reasons = pte.ThrottlingReasons
	case errors.As(err, &te):
		reasons = te.ThrottlingReasons
	case errors.As(err, &rle):
		reasons = rle.ThrottlingReasons
	default:
		return nil
	}
	e := &ThrottlingError{Table: aws.ToString(table), Err: err}
	for _, r := range reasons {
		e.Reasons = append(e.Reasons, ThrottlingReason{Reason: aws.ToString(r.Reason), Resource: aws.ToString(r.Resource)})
	}
	return e
}

// replicatedConflict is DynamoDB's ReplicatedWriteConflictException,
// explained: it satisfies ErrReplicatedConflict.
type replicatedConflict struct {
	table string
	err   error
}

func (e *replicatedConflict) Error() string {
	return "dynamo: table " + strconv.Quote(e.table) + ": " + ErrReplicatedConflict.Error() +
		" (another Region wrote the item; not applied: reload, write again): " + e.err.Error()
}

// Unwrap returns ErrReplicatedConflict and DynamoDB's error.
func (e *replicatedConflict) Unwrap() []error { return []error{ErrReplicatedConflict, e.err} }

// throttleReasonAttr is the value of aws.dynamodb.throttling_reason for
// err: its first throttling reason when it has one of DynamoDB's shape
// (letters only, at most 64: a bounded set), "other" for any other, ""
// when err was not throttled or no reason came.
func throttleReasonAttr(err error) string {
	var te *ThrottlingError
	if err == nil || !errors.As(err, &te) || len(te.Reasons) == 0 {
		return ""
	}
	r := te.Reasons[0].Reason
	if len(r) == 0 || len(r) > 64 || !(strings.HasPrefix(r, "Table") || strings.HasPrefix(r, "Index")) {
		return "other"
	}
	for _, c := range r {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return "other"
		}
	}
	return r
}
