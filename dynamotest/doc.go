// Package dynamotest gives tests, examples and programs a DynamoDB-compatible
// server to talk to: the one named by DYNAMODB_ENDPOINT, or else a DynamoDB
// Local that it installs (if needed) and starts itself.
//
// # In tests
//
// [Client] returns a client for the shared server of the test binary, and
// [CreateTable] (or [KeyTable]) a fresh table that is deleted when the test
// ends:
//
//	func TestMain(m *testing.M) { dynamotest.Main(m) } // stops DynamoDB Local at the end
//
//	func TestSave(t *testing.T) {
//		c := dynamotest.Client(t)
//		table := dynamotest.KeyTable(t, c, "users", "id", types.ScalarAttributeTypeS, "", "")
//		// ... use c and table ...
//	}
//
// The first call to [Client], [ClientWith] or [Endpoint] in a test binary starts one
// DynamoDB Local (in memory, on a free port) that every later call and every test
// of the binary shares; tables keep tests apart, so give each test its own with
// [CreateTable]. The server stops when [Main] (or [Stop]) is called, and on Linux
// also when the test binary dies for any reason (it is started with a parent-death
// signal). Without [Main] on other systems, the Java process outlives the test
// binary.
//
// When no server can be had, these functions fail the test with a message that
// says how to fix it. A DYNAMODB_ENDPOINT is checked once per test binary (an
// http or https URL with a host, where something answers a ListTables within
// 3 s), so a dead or malformed one fails every test at once with a message
// naming the variable. A test is skipped instead of failed only when
// DYNAMOTEST_SKIP_UNAVAILABLE=1 asks for it and CI is not set (see Environment).
//
// # One server for many packages
//
// Each test binary, and so each package of a `go test ./...` run, starts its
// own DynamoDB Local (2–7 s and about 200 MB each). To have them share one,
// run go test under the dynamodb-local command of this module, which starts
// one DynamoDB Local (as dynamotest does: installed if needed, in memory,
// -sharedDb), runs the command with DYNAMODB_ENDPOINT set to it, stops it when
// the command ends and exits with the command's exit code:
//
//	go run github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local -- go test ./...
//
// Without a command it prints `export DYNAMODB_ENDPOINT=http://127.0.0.1:PORT`
// (and writes it to -env-file FILE) and serves until interrupted, for a server
// kept across runs; -port picks the port (default: a free one). On Linux the
// Java process dies with the command even when the command is killed with
// SIGKILL. Its documentation (go doc github.com/ddbkit/dynamo/dynamotest/cmd/dynamodb-local)
// has the details. Tables keep tests apart on a shared server as on a private
// one: give each test its own with [CreateTable] or [KeyTable], and do not
// count the tables of the server.
//
// # In programs
//
// [Start] returns an endpoint and a stop function, and [NewClient] a client for
// it, with the same configuration the tests use:
//
//	endpoint, stop, err := dynamotest.Start(ctx)
//	if err != nil { ... }
//	defer stop()
//	c := dynamotest.NewClient(endpoint)
//
// # Faults
//
// Faults is an http.RoundTripper that injects, seeded and bounded in count and
// time, what production networks and services do: delays, responses lost
// after the server applied the request, HTTP 500s (some after applying),
// throttling and connection resets. It speaks DynamoDB's and S3's error
// formats, so the SDKs retry and decode its errors as the real ones. Use it to
// check that your code loses and duplicates nothing when they happen:
//
//	f := dynamotest.NewFaults(dynamotest.FaultConfig{Seed: 1, Drop: 0.05, Throttle: 0.05, MaxFaults: 500}, nil)
//	c := f.Client(t) // a *dynamodb.Client through f; f.HTTPClient() for other SDK clients
//	// ... run the workload through c, then check the data through dynamotest.Client(t) ...
//	t.Log(f.Stats())
//
// The client of [Faults.Client] retries after a few milliseconds ([FastRetries]),
// not after the SDK's default backoff of up to 20 s, so a workload under faults
// runs at the speed of the server; pass your own retryer after it to change that.
// It keeps the SDK's 3 attempts and retry quota, which your own code's calls
// run out of at such rates (a call fails when its 3 attempts all meet a
// fault: one in a thousand at 10% faults); [RetryBudget] gives the client
// more attempts and no quota: f.Client(t, dynamotest.RetryBudget(10)).
// [CreateTable] and [KeyTable] are safe through such a client.
//
// Dropper drops the responses to one operation on demand, for tests of one
// lost response at an exact point; Counter counts round trips.
//
// # Environment
//
//   - DYNAMODB_ENDPOINT: use this server (for example http://localhost:8000, or a
//     real DynamoDB endpoint) instead of starting DynamoDB Local. It must have a
//     scheme (http:// or https://) and a host.
//   - DYNAMODB_LOCAL_DIR: where DynamoDB Local is installed (DynamoDBLocal.jar and
//     DynamoDBLocal_lib/ side by side), and so which version runs. Default:
//     $XDG_CACHE_HOME/ddbkit/dynamodb-local-1.25.1, or
//     ~/.cache/ddbkit/dynamodb-local-1.25.1 (DynamoDB Local 1.25.1, the jar
//     of the npm package amplify-dynamodb-simulator 2.9.30). When that folder
//     is missing or empty, the repository's scripts/install-dynamodb-local.sh
//     installs DynamoDB Local 1.25.1 there (it needs npm; DynamoDB Local itself
//     needs Java 17 or newer on PATH). To run another version, point the
//     variable at it: AWS's download of DynamoDB Local unpacked, or the
//     package/emulator folder of another version of the npm package
//     (`npm pack amplify-dynamodb-simulator@VERSION` and tar -xzf), or let
//     DYNAMODB_LOCAL_NPM_VERSION do that. Where the
//     script is not at hand (a vendored copy, a binary built with -trimpath),
//     install 1.25.1 the same way by hand. The variable is checked before
//     anything runs: a relative path, a file, a folder with other things in
//     it, or DynamoDBLocal.jar without DynamoDBLocal_lib/ is an error that
//     names it. The version in use (read from the jar) is named in start-up
//     errors, in the log of the test that started the server (go test -v
//     shows it) and in the dynamodb-local command's first line.
//   - DYNAMODB_LOCAL_NPM_VERSION: the version of the npm package
//     amplify-dynamodb-simulator (default 2.9.30) whose DynamoDB Local the
//     install script installs into a missing or empty DYNAMODB_LOCAL_DIR
//     (which it then needs). Only 2.9.30's checksums are pinned; for others
//     npm checks the download against the registry. A folder that already
//     holds DynamoDB Local is used as it is, whatever this says. Checked
//     before anything runs: MAJOR.MINOR.PATCH, with an optional -prerelease.
//   - DYNAMOTEST_SKIP_UNAVAILABLE: set to 1 (or true) to skip, rather than
//     fail, the tests that need a server when none can be had (no Java, no
//     DynamoDB Local, a dead DYNAMODB_ENDPOINT). Ignored under CI: when CI is
//     set to anything but false, such tests fail. A malformed
//     DYNAMODB_ENDPOINT always fails. Under go test -short such tests skip
//     whatever this says, and DynamoDB Local is never started (see
//     ShortWithoutServer).
//   - AWS_REGION: the region clients use; default us-east-1.
//   - AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN: used only for the
//     DYNAMODB_ENDPOINT server, and only when AWS_ACCESS_KEY_ID is set. Otherwise
//     clients sign with the dummy credentials dynamotest/dynamotest.
//
// The DynamoDB Local that dynamotest starts runs with -sharedDb: one set of
// tables whatever the access key and region, so code under test that builds its
// own client with its own credentials sees the test's tables. Run a long-lived
// server for DYNAMODB_ENDPOINT the same way, so both modes behave alike:
//
//	java -Djava.library.path=DynamoDBLocal_lib -jar DynamoDBLocal.jar -inMemory -sharedDb -port 8000
//
// DynamoDB Local listens on all interfaces (it has no option to bind to one
// address); clients reach it through 127.0.0.1.
//
// # State
//
// The package's only mutable state is the handle of the test binary's shared
// server, guarded by a mutex.
package dynamotest
