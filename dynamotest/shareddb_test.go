package dynamotest_test

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// TestOwnCredentialsSeeTheTestsTables checks that code under test which
// builds its own client, with its own credentials, sees the tables a test
// made through the client of a DynamoDB Local that dynamotest started: it runs
// with -sharedDb, as a long-lived server named by DYNAMODB_ENDPOINT usually does.
func TestOwnCredentialsSeeTheTestsTables(t *testing.T) {
	if testing.Short() {
		t.Skip("starts DynamoDB Local")
	}
	// Start its own server even when the run shares one through
	// DYNAMODB_ENDPOINT (as scripts/test.sh does): how dynamotest starts
	// DynamoDB Local is what this tests. t.Setenv rules out t.Parallel.
	t.Setenv("DYNAMODB_ENDPOINT", "")
	ep, stop, err := dynamotest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // after KeyTable's clean-up, registered later
	name := dynamotest.KeyTable(t, dynamotest.NewClient(ep), "shareddb", "pk", types.ScalarAttributeTypeS, "", "")
	own := dynamotest.NewClient(ep, func(o *dynamodb.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider("SERVICEKEY", "servicesecret", "")
		o.Region = "eu-west-3"
	})
	if _, err := own.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name}); err != nil {
		t.Fatalf("DescribeTable %s through a client with other credentials and region: %v", name, err)
	}
}
