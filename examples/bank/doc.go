// Command bank moves money between accounts with concurrent transfers, each
// a version-checked transaction of two saves. At the end it checks that the
// total balance is what it was and that every account's version is one
// (its opening) plus the number of transfers that touched it — no transfer
// lost, none applied twice.
//
//	go run ./examples/bank
package main
