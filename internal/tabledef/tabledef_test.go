package tabledef

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/ddbkit/dynamo/internal/errs"
	"github.com/ddbkit/dynamo/internal/schema"
)

type event struct {
	P     string `dynamo:"p,hash"`
	N     int    `dynamo:"n,range"`
	Owner string `dynamo:"owner" index:"byOwner,hash"`
}

func TestInputFromSchemaAndOptions(t *testing.T) {
	s, err := schema.For(reflect.TypeFor[event]())
	if err != nil {
		t.Fatal(err)
	}
	enc := attributevalue.NewEncoder()
	in, err := Input("Events", s, enc, &Options{Provisioned: true, Read: 2, Write: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := FormatKeySchema(in.KeySchema, AttrTypes(in.AttributeDefinitions)), "HASH p (S), RANGE n (N)"; got != want {
		t.Errorf("key schema %s, want %s", got, want)
	}
	if len(in.GlobalSecondaryIndexes) != 1 || *in.GlobalSecondaryIndexes[0].ProvisionedThroughput.WriteCapacityUnits != 3 {
		t.Errorf("indexes %+v", in.GlobalSecondaryIndexes)
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Provisioned: true}, "WithProvisioned(0, 0)"},
		{Options{Projections: map[string]types.Projection{"nope": {}}}, `WithProjection("nope"): `},
		{Options{KeyTypes: map[string]types.ScalarAttributeType{"owner2": "S"}}, `WithKeyType("owner2")`},
		{Options{Tags: map[string]string{"": "x"}}, "empty key"},
	} {
		_, err := Input("Events", s, enc, &tc.o)
		if !errors.Is(err, errs.ErrInvalidInput) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}
