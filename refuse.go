package dynamo

import "github.com/ddbkit/dynamo/internal/refusal"

// Which WriteOptions each call takes is one table, internal/refusal's
// Rules (docs/mapper.md shows it); every call's option step asks refuse.

// refuse returns the error of call, on table, given the options wo holds,
// when the table refuses one (refusal.Check); nil when the call takes them
// all. It is to be called before anything is sent.
func (wo *writeOptions) refuse(call refusal.Call, table string) error {
	return refusal.Check(call, table, refusal.Given{
		Behavior: wo.behavior, If: len(wo.ifs) > 0, MustExist: wo.mustExist,
		GuardedBy: len(wo.guards) > 0, ChangedFrom: wo.fromSet, IdemKey: wo.idemSet,
	})
}
