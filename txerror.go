package dynamo

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// The errors of transactions: classifying a cancellation, TxError.

// txMemberInfo is what txFailure needs of a member of either kind of
// transaction.
type txMemberInfo interface {
	info() *txMember
}

func (m *txMember) info() *txMember { return m }

// txFailure classifies the error of a transaction with members ms. It returns
// nil when err is not a cancellation (nor a conflict with a transaction in
// progress); otherwise a *TxError, and whether the transaction is worth
// sending again: it was cancelled only by conflicts with other transactions.
func txFailure[M txMemberInfo](err error, ms []M, n int) (*TxError, bool) {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "TransactionConflictException", "TransactionInProgressException":
			return &TxError{Members: n, Cause: err, Attempts: 1}, true
		}
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return nil, false
	}
	te := &TxError{Members: n, Cause: err, Attempts: 1}
	retry := true
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		if code == "" || code == txCodeNone || i >= len(ms) {
			continue
		}
		mem := ms[i].info()
		f := TxFailure{Index: i, Kind: mem.kind, Table: mem.table, Key: maps.Clone(mem.key), Code: code, Message: aws.ToString(r.Message)}
		if code == TxCodeConditionFailed {
			var old map[string]types.AttributeValue
			if len(r.Item) > 0 {
				old = r.Item
			}
			ce := conditionFailure(mem.plan, mem.table, mem.key, mem.held, mem.checked, old, err, mem.decode)
			ce.Condition = mem.cond.String()
			if mem.created != nil && ce.Err == ErrConditionFailed && ce.reason == "" {
				ce.reason = mem.plan.CreatedMismatch(old, mem.created)
			}
			f.Err = ce
		} else {
			re := &txReasonError{code: code, msg: f.Message, table: mem.table, key: mem.key,
				tooLarge: code == "ValidationError" && tooLargeMessage(f.Message)}
			if txThrottled(code) {
				re.throttle = &ThrottlingError{Table: mem.table, Err: err, cancelled: true}
			}
			f.Err = re
		}
		if code != TxCodeConflict {
			retry = false
		}
		te.Failures = append(te.Failures, f)
	}
	if len(te.Failures) == 0 {
		retry = false // a cancellation without reasons: nothing to wait for
	}
	return te, retry
}

// TxError is the error of a transaction DynamoDB cancelled, or that stayed in
// conflict after every attempt. Nothing was written unless it also satisfies
// errors.Is(err, ErrUnknownOutcome). It satisfies ErrVersionConflict when a
// member's version check failed, ErrConditionFailed when a member's If
// failed, and ErrInvalidInput when DynamoDB refused a member as over 400 KB;
// errors.As finds a *ThrottlingError in it when a member was throttled.
// It holds no *ConditionError for errors.As (members may be of different
// tables): take Failure(i).Err and decode it with that member's
// Table.Current. Details: docs/calls.md#txerror.
type TxError struct {
	// Failures lists the members that failed, in member order.
	Failures []TxFailure
	// Members is the number of members of the transaction.
	Members int
	// Attempts is how many times the transaction was sent.
	Attempts int
	// Cause is the SDK's error (of the last attempt).
	Cause error

	// unknown: an attempt may have been applied (see txOutcome).
	unknown bool
}

// TxFailure is one member's part in a cancelled transaction.
type TxFailure struct {
	// Index is the member's position in the ops (or gets) passed.
	Index int
	// Kind is "TxSave", "TxDelete", "TxCheck" or "TxGet"; for the write of
	// a guarded Save, Update or Delete (GuardedBy), the call's name.
	Kind string
	// Table and Key name the member's item.
	Table string
	Key   map[string]types.AttributeValue
	// Code is DynamoDB's cancellation reason: TxCodeConditionFailed
	// ("ConditionalCheckFailed"), TxCodeConflict ("TransactionConflict"),
	// "ValidationError", "ThrottlingError",
	// "ProvisionedThroughputExceeded", "ItemCollectionSizeLimitExceeded", ...
	Code string
	// Message is DynamoDB's description of the reason.
	Message string
	// Err describes the failure. For ConditionalCheckFailed it is a
	// *ConditionError wrapping ErrVersionConflict or ErrConditionFailed and
	// carrying the stored item: Table.Current(f.Err) decodes it.
	Err error
}

