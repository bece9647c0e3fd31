package dynamotest

import (
	"context"
	"os"

	"github.com/ddbkit/dynamo/internal/ddblocal"
)

const envEndpoint = ddblocal.EnvEndpoint

// Start returns the endpoint of a DynamoDB-compatible server for a program and a
// function that stops it.
//
// When DYNAMODB_ENDPOINT is set, Start checks it as [Endpoint] does and returns
// it and a stop function that does nothing. Otherwise Start installs DynamoDB
// Local if it is not installed yet (see the package documentation), starts a new
// in-memory DynamoDB Local (with -sharedDb) on a free port and returns once it
// answers requests. ctx bounds the installation and the start-up, not the life
// of the server: that ends when stop is called or (on Linux) when the calling
// process dies. stop may be called more than once.
//
// Each call starts its own server; tests should use [Client], which shares one.
// To share one server between the test binaries of several packages, run them
// under the dynamodb-local command (see the package documentation).
func Start(ctx context.Context) (endpoint string, stop func(), err error) {
	if ep := os.Getenv(envEndpoint); ep != "" {
		if err := checkEndpoint(ctx, ep); err != nil {
			return "", nil, err
		}
		return ep, func() {}, nil
	}
	s, err := ddblocal.Start(ctx, 0)
	if err != nil {
		return "", nil, err
	}
	return s.Endpoint, s.Stop, nil
}

// LocalDir returns the folder DynamoDB Local is installed in (the one with
// DynamoDBLocal.jar and DynamoDBLocal_lib/): DYNAMODB_LOCAL_DIR when set,
// otherwise the default folder, installing DynamoDB Local there first if
// needed. A DYNAMODB_LOCAL_DIR that is neither an installation nor a missing
// or empty folder is an error that names it. Tests that use the Java SDK jars
// DynamoDB Local ships take them from there. ctx bounds the installation.
func LocalDir(ctx context.Context) (string, error) {
	return ddblocal.Dir(ctx)
}
