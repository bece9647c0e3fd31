package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/ddbkit/dynamo"
)

// GuardedBy makes a write depend on a condition on another item, checked
// in the same transaction: here a bonus is paid into an account only while
// the company's account can cover it. Update keeps its loop; a failed check
// ends it with a *TxError naming the check, and nothing is written. A
// lease's Guard (package lease) is such a check, on the lease record.
func ExampleGuardedBy() {
	ctx := context.Background()
	accounts, _ := dynamo.NewTable[Account](dynamo.NewMapper(client), "Accounts")
	if _, err := accounts.Save(ctx, Account{ID: "company", Balance: 100}); err != nil {
		log.Fatal(err)
	}
	covered := func() dynamo.TxOp {
		return accounts.TxCheck(Account{ID: "company"},
			dynamo.WithSaveBehavior(dynamo.SaveClobber), // no version check: only the If
			dynamo.If(expression.Name("balance").GreaterThanEqual(expression.Value(50))))
	}
	bonus := func(a Account) (Account, error) { a.Balance += 50; return a, nil }

	dan, err := accounts.Update(ctx, Account{ID: "dan"}, bonus, dynamo.GuardedBy(covered()))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dan has", dan.Balance)

	// The company's account is emptied: the check fails.
	if _, err := accounts.Update(ctx, Account{ID: "company"}, func(c Account) (Account, error) { c.Balance = 0; return c, nil }); err != nil {
		log.Fatal(err)
	}
	_, err = accounts.Update(ctx, Account{ID: "dan"}, bonus, dynamo.GuardedBy(covered()))
	var txErr *dynamo.TxError
	if errors.As(err, &txErr) && txErr.Failure(1) != nil { // member 0 is the write, the checks follow
		fmt.Println("not covered:", errors.Is(err, dynamo.ErrConditionFailed))
	}
	dan, _ = accounts.Load(ctx, Account{ID: "dan"}, dynamo.ConsistentRead())
	fmt.Println("dan has", dan.Balance)
	// Output:
	// dan has 50
	// not covered: true
	// dan has 50
}
