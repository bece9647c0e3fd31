// Package lease provides distributed leases (locks with a time limit) on
// DynamoDB, with fencing tokens, built on versioned records written through
// the dynamo mapper.
//
// A Client acquires leases on string keys; each key is one item of the
// lease table. A Lease stays held while its holder's heartbeats extend it.
// Its loss — taken over, released, or not extended in time — closes Done()
// and cancels Context() before another holder can take it over, and Err()
// says why. Token() is a fencing token: strictly greater for every later
// holder of the key, across releases too. Lease.WriteTx, Save and Delete make
// a mapper write conditional on still holding the lease, in one
// TransactWriteItems, so a paused or partitioned former holder can never
// write after its lease is gone.
//
// # Taking over without trusting clocks
//
// Nobody compares wall clocks. A holder measures its lease from the moment
// before it sent the heartbeat that extended it, on its own monotonic clock,
// and gives up at that moment plus the lease duration. A waiter that sees a
// record's version unchanged for the lease duration × the clock-skew rate,
// measured on its own monotonic clock from after it read the record, takes
// it over with a write conditioned on that version — the way Amazon's
// DynamoDB Lock Client does. As long as no clock runs faster than another by
// more than the skew rate, the holder has given up before the waiter takes
// over. A released record is taken at once.
//
// Records are never deleted: release marks a record released, so the next
// holder's token is the old one plus one. The ttl attribute only lets
// DynamoDB clean up records nobody has used for a long time (see WithTTL);
// nothing depends on it for correctness, since a new record's first token is
// the current time in milliseconds, far above the tokens of a record that
// was deleted days earlier.
//
// # Table
//
// The table has a string hash key "key"; Client.CreateTable creates it
// (on-demand, TTL on "expires"). IAM: dynamodb:GetItem, PutItem, UpdateItem
// for Acquire, heartbeats and Release; ConditionCheckItem on it for guarded
// writes, which also need the actions of their own writes on their tables
// (transactions have no IAM action of their own); CreateTable,
// DescribeTable, UpdateTimeToLive for CreateTable.
package lease
