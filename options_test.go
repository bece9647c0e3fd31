package dynamo

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Every option keeps compiling where it compiled before options became
// interface values: a ReadOption is a QueryOption and a BatchReadOption,
// WithRetry is an option of NewMapper, batches, transactions and table
// creation, and nil is an option of every type.
var (
	_ QueryOption       = ReadOption(nil)
	_ BatchReadOption   = ReadOption(nil)
	_ QueryOption       = ConsistentRead()
	_ BatchReadOption   = ConsistentRead()
	_                   = []WriteOption{If(expression.Name("a").AttributeExists()), WithSaveBehavior(SavePut), nil}
	_ Option            = WithRetry(RetryPolicy{})
	_ BatchReadOption   = WithRetry(RetryPolicy{})
	_ BatchWriteOption  = WithRetry(RetryPolicy{})
	_ TxOption          = WithRetry(RetryPolicy{})
	_ ReadTxOption      = WithRetry(RetryPolicy{})
	_ CreateTableOption = WithRetry(RetryPolicy{})
	_                   = []TxOption{WithRequestToken("t"), WithRetry(RetryPolicy{}), nil}
	_                   = []CreateTableOption{IfNotExists(), WithStream("NEW_IMAGE"), nil}
	_                   = []BatchWriteOption{Clobber(), nil}
	_ BatchWriteOption  = WithSaveBehavior(SaveClobber)

	// The transaction names of before the one Tx vocabulary still compile.
	_ func(*Txn) error = func(*Tx) error { return nil }
	_ TxnTable[Book]   = TxTable[Book]{}
)

// A nil option in a variadic list is no option, for every call that takes
// options: nothing panics.
func TestNilOptionsAreNoOptions(t *testing.T) {
	c := &fakeDB{noStore: true}
	c.onGet = func(int, *dynamodb.GetItemInput) (*dynamodb.GetItemOutput, error) {
		return &dynamodb.GetItemOutput{}, nil
	}
	for name, f := range map[string]func(){
		"Load(nil)": func() {
			_, _ = newBooks(t, c).Load(context.Background(), Book{ISBN: "1"}, nil)
		},
		"ScanPage(nil) refused before sending": func() {
			_, _, _ = newBooks(t, &fakeDB{noStore: true}).ScanPage(context.Background(), nil, Limit(-1))
		},
		"WithEncoderOptions(nil)": func() { newBooks(t, c, WithEncoderOptions(nil)) },
		"WithDecoderOptions(nil)": func() { newBooks(t, c, WithDecoderOptions(nil)) },
	} {
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("%s panicked: %v", name, p)
				}
			}()
			f()
		}()
	}
}

// Batch writes take the one clobber vocabulary: WithSaveBehavior(SaveClobber)
// lets BatchSave and BatchDelete write a versioned type, exactly as the
// deprecated Clobber() does (the last behaviour given wins, as for Save),
// and the write options a batch cannot honour are refused with
// ErrInvalidInput naming the option, before anything is sent.
func TestBatchWritesTakeSaveClobber(t *testing.T) {
	books := newBooks(t, &fakeDB{noStore: true})
	for name, opts := range map[string][]BatchWriteOption{
		"WithSaveBehavior(SaveClobber)":      {WithSaveBehavior(SaveClobber)},
		"Clobber()":                          {Clobber()},
		"SaveUpdate then SaveClobber":        {WithSaveBehavior(SaveUpdate), WithSaveBehavior(SaveClobber)},
		"SaveClobber with WithRetry and nil": {nil, WithSaveBehavior(SaveClobber), WithRetry(RetryPolicy{MaxAttempts: 3})},
	} {
		for _, op := range []string{"BatchSave", "BatchDelete"} {
			if _, err := books.checkBatchWrite(op, opts); err != nil {
				t.Errorf("%s with %s: %v", op, name, err)
			}
		}
	}
	for name, opts := range map[string][]BatchWriteOption{
		"SaveClobber":                     nil, // the fix the message names
		"If":                              {WithSaveBehavior(SaveClobber), If(expression.Name("title").AttributeExists())},
		"MustExist":                       {MustExist(), WithSaveBehavior(SaveClobber)},
		"GuardedBy":                       {WithSaveBehavior(SaveClobber), GuardedBy(books.TxCheck(Book{ISBN: "1"}))},
		"WithSaveBehavior(SavePut)":       {WithSaveBehavior(SavePut)},
		"WithSaveBehavior(SaveAppendSet)": {WithSaveBehavior(SaveClobber), WithSaveBehavior(SaveAppendSet)},
	} {
		_, err := books.checkBatchWrite("BatchSave", opts)
		if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), name) {
			t.Errorf("BatchSave with %s: err = %v, want ErrInvalidInput naming %s", name, err, name)
		}
	}
}

