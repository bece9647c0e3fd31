package dynamo

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// A nil MatchFunc, an empty KeyPrefix attribute, a KeyPrefix that can never
// match (invalid UTF-8) and a nil Table are refused by NewEntities, before
// anything is sent, instead of panicking in the middle of a Query.
func TestBreak5NewEntitiesRefusesBadMatches(t *testing.T) {
	m := NewMapper(&stubClient{})
	customers := NewTableMust[shopCustomer](t, m)
	notes := NewTableMust[legacyNote](t, m)
	for name, mem := range map[string]func() EntityMember{
		"MatchFunc(nil)":        func() EntityMember { return Member(notes, MatchFunc(nil)) },
		"KeyPrefix empty attr":  func() EntityMember { return Member(notes, KeyPrefix("", "NOTE#")) },
		"KeyPrefix bad UTF-8":   func() EntityMember { return Member(notes, KeyPrefix("sk", "\xffNOTE")) },
		"KeyPrefix bad UTF-8 a": func() EntityMember { return Member(notes, KeyPrefix("s\xff", "NOTE")) },
		"nil table":             func() EntityMember { return Member[legacyNote](nil, KeyPrefix("sk", "NOTE#")) },
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			if _, err := NewEntities(Member(customers), mem()); !errors.Is(err, ErrInvalidInput) {
				t.Errorf("%s: NewEntities: %v; want ErrInvalidInput", name, err)
			}
		}()
	}
}

// The zero Entities (an exported struct) yields an error, not a panic.
func TestBreak5ZeroEntities(t *testing.T) {
	var e Entities
	for name, seq := range map[string]func(){
		"Query": func() {
			for _, err := range e.Query(context.Background(), expression.Key("pk").Equal(expression.Value("x"))) {
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("Query: %v; want ErrInvalidInput", err)
				}
			}
		},
		"Scan": func() {
			for _, err := range e.Scan(context.Background()) {
				if !errors.Is(err, ErrInvalidInput) {
					t.Errorf("Scan: %v; want ErrInvalidInput", err)
				}
			}
		},
	} {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", name, r)
				}
			}()
			seq()
		}()
	}
}
