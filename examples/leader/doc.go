// Command leader shows leader election with package lease: several worker
// processes compete for one lease, the leader is killed (SIGKILL: no
// release, no goodbye), and another worker takes over once the dead
// leader's record has been silent for the lease duration × the clock-skew
// rate. It prints the fencing tokens and the failover time.
//
//	go run ./examples/leader
//
// It starts DynamoDB Local (or uses DYNAMODB_ENDPOINT), and runs its workers
// as child processes of itself.
package main