// TestKeptIfSendsWhatAFreshIfWould: an If option kept and passed to many
// writes sends what a fresh If of the same condition would at each write —
// compiling it once per schema is invisible — also when a value of the
// condition is a pointer whose target changed since the last write.
func TestKeptIfSendsWhatAFreshIfWould(t *testing.T) {
	title := "A"
	keptIfFollows(t, expression.Name("title").Equal(expression.Value(&title)), func(v string) { title = v })
}

// keptIfFollows saves with a fresh If(cond) and a kept one after each
// set(v), v in "A", "B", "C", and checks that both send v as the value
// compared with title.
func keptIfFollows(t *testing.T, cond expression.ConditionBuilder, set func(string)) {
	t.Helper()
	db := &fakeDB{noStore: true}
	books := newBooks(t, db)
	ctx := context.Background()
	kept := If(cond)
	sentTitle := func() string {
		t.Helper()
		upds := db.upds()
		for k, av := range upds[len(upds)-1].ExpressionAttributeValues {
			if s, ok := av.(*types.AttributeValueMemberS); ok && k[1] != 'a' {
				return s.Value
			}
		}
		t.Fatal("no title value sent")
		return ""
	}
	for _, want := range []string{"A", "B", "C"} {
		set(want)
		if _, err := books.Save(ctx, Book{ISBN: "1", Title: "t", Version: 1}, If(cond)); err != nil {
			t.Fatal(err)
		}
		fresh := sentTitle()
		if _, err := books.Save(ctx, Book{ISBN: "1", Title: "t", Version: 1}, kept); err != nil {
			t.Fatal(err)
		}
		if got := sentTitle(); got != fresh || fresh != want {
			t.Errorf("title %q: the kept If sent %q, a fresh If %q", want, got, fresh)
		}
	}
}

// textEnum is a string type that marshals itself.
type textEnum string

func (e textEnum) MarshalText() ([]byte, error) { return []byte("e:" + e), nil }

// TestIfCompiledOnceOnlyForFixedValues: an If is compiled once per schema
// (fixedValues) only when no value of its condition can change after If
// was called: strings, numbers, booleans and arrays and structs of them;
// not pointers, slices ([]byte), maps, or types with marshaling methods.
func TestIfCompiledOnceOnlyForFixedValues(t *testing.T) {
	s, n := "x", 1
	type plain struct {
		A string
		B [2]int
	}
	type withPtr struct{ P *int }
	for _, c := range []struct {
		name  string
		cond  expression.ConditionBuilder
		fixed bool
	}{
		{"string", expression.Name("a").Equal(expression.Value("x")), true},
		{"number and bool", expression.And(expression.Name("a").Equal(expression.Value(1.5)), expression.Name("b").Equal(expression.Value(true))), true},
		{"no values", expression.Or(expression.AttributeNotExists(expression.Name("a")), expression.Name("a").Size().GreaterThan(expression.Value(3))), true},
		{"struct of plain values", expression.Name("a").Equal(expression.Value(plain{A: "x"})), true},
		{"between and in", expression.Name("a").Between(expression.Value(1), expression.Value(2)).And(expression.Name("b").In(expression.Value("x"), expression.Value("y"))), true},
		{"pointer", expression.Name("a").Equal(expression.Value(&s)), false},
		{"pointer to a number", expression.Name("a").Equal(expression.Value(&n)), false},
		{"bytes", expression.Name("a").Equal(expression.Value([]byte("x"))), false},
		{"map", expression.Name("a").Equal(expression.Value(map[string]int{"x": 1})), false},
		{"struct with a pointer", expression.Name("a").Equal(expression.Value(withPtr{P: &n})), false},
		{"attribute value", expression.Name("a").Equal(expression.Value(&types.AttributeValueMemberS{Value: "x"})), false},
		{"text marshaler", expression.Name("a").Equal(expression.Value(textEnum("x"))), false},
		{"encoder options", expression.Name("a").Equal(expression.ValueWithOptions("x", func(o *expression.ValueBuilderOptions) {
			o.EncoderOptions = append(o.EncoderOptions, func(*attributevalue.EncoderOptions) {})
		})), false},
	} {
		if got := If(c.cond).(*ifOption).isFixed(); got != c.fixed {
			t.Errorf("%s: fixed = %v, want %v", c.name, got, c.fixed)
		}
	}
}

// liveTitle is an operand of the caller's own (expression.OperandBuilder)
// of a string kind: its value, read at each build, is currentTitle's.
type liveTitle string

var currentTitle string

func (liveTitle) BuildOperand() (expression.Operand, error) {
	return expression.Value(currentTitle).BuildOperand()
}

// A kept If whose condition holds an operand of the caller's own type
// (expression.OperandBuilder, whatever its kind) sends at each write what a
// fresh If would: the operand builds itself, reading anything, so it is not
// a value that cannot change.
func TestKeptIfWithOwnOperandSendsWhatAFreshIfWould(t *testing.T) {
	keptIfFollows(t, expression.Equal(expression.Name("title"), liveTitle("")), func(v string) { currentTitle = v })
}
