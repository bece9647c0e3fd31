package dynamo

// The package's old names, kept so that code written against them still
// compiles and works as before. Each says what to use instead.

// Clobber is the old name of WithSaveBehavior(SaveClobber) for BatchSave
// and BatchDelete; it does the same.
//
// Deprecated: use WithSaveBehavior(SaveClobber).
func Clobber() BatchWriteOption { return clobberOption{} }

type clobberOption struct{}

func (clobberOption) applyBatchWrite(o *batchWriteOptions) { o.write.behavior = SaveClobber }

// Txn is the old name of Tx.
//
// Deprecated: use Tx.
type Txn = Tx

// TxnTable is the old name of TxTable.
//
// Deprecated: use TxTable.
type TxnTable[T any] = TxTable[T]
