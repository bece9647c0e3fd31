// Command bank moves money between accounts with concurrent transfers, each
// one Mapper.Transact call: a function that loads both accounts and saves
// them, committed as one transaction that checks neither changed, and run
// again on the current accounts after a conflict. At the end it checks that the
// total balance is what it was and that every account's version is one
// (its opening) plus the number of transfers that touched it — no transfer
// lost, none applied twice.
//
//	go run ./examples/bank
package main
