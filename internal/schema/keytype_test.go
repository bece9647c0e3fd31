package schema

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestKeyValueFaultNamesWhatDynamoDBRefuses(t *testing.T) {
	for _, tc := range []struct {
		v        types.AttributeValue
		limit    int
		absentOK bool
		want     string
	}{
		{nil, MaxPartitionKeyLen, false, "is unset"},
		{nil, MaxPartitionKeyLen, true, ""},
		{&types.AttributeValueMemberNULL{Value: true}, MaxSortKeyLen, true, ""},
		{&types.AttributeValueMemberS{Value: ""}, MaxPartitionKeyLen, false, "refuses as a key"},
		{&types.AttributeValueMemberS{Value: ""}, MaxPartitionKeyLen, true, "refuses in an index key"},
		{&types.AttributeValueMemberS{Value: "k\xff"}, MaxPartitionKeyLen, false, "not valid UTF-8"},
		{&types.AttributeValueMemberB{}, MaxSortKeyLen, false, "is empty"},
		{&types.AttributeValueMemberS{Value: strings.Repeat("s", 1025)}, MaxSortKeyLen, false, "1025 bytes, over DynamoDB's 1024"},
		{&types.AttributeValueMemberS{Value: strings.Repeat("s", 1025)}, MaxPartitionKeyLen, false, ""},
		{&types.AttributeValueMemberN{Value: "1"}, MaxSortKeyLen, false, ""},
		{&types.AttributeValueMemberBOOL{Value: true}, MaxSortKeyLen, false, "keys must be strings, numbers or binary"},
	} {
		what, fix := KeyValueFault(tc.v, tc.limit, tc.absentOK)
		if tc.want == "" && what != "" || !strings.Contains(what, tc.want) {
			t.Errorf("%#v: %q, want %q", tc.v, what, tc.want)
		}
		if (what == "") != (fix == "") {
			t.Errorf("%#v: what %q with fix %q", tc.v, what, fix)
		}
	}
}

type keyTypes struct {
	S  string `dynamo:"s,hash"`
	N  int    `dynamo:"n,range"`
	NS int    `dynamo:"ns,string"`
	B  []byte `dynamo:"b"`
}

func TestKeyKindAndAttrTypeFollowTheGoType(t *testing.T) {
	s, err := For(reflect.TypeFor[keyTypes]())
	if err != nil {
		t.Fatal(err)
	}
	enc := attributevalue.NewEncoder()
	for name, want := range map[string]types.ScalarAttributeType{"s": "S", "n": "N", "ns": "S", "b": "B"} {
		f := &s.Fields[s.ByName[name]]
		if got, err := s.KeyAttrType("T", f, nil, enc); err != nil || got != want {
			t.Errorf("KeyAttrType(%s) = %q, %v; want %q", name, got, err, want)
		}
		if got := s.KeyKind(f, enc); got != want[0] {
			t.Errorf("KeyKind(%s) = %q, want %q", name, got, want[0])
		}
	}
	f := &s.Fields[s.ByName["s"]]
	if got, _ := s.KeyAttrType("T", f, map[string]types.ScalarAttributeType{"s": "N"}, enc); got != "N" {
		t.Errorf("override: %q, want N", got)
	}
	_, err = s.KeyAttrType("T", f, map[string]types.ScalarAttributeType{"s": "X"}, enc)
	if want := `dynamo: invalid input: CreateTable "T": WithKeyType("s", "X"): key types are S, N or B`; err == nil || err.Error() != want {
		t.Errorf("bad override: %v, want %s", err, want)
	}
}
