// Package itemstate generates the item states a mapper did not write — an
// absent item, version 0, no version attribute, a NULL version, another
// entity type's item, a foreign write token, another spelling of a number —
// so that unit tests, DynamoDB Local tests and the fault suite's foreign
// writer put one of them between a mapper's read and its write, and check
// that the write neither lands on it blindly nor loses it.
//
// Every state is an item a supported writer may leave: Java's
// DynamoDBMapper (CLOBBER holds −1 and writes 0), a backfill without a
// version, a raw PutItem, another entity type of a single-table design. The
// package knows nothing of the mapper: a Schema names the attributes.
package itemstate

import (
	"context"
	"crypto/rand"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Schema names the attributes of the item type the states are made for.
type Schema struct {
	// Version is the version attribute; "" for a type without one (the
	// version states are then left out).
	Version string
	// Token is the write-token attribute (the mapper's
	// DefaultWriteTokenAttribute unless turned off); "" leaves the
	// foreign-token state out.
	Token string
	// Entity is the entity attribute and Name the type's entity name; ""
	// leaves the other-entity state out.
	Entity, Name string
	// Attrs are the modeled non-key attributes a present state holds (e.g.
	// a counter {"n": N "5"}), copied into every present state. Numbers
	// among them are spelled differently in the NumberSpelling state.
	Attrs map[string]types.AttributeValue
}

// Kind names a state.
type Kind string

// The states. Absent is not the mapper's doing either: someone deleted the
// item.
const (
	Absent         Kind = "absent"
	Version0       Kind = "version 0"
	NoVersion      Kind = "no version attribute"
	NullVersion    Kind = "NULL version"
	OtherEntity    Kind = "another entity"
	ForeignToken   Kind = "foreign write token"
	NumberSpelling Kind = "another spelling of a number"
)

// State is one foreign state of an item.
type State struct {
	Kind Kind
	s    Schema
}

func (st State) String() string { return string(st.Kind) }

// Present reports whether the state is an item (every state but Absent).
func (st State) Present() bool { return st.Kind != Absent }

// States returns the states that apply to s, Absent first. A state that s
// cannot express (no version, no token, no entity) is left out.
func States(s Schema) []State {
	kinds := []Kind{Absent}
	if s.Version != "" {
		kinds = append(kinds, Version0, NoVersion, NullVersion)
	}
	if s.Entity != "" {
		kinds = append(kinds, OtherEntity)
	}
	if s.Version != "" && s.Token != "" {
		kinds = append(kinds, ForeignToken)
	}
	kinds = append(kinds, NumberSpelling)
	out := make([]State, len(kinds))
	for i, k := range kinds {
		out[i] = State{Kind: k, s: s}
	}
	return out
}

// Pick returns the state of States(s) that n selects (n modulo their
// number; n may be negative), for a nemesis choosing by seed.
func Pick(s Schema, n int) State {
	all := States(s)
	i := n % len(all)
	if i < 0 {
		i += len(all)
	}
	return all[i]
}

// Item returns the item of the state with key (which is copied, not
// modified): nil for Absent.
func (st State) Item(key map[string]types.AttributeValue) map[string]types.AttributeValue {
	if st.Kind == Absent {
		return nil
	}
	s := st.s
	item := make(map[string]types.AttributeValue, len(key)+len(s.Attrs)+3)
	maps.Copy(item, key)
	maps.Copy(item, s.Attrs)
	if s.Entity != "" {
		item[s.Entity] = &types.AttributeValueMemberS{Value: s.Name}
	}
	switch st.Kind {
	case Version0:
		item[s.Version] = &types.AttributeValueMemberN{Value: "0"}
	case NoVersion:
		// Left out: a backfill, or a writer that does not know versions.
	case NullVersion:
		item[s.Version] = &types.AttributeValueMemberNULL{Value: true}
	case OtherEntity:
		item[s.Entity] = &types.AttributeValueMemberS{Value: "other-" + s.Name}
		if s.Version != "" {
			item[s.Version] = &types.AttributeValueMemberN{Value: "1"}
		}
	case ForeignToken:
		item[s.Version] = &types.AttributeValueMemberN{Value: "1"}
		// Another writer's token: 16 random bytes drawn for this write, as
		// every writer of tokens draws them (a token never repeats, which
		// is what lets a write recognise itself).
		tok := make([]byte, 16)
		_, _ = rand.Read(tok)
		item[s.Token] = &types.AttributeValueMemberB{Value: tok}
	case NumberSpelling:
		if s.Version != "" {
			item[s.Version] = &types.AttributeValueMemberN{Value: "1.0"}
		}
		for name, av := range s.Attrs {
			if n, ok := av.(*types.AttributeValueMemberN); ok {
				item[name] = &types.AttributeValueMemberN{Value: respell(n.Value)}
			}
		}
	}
	return item
}

// respell returns another spelling of the number n, the same value with an
// exponent: "5" → "5E0".
func respell(n string) string { return n + "E0" }

// Client is the part of a DynamoDB client Put uses (*dynamodb.Client and
// the mapper's Client satisfy it).
type Client interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Put leaves the item with key in table in state st, unconditionally, as a
// foreign writer would: a PutItem of st's item, or for Absent a DeleteItem.
func Put(ctx context.Context, c Client, table string, key map[string]types.AttributeValue, st State) error {
	if st.Kind == Absent {
		if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: key}); err != nil {
			return fmt.Errorf("itemstate: delete table %q: %w", table, err)
		}
		return nil
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: st.Item(key)}); err != nil {
		return fmt.Errorf("itemstate: put %s in table %q: %w", st.Kind, table, err)
	}
	return nil
}
