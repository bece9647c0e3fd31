// Package integration holds end-to-end tests against a real
// DynamoDB-compatible server: DynamoDB Local, started by dynamotest, or the
// endpoint DYNAMODB_ENDPOINT names.
//
// The package has no code of its own; its tests use only the public API of
// the module's packages, as a user's program would:
//
//   - the mapper's version rules, save behaviours, If conditions, lost
//     responses (through dynamotest.Dropper) and concurrent Update calls, in
//     one process and across processes (mapper_test.go);
//   - transactions, batches, Query and Scan with cursors and parallel scans,
//     and table creation from tags (tx_test.go, batch_test.go,
//     query_test.go, createtable_test.go);
//   - interoperation with Java's DynamoDBMapper and Enhanced Client, run
//     with the Java SDK jars DynamoDB Local ships (java_test.go);
//   - lease exclusivity and fencing under many clients and a frozen holder
//     (lease_test.go);
//   - a lease group across six worker processes sharing 64 keys, one
//     killed and one stopped past its lease, every write guarded, each
//     key's log checked for one holder after another (group_test.go);
//   - the commit log and Committer on an in-process S3 server
//     (commitlog_test.go);
//   - a backfill of -backfill.items items under 8 live writers: in one
//     process, in a process killed (SIGKILL) half-way and started again, in
//     two processes with one killed or one frozen (SIGSTOP) past its
//     leases; every item changed exactly once and every acknowledged live
//     write kept (backfill_test.go);
//   - the mapper, leases, the commit log and backfills under injected
//     faults: delays, lost responses, 500s, throttling, connection resets
//     (faults_test.go), their recorded histories checked for
//     linearizability with porcupine against models of the register, the
//     idempotent counter, the lease, the log, the bank and backfilled items
//     (linear_test.go);
//   - a compile-time check of every name and signature the contract fixes
//     (contract_test.go).
//
// Run them with
//
//	go test -race ./integration
//
// A test that needs a server and cannot get one fails (under CI=true as
// anywhere else); it never skips. The benchmarks report the figures in
// BENCHMARKS.md.
package integration
