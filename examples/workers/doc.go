// Command workers shows a lease.Group: several worker processes share a
// job's partitions, each partition held by one worker at a time with a
// fencing token, spread evenly. One worker is killed (SIGKILL: no release,
// no goodbye); the others take its partitions over once its worker record
// has been silent for the lease duration × the clock-skew rate. It prints
// which worker holds which partitions whenever that settles, and how long
// the takeover took.
//
//	go run ./examples/workers
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT), and runs its
// workers as child processes of itself.
package main
