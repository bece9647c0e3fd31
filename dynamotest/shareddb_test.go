package dynamotest_test

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/ddbkit/dynamo/dynamotest"
)

// TestOwnCredentialsSeeTheTestsTables checks that code under test which
// builds its own client, with its own credentials, sees the tables a test
// made through Client: DynamoDB Local runs with -sharedDb, as a long-lived
// server named by DYNAMODB_ENDPOINT usually does.
func TestOwnCredentialsSeeTheTestsTables(t *testing.T) {
	t.Parallel()
	if os.Getenv("DYNAMODB_ENDPOINT") != "" {
		t.Skip("DYNAMODB_ENDPOINT is set: whether its server shares tables across credentials is its own affair")
	}
	name := dynamotest.KeyTable(t, dynamotest.Client(t), "shareddb", "pk", types.ScalarAttributeTypeS, "", "")
	own := dynamotest.NewClient(dynamotest.Endpoint(t), func(o *dynamodb.Options) {
		o.Credentials = credentials.NewStaticCredentialsProvider("SERVICEKEY", "servicesecret", "")
	})
	if _, err := own.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name}); err != nil {
		t.Fatalf("DescribeTable %s through a client with other credentials: %v", name, err)
	}
}
