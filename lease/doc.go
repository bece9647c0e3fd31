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
// record's incarnation unchanged for the lease duration × the clock-skew
// rate, measured on its own monotonic clock from after it read the record,
// takes it over with a write conditioned on that incarnation — the way
// Amazon's DynamoDB Lock Client does with a version number. As long as no
// clock runs faster than another by more than the skew rate, the holder has
// given up before the waiter takes over. A released record is taken at once.
//
// A record's incarnation is its version together with the random attempt id
// of the acquisition that wrote it, which the holder's heartbeats and release
// keep and check. A version alone is not an identity: a record deleted and
// created again starts again at version 1, and a waiter that had watched
// version 1 of the old record would take the new holder's over at once. The
// attempt id is never reused, so the waiter's wait starts again whenever
// the incarnation changes, and its takeover fails if the record is not the
// incarnation it watched. A write whose answer was lost (or that failed
// after an attempt that may have been applied, dynamo.ErrUnknownOutcome) is
// recognised by the same attempt id when the record is read again.
//
// # Tokens and the token record
//
// Every acquisition of a key writes, in one transaction with the record,
// the key's token record: an item of the same table under the key NUL
// "token:" key (lease keys may not start with a NUL byte), holding the
// highest token issued for the key, the holder's attempt id and duration,
// and whether it released. The transaction is conditioned on the stored
// token being below the new one, so tokens issued for a key strictly
// increase in the order holders got them — across releases, takeovers,
// deletions of the record and clocks set years apart. A takeover's token is
// the old one plus one; a new record's token is the time in milliseconds,
// or the token record's plus one if that is higher. The package never
// deletes token records and gives them no TTL: the table keeps one small
// item per key ever leased. The price: an acquisition is one
// TransactWriteItems of two small items (4 write units) instead of one
// PutItem, a release two writes (the record, then the token record), and a
// read of a missing record reads the token record too. Deleting a token record (or the table) gives up
// the guarantee for its key, down to the time-in-milliseconds floor. All
// clients of a table must run a version of this package that writes token
// records; older ones do not, and a key gets its token record at its first
// acquisition by a newer one.
//
// # Outcomes that cannot be told
//
// A write whose answer is lost may have been applied. Acquire and
// TryAcquire settle such a write of theirs by reading the record (the
// attempt id tells); a heartbeat whose outcome is unknown is followed by
// another sooner, which finds the earlier one's version and carries on from
// it; Release reads the record to tell whether its write landed. Where a
// call cannot tell, its error wraps dynamo.ErrUnknownOutcome — never a plain
// error that would mean nothing was written. Guarded writes (Lease.WriteTx,
// Save, Delete) return Mapper.WriteTx's errors, which say the same.
//
// # Deleting a record
//
// Records are never deleted by this package: release marks a record
// released. The ttl attribute lets DynamoDB clean up records nobody has
// written for a long time (see WithTTL). If a record is deleted anyway — by
// a user, or by TTL — while a holder may still hold it:
//
//   - the holder learns it at its next heartbeat, whose write finds the
//     record gone: its lease ends (ErrLost, Done closed), and then it marks
//     the token record released. Its guarded writes (Lease.WriteTx, Save,
//     Delete) fail at once, since their condition names a record that is
//     gone;
//   - until then nobody is granted the key: the token record says a holder
//     has not released, so TryAcquire returns ErrHeld and Acquire waits —
//     until the token record says released, or for that holder's duration ×
//     skew rate from when it found the record missing, as for a silent
//     holder (by then the holder has given up);
//   - the next holder's token is above the old one, whatever its clock says.
//
// A record deleted after its holder released (its token record says so)
// is taken at once. So is a key with neither record nor token record.
//
// # Telemetry
//
// A client reports through the telemetry of the Mapper it was built on
// (dynamo.WithTracerProvider, WithMeterProvider, WithLogger): spans
// lease.Acquire, lease.TryAcquire and lease.Release, under which the
// mapper's spans nest, and lease.Lost with the event ddbkit.lease.lost when
// a held lease is lost; the metrics ddbkit.lease.held (up-down) and
// ddbkit.lease.lost. The mapper's logger is used unless WithLogger is given
// here. The lease key is recorded on spans only with
// dynamo.WithTelemetryKeys; the token always. See docs/telemetry.md.
//
// # Table
//
// The table has a string hash key "key"; Client.CreateTable creates it
// (on-demand, TTL on "expires"). Records and token records share it, so
// the table and IAM policy are the same as before token records existed.
// IAM: dynamodb:GetItem, PutItem, UpdateItem for Acquire (whose
// transaction needs no action of its own), heartbeats and Release; ConditionCheckItem on it for guarded
// writes, which also need the actions of their own writes on their tables
// (transactions have no IAM action of their own); CreateTable,
// DescribeTable, UpdateTimeToLive for CreateTable.
package lease
