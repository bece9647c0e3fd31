package plan

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/schema"
)

// kwWide is keyed past fieldSeq: 70 plain fields, then the table's keys
// (fields 70 and 71) and an index of 4 partition and 4 sort attributes.
func kwWide(t *testing.T) KeyRules {
	t.Helper()
	var fs []reflect.StructField
	for i := range 70 {
		fs = append(fs, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`dynamo:"f%d"`, i))})
	}
	fs = append(fs,
		reflect.StructField{Name: "P", Type: reflect.TypeFor[string](), Tag: `dynamo:"p,hash"`},
		reflect.StructField{Name: "N", Type: reflect.TypeFor[int](), Tag: `dynamo:"n,range"`})
	for i := 1; i <= 4; i++ {
		fs = append(fs,
			reflect.StructField{Name: fmt.Sprintf("H%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`dynamo:"h%d" index:"Wide,hash,%d"`, i, i))},
			reflect.StructField{Name: fmt.Sprintf("R%d", i), Type: reflect.TypeFor[string](), Tag: reflect.StructTag(fmt.Sprintf(`dynamo:"r%d" index:"Wide,range,%d"`, i, i))})
	}
	s, err := schema.For(reflect.StructOf(fs))
	if err != nil {
		t.Fatal(err)
	}
	return KeyRules{Table: "W", S: s, Enc: attributevalue.NewEncoder()}
}

// A table key past the 64 fields fieldSeq shares is returned as its own
// slice, still of capacity 1; an append to any ListingKey slice leaves the
// next call's answer as it was.
func TestListingKeyPastSharedFields(t *testing.T) {
	r := kwWide(t)
	hash, rng, known := r.ListingKey("")
	if !known || len(hash) != 1 || hash[0] != 70 || len(rng) != 1 || rng[0] != 71 || cap(hash) != 1 || cap(rng) != 1 {
		t.Fatalf("ListingKey: %v (cap %d) %v (cap %d) %t, want [70] [71] of capacity 1", hash, cap(hash), rng, cap(rng), known)
	}
	for i := range 64 {
		h := oneField(i)
		_ = append(h, -1)
		if got := oneField(i); len(got) != 1 || got[0] != i {
			t.Fatalf("oneField(%d) after an append: %v", i, got)
		}
		if i+1 < 64 && oneField(i + 1)[0] != i+1 {
			t.Fatalf("oneField(%d) after an append to oneField(%d): %v", i+1, i, oneField(i+1))
		}
	}
	if got := oneField(-1); len(got) != 1 || got[0] != -1 {
		t.Errorf("oneField(-1) = %v", got)
	}
}

// A key of 4 partition and 4 sort attributes (more than KeyCond's slots)
// is placed in key order whatever order the terms come in, and a KeyCond
// checked twice answers the same.
func TestKeyConditionOnWideIndex(t *testing.T) {
	r := kwWide(t)
	for range 2 {
		expr, names, values := kwCond("r1 = a", "h4 = d", "h2 = b", "r2 begins_with x", "h1 = a", "h3 = c")
		got, err := r.CheckKeyCondition("Query", "Wide", expr, names, values)
		if err != nil {
			t.Fatal(err)
		}
		var placed []string
		for _, kt := range append(got.Hash, got.Rng...) {
			placed = append(placed, kt.Name)
		}
		if s := strings.Join(placed, " "); s != "h1 h2 h3 h4 r1 r2" {
			t.Errorf("placed %q, want h1 h2 h3 h4 r1 r2", s)
		}
	}
	expr, names, values := kwCond("h1 = a", "h2 = b", "h3 = c", "h4 = d", "r3 = z")
	_, err := r.CheckKeyCondition("Query", "Wide", expr, names, values)
	if err == nil || !strings.Contains(err.Error(), `skips the sort attribute "r1" before "r3"`) {
		t.Errorf("a skipped sort attribute: %v", err)
	}
}

// kwCond writes a key condition as the expression package spells one, of
// terms "name op value" (op "=" or "begins_with").
func kwCond(terms ...string) (string, map[string]string, map[string]types.AttributeValue) {
	names, values := map[string]string{}, map[string]types.AttributeValue{}
	var parts []string
	for i, term := range terms {
		f := strings.Fields(term)
		n, v := fmt.Sprintf("#%d", i), fmt.Sprintf(":%d", i)
		names[n], values[v] = f[0], &types.AttributeValueMemberS{Value: f[2]}
		if f[1] == "begins_with" {
			parts = append(parts, "(begins_with ("+n+", "+v+"))")
		} else {
			parts = append(parts, "("+n+" = "+v+")")
		}
	}
	return strings.Join(parts, " AND "), names, values
}

// placeKeyTerms run again on a KeyCond it already placed places the same
// terms, not refusing them as named twice by the slots the first run filled.
func TestPlaceKeyTermsOnReusedKeyCond(t *testing.T) {
	r := kcRules(t)
	e, err := expression.NewBuilder().WithKeyCondition(expression.Key("p").Equal(expression.Value("a")).
		And(expression.Key("n").GreaterThan(expression.Value(1)))).Build()
	if err != nil {
		t.Fatal(err)
	}
	terms, _ := ParseKeyCondition(*e.KeyCondition(), e.Names(), e.Values())
	hash, rng, _ := r.ListingKey("")
	fail := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	kc := &KeyCond{Terms: terms}
	for i := range 2 {
		if err := r.placeKeyTerms(kc, "", hash, rng, fail); err != nil {
			t.Fatalf("run %d: %v", i+1, err)
		}
	}
}

// The cursor of a query of an index of 4 partition and 4 sort attributes
// holds its 8 and the table's 2 (LastEvaluatedKey holds them all): it
// reads back as the position it encodes, and is checked against the index.
func TestCursorOfWideIndexReadsBack(t *testing.T) {
	r := kwWide(t)
	key := map[string]types.AttributeValue{"p": &types.AttributeValueMemberS{Value: "p"}, "n": &types.AttributeValueMemberN{Value: "1"}}
	for i := 1; i <= 4; i++ {
		key[fmt.Sprintf("h%d", i)] = &types.AttributeValueMemberS{Value: "h"}
		key[fmt.Sprintf("r%d", i)] = &types.AttributeValueMemberS{Value: "r"}
	}
	c, err := EncodePosition(Position{Index: "Wide", Key: key})
	if err != nil {
		t.Fatal(err)
	}
	p, err := DecodePosition(c)
	if err != nil {
		t.Fatalf("DecodePosition of a cursor of 10 key attributes: %v", err)
	}
	if len(p.Key) != 10 || p.Index != "Wide" {
		t.Fatalf("DecodePosition = %+v", p)
	}
	if err := r.CheckPosition(p, "Wide", 0, 0, nil); err != nil {
		t.Errorf("CheckPosition: %v", err)
	}
	key["x"] = &types.AttributeValueMemberS{Value: "x"}
	if c, err = EncodePosition(Position{Index: "Wide", Key: key}); err != nil {
		t.Fatal(err)
	}
	if _, err := DecodePosition(c); err == nil || !strings.Contains(err.Error(), "11 key attributes, want 1 to 10") {
		t.Errorf("DecodePosition of 11 key attributes: %v", err)
	}
}

// The longest cursor a position of 10 key attributes makes (names of 255
// bytes, values at DynamoDB's limits, each byte one JSON escapes to six)
// is within MaxCursorLen and reads back.
func TestLongestCursorReadsBack(t *testing.T) {
	key := map[string]types.AttributeValue{}
	for i := range 10 {
		name := strings.Repeat("<", 254) + string(rune('a'+i))
		size := 2048
		if i%2 == 1 {
			size = 1024
		}
		key[name] = &types.AttributeValueMemberS{Value: strings.Repeat("<", size)}
	}
	c, err := EncodePosition(Position{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	if len(c) > MaxCursorLen {
		t.Fatalf("longest cursor: %d bytes, over MaxCursorLen %d", len(c), MaxCursorLen)
	}
	if _, err := DecodePosition(c); err != nil {
		t.Errorf("longest cursor (%d bytes): %v", len(c), err)
	}
	t.Logf("longest cursor: %d bytes", len(c))
}