// Failure returns the failure of the member at index i, or nil when that
// member did not fail.
func (e *TxError) Failure(i int) *TxFailure {
	for j := range e.Failures {
		if e.Failures[j].Index == i {
			return &e.Failures[j]
		}
	}
	return nil
}

func (e *TxError) Error() string {
	var b strings.Builder
	b.WriteString("dynamo: transaction of ")
	b.WriteString(plural(e.Members, "member"))
	if e.unknown {
		b.WriteString(": outcome unknown (" + ErrUnknownOutcome.Error() + "): an attempt may have been applied; resend with the same request token (WithRequestToken) within 10 minutes to settle it")
	} else {
		b.WriteString(" cancelled, nothing written")
	}
	if e.Attempts > 1 {
		b.WriteString(" (after ")
		b.WriteString(strconv.Itoa(e.Attempts))
		b.WriteString(" attempts; the items are busy with other transactions)")
	}
	if len(e.Failures) == 0 {
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
		return b.String()
	}
	for i, f := range e.Failures {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString("member ")
		b.WriteString(strconv.Itoa(f.Index))
		b.WriteString(" (")
		b.WriteString(f.Kind)
		b.WriteString("): ")
		if ce, ok := f.Err.(*ConditionError); ok {
			b.WriteString(ce.describe())
		} else {
			b.WriteString(f.Err.Error())
		}
	}
	if e.throttled() != nil {
		b.WriteString(" (throttled: send the transaction again after a pause, or raise the capacity)")
	}
	if errors.Is(e, ErrVersionConflict) {
		b.WriteString(" (reload the failing items — Table.Current(txErr.Failure(i).Err) decodes the stored copy each failure carries — and build the transaction again)")
	}
	return b.String()
}

// Unwrap returns the sentinels of the failures (ErrVersionConflict,
// ErrConditionFailed), a *ThrottlingError when members were throttled, and
// the SDK's error — not the *ConditionErrors, which Failures holds.
func (e *TxError) Unwrap() []error {
	var errs []error
	if e.unknown {
		errs = append(errs, ErrUnknownOutcome)
	}
	for _, sentinel := range [...]error{ErrVersionConflict, ErrConditionFailed} {
		for _, f := range e.Failures {
			if ce, ok := f.Err.(*ConditionError); ok && ce.Err == sentinel {
				errs = append(errs, sentinel)
				break
			}
		}
	}
	for _, f := range e.Failures {
		if re, ok := f.Err.(*txReasonError); ok && re.tooLarge {
			errs = append(errs, ErrInvalidInput)
			break
		}
	}
	if th := e.throttled(); th != nil {
		errs = append(errs, th)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// throttled returns the transaction's throttling as one *ThrottlingError:
// of the throttled members' table, "" when they are of several; nil when
// no member was throttled.
func (e *TxError) throttled() *ThrottlingError {
	var th *ThrottlingError
	for _, f := range e.Failures {
		re, ok := f.Err.(*txReasonError)
		if !ok || re.throttle == nil {
			continue
		}
		if th == nil {
			th = &ThrottlingError{Table: re.table, Err: e.Cause, cancelled: true}
		} else if th.Table != re.table {
			th.Table = ""
		}
	}
	return th
}

// txThrottled reports whether a cancellation reason code says DynamoDB
// throttled the member.
func txThrottled(code string) bool {
	return code == "ThrottlingError" || code == "ProvisionedThroughputExceeded"
}

// txReasonError is a member's cancellation reason other than a failed
// condition.
type txReasonError struct {
	code, msg string
	table     string
	key       map[string]types.AttributeValue
	// tooLarge: the member's write would leave its item over 400 KB
	// (tooLargeMessage), which Save and Update report as ErrInvalidInput.
	tooLarge bool
	// throttle: DynamoDB throttled the member (txThrottled).
	throttle *ThrottlingError
}

func (e *txReasonError) Error() string {
	s := e.code + " on table " + strconv.Quote(e.table) + " key " + formatKey(e.key)
	if e.msg != "" {
		s += ": " + e.msg
	}
	if e.tooLarge {
		s += " (" + ErrInvalidInput.Error() + "): " + tooLargeFix
	}
	return s
}

// Unwrap returns ErrInvalidInput for an item the write would leave over
// 400 KB, the *ThrottlingError of a throttled member, else nil.
func (e *txReasonError) Unwrap() error {
	if e.tooLarge {
		return ErrInvalidInput
	}
	if e.throttle != nil {
		return e.throttle
	}
	return nil
}
