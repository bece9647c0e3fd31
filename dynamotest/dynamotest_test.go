package dynamotest_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		runHelper()
		return
	}
	dynamotest.Main(m)
}

func TestClientAnswers(t *testing.T) {
	t.Parallel()
	start := time.Now()
	c := dynamotest.Client(t)
	t.Logf("first Client call took %v (includes DynamoDB Local start-up if this test ran first)", time.Since(start))
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
}

func TestClientsShareOneServer(t *testing.T) {
	t.Parallel()
	c1, c2 := dynamotest.Client(t), dynamotest.Client(t)
	if e1, e2 := dynamotest.Endpoint(t), dynamotest.Endpoint(t); e1 != e2 {
		t.Fatalf("Endpoint returned %q, then %q; want one server", e1, e2)
	}
	// A table made through one client is visible through the other: same process,
	// same in-memory database.
	name := dynamotest.KeyTable(t, c1, "shared", "pk", types.ScalarAttributeTypeS, "", "")
	if _, err := c2.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name}); err != nil {
		t.Fatalf("DescribeTable through the second client: %v", err)
	}
}

func TestCreateTable(t *testing.T) {
	t.Parallel()
	c := dynamotest.Client(t)
	in := &dynamodb.CreateTableInput{
		TableName: aws.String("orders"),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN},
			{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("by-g"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	}
	before := fmt.Sprintf("%+v", *in)

	name1 := dynamotest.CreateTable(t, c, in)
	name2 := dynamotest.CreateTable(t, c, in)

	if after := fmt.Sprintf("%+v", *in); after != before || aws.ToString(in.TableName) != "orders" || in.BillingMode != "" {
		t.Errorf("CreateTable modified its input:\nbefore %s\nafter  %s", before, after)
	}
	if name1 == name2 {
		t.Errorf("two CreateTable calls returned the same name %q", name1)
	}
	for _, name := range []string{name1, name2} {
		if !strings.HasPrefix(name, "orders-") {
			t.Errorf("table name %q does not start with the prefix orders-", name)
		}
		out, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			t.Fatalf("DescribeTable(%s): %v", name, err)
		}
		tab := out.Table
		if tab.TableStatus != types.TableStatusActive {
			t.Errorf("%s: status %s, want ACTIVE", name, tab.TableStatus)
		}
		if tab.BillingModeSummary == nil || tab.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
			t.Errorf("%s: billing mode summary %+v, want PAY_PER_REQUEST", name, tab.BillingModeSummary)
		}
		if len(tab.KeySchema) != 2 || len(tab.GlobalSecondaryIndexes) != 1 {
			t.Errorf("%s: key schema %d elements, %d GSIs; want 2 and 1", name, len(tab.KeySchema), len(tab.GlobalSecondaryIndexes))
		}
	}
}

func TestCreateTableNamesAfterTestAndDeletesAtCleanup(t *testing.T) {
	t.Parallel()
	c := dynamotest.Client(t)
	var name string
	t.Run("sub/case #1", func(t *testing.T) {
		name = dynamotest.KeyTable(t, c, "", "pk", types.ScalarAttributeTypeS, "sk", types.ScalarAttributeTypeB)
		want := "TestCreateTableNamesAfterTestAndDeletesAtCleanup_sub_case__1-"
		if !strings.HasPrefix(name, want) {
			t.Errorf("table name %q does not start with %q", name, want)
		}
	})
	_, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Fatalf("DescribeTable(%s) after the subtest ended: %v; want ResourceNotFoundException", name, err)
	}
}

func TestClientWith(t *testing.T) {
	t.Parallel()
	tr := dynamotest.NewCounter(nil)
	c := dynamotest.ClientWith(t, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: tr} })
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	if tr.Count() != 1 {
		t.Errorf("the custom transport saw %d requests, want 1", tr.Count())
	}
}

func TestNewClientFailedRequestIsAnAPIError(t *testing.T) {
	t.Parallel()
	c := dynamotest.Client(t)
	_, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: aws.String("no-such-table")})
	var notFound *types.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Fatalf("DescribeTable of a missing table: %v; want ResourceNotFoundException", err)
	}
}

func TestStartUsesDynamoDBEndpoint(t *testing.T) {
	// Something that answers ListTables, as Start checks.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		fmt.Fprint(w, `{"TableNames":[]}`)
	}))
	defer srv.Close()
	t.Setenv("DYNAMODB_ENDPOINT", srv.URL)
	ep, stop, err := dynamotest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	stop()
	stop()
	if ep != srv.URL {
		t.Errorf("Start returned %q, want DYNAMODB_ENDPOINT", ep)
	}
	if got := dynamotest.Endpoint(t); got != ep {
		t.Errorf("Endpoint returned %q, want DYNAMODB_ENDPOINT", got)
	}
}

func TestStartAndStop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	// Start its own server even when the run shares one through
	// DYNAMODB_ENDPOINT (as scripts/test.sh does): starting is what this tests.
	// t.Setenv rules out t.Parallel, and so keeps the change from other tests.
	t.Setenv("DYNAMODB_ENDPOINT", "")
	start := time.Now()
	ep, stop, err := dynamotest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DynamoDB Local answered %v after Start", time.Since(start).Round(time.Millisecond))
	defer stop()
	c := dynamotest.NewClient(ep, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("ListTables: %v", err)
	}
	stop()
	stop() // a second call is harmless
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err == nil {
		t.Fatalf("ListTables after stop succeeded; want the server gone")
	}
}

const helperEnv = "DYNAMOTEST_HELPER"

// runHelper is the child process of TestServerDiesWithTestBinary: it starts a
// server, prints its endpoint and waits to be killed.
func runHelper() {
	ep, _, err := dynamotest.Start(context.Background())
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(ep)
	select {}
}

func TestServerDiesWithTestBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux has a parent-death signal")
	}
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	// The helper starts its own server even when this run shares one through
	// DYNAMODB_ENDPOINT (as scripts/test.sh does).
	cmd.Env = append(withoutEnv(os.Environ(), "DYNAMODB_ENDPOINT"), helperEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper printed %q (%v), want an endpoint", line, err)
	}
	ep := strings.TrimSpace(line)
	c := dynamotest.NewClient(ep, func(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} })
	if _, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{}); err != nil {
		t.Fatalf("helper's server at %s does not answer: %v", ep, err)
	}

	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := c.ListTables(t.Context(), &dynamodb.ListTablesInput{})
		if err != nil {
			return // gone
		}
		if time.Now().After(deadline) {
			t.Fatalf("DynamoDB Local at %s still answers 10s after its parent was killed", ep)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStartChecksDynamoDBEndpoint: Start refuses a DYNAMODB_ENDPOINT where
// nothing answers, or without a scheme, naming the variable.
func TestStartChecksDynamoDBEndpoint(t *testing.T) {
	for _, ep := range []string{deadEndpoint(t), "127.0.0.1:8000"} {
		t.Setenv("DYNAMODB_ENDPOINT", ep)
		_, _, err := dynamotest.Start(t.Context())
		if err == nil || !strings.Contains(err.Error(), "DYNAMODB_ENDPOINT") {
			t.Errorf("DYNAMODB_ENDPOINT=%q: Start returned %v; want an error naming the variable", ep, err)
		}
	}
}

// withoutEnv returns env without the variable name.
func withoutEnv(env []string, name string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
