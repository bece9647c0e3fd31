package main

import (
	"strings"
	"testing"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

func TestSingleTable(t *testing.T) {
	var out strings.Builder
	if err := run(t.Context(), &out, dynamotest.Endpoint(t)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := `customer Ada <ada@example.com> (version 1)
  ORDER#1 open, total 30
  ORDER#2 shipped, total 12
  ORDER#3 open, total 45
orders total 87
open orders by time: [CUSTOMER#1/ORDER#1 CUSTOMER#2/ORDER#9 CUSTOMER#1/ORDER#3]
saving an order over the customer's profile: refused: true
saving a stale customer: version conflict: true
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
}
