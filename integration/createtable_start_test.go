package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// The lease and commitlog tables can be created on every start: CreateTable
// takes dynamo.IfNotExists(); without it a second call says the table
// exists.
func TestCreateTableOnEveryStart(t *testing.T) {
	c := dynamotest.Client(t)
	m := dynamo.NewMapper(c)
	name := func(prefix string) string {
		var b [6]byte
		_, _ = rand.Read(b[:])
		n := prefix + "-" + hex.EncodeToString(b[:])
		t.Cleanup(func() {
			_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		})
		return n
	}
	lc, err := lease.New(m, name("leases"))
	if err != nil {
		t.Fatal(err)
	}
	cm, err := commitlog.NewCommitter(m, name("commits"), commitlog.NewMemStore())
	if err != nil {
		t.Fatal(err)
	}
	lg, err := commitlog.OpenLog(m, name("logs"), commitlog.NewMemStore(), "l")
	if err != nil {
		t.Fatal(err)
	}
	for name, create := range map[string]func(...dynamo.CreateTableOption) error{
		"lease":     func(o ...dynamo.CreateTableOption) error { return lc.CreateTable(ctx(t), o...) },
		"Committer": func(o ...dynamo.CreateTableOption) error { return cm.CreateTable(ctx(t), o...) },
		"Log":       func(o ...dynamo.CreateTableOption) error { return lg.CreateTable(ctx(t), o...) },
	} {
		for i := range 2 {
			if err := create(dynamo.IfNotExists()); err != nil {
				t.Fatalf("%s CreateTable(IfNotExists) #%d: %v", name, i+1, err)
			}
		}
		if err := create(); !errors.Is(err, dynamo.ErrTableExists) {
			t.Errorf("%s CreateTable without IfNotExists on an existing table: %v; want ErrTableExists", name, err)
		}
	}
}
