package integration

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ddbkit/dynamo"
	"github.com/ddbkit/dynamo/commitlog"
	"github.com/ddbkit/dynamo/dynamotest"
	"github.com/ddbkit/dynamo/lease"
)

// The public names the library promises (its contract), with their exact
// signatures: the integration tests stop compiling if one changes.
var (
	_ dynamo.Client                                                                              = (*dynamodb.Client)(nil)
	_ func(dynamo.Client, ...dynamo.Option) *dynamo.Mapper                                       = dynamo.NewMapper
	_ func(*dynamo.Mapper, string) (*dynamo.Table[Book], error)                                  = dynamo.NewTable[Book]
	_ func(*dynamo.Mapper, string) (*dynamo.Table[*Book], error)                                 = dynamo.NewTable[*Book]
	_ func(context.Context, Book, ...dynamo.ReadOption) (Book, error)                            = (*dynamo.Table[Book])(nil).Load
	_ func(context.Context, Book, ...dynamo.WriteOption) (Book, error)                           = (*dynamo.Table[Book])(nil).Save
	_ func(context.Context, Book, ...dynamo.WriteOption) error                                   = (*dynamo.Table[Book])(nil).Delete
	_ func(context.Context, Book, func(Book) (Book, error), ...dynamo.WriteOption) (Book, error) = (*dynamo.Table[Book])(nil).Update
	_ func() dynamo.ReadOption                                                                   = dynamo.ConsistentRead
	_ func(dynamo.SaveBehavior) dynamo.WriteOption                                               = dynamo.WithSaveBehavior
	_ func(expression.ConditionBuilder) dynamo.WriteOption                                       = dynamo.If
	_                                                                                            = [...]dynamo.SaveBehavior{dynamo.SaveUpdate, dynamo.SaveUpdateSkipNulls, dynamo.SavePut, dynamo.SaveClobber, dynamo.SaveAppendSet}
	_                                                                                            = [...]error{dynamo.ErrNotFound, dynamo.ErrVersionConflict, dynamo.ErrConditionFailed}

	_ func(*dynamo.Mapper, string, ...lease.Option) (*lease.Client, error) = lease.New
	_ func(context.Context, string) (*lease.Lease, error)                  = (*lease.Client)(nil).Acquire
	_ func(context.Context, string) (*lease.Lease, error)                  = (*lease.Client)(nil).TryAcquire
	_ func() string                                                        = (*lease.Lease)(nil).Key
	_ func() int64                                                         = (*lease.Lease)(nil).Token
	_ func() <-chan struct{}                                               = (*lease.Lease)(nil).Done
	_ func() context.Context                                               = (*lease.Lease)(nil).Context
	_ func(context.Context) error                                          = (*lease.Lease)(nil).Release
	_ func(context.Context, ...dynamo.CreateTableOption) error             = (*lease.Client)(nil).CreateTable
	_                                                                      = [...]error{lease.ErrHeld, lease.ErrLost}
	_                                                                      = [...]func(time.Duration) lease.Option{lease.WithLeaseDuration, lease.WithHeartbeatInterval, lease.WithPollInterval}
	_ func(float64) lease.Option                                           = lease.WithClockSkewRate
	_ func(string) lease.Option                                            = lease.WithOwner

	_                                                                                                    = commitlog.ObjectInfo{Path: "", ETag: "", Size: 0}
	_ func(*dynamo.Mapper, string, commitlog.Store, ...commitlog.Option) (*commitlog.Committer, error)   = commitlog.NewCommitter
	_ func(context.Context, string, []byte) (commitlog.ObjectInfo, error)                                = (*commitlog.Committer)(nil).PutIfNotExists
	_ func(context.Context, string, []byte, string) (commitlog.ObjectInfo, error)                        = (*commitlog.Committer)(nil).PutIfMatch
	_ func(context.Context, string, string) (commitlog.ObjectInfo, error)                                = (*commitlog.Committer)(nil).CopyIfNotExists
	_ func(*dynamo.Mapper, string, commitlog.Store, string, ...commitlog.Option) (*commitlog.Log, error) = commitlog.OpenLog
	_ func(context.Context, []byte) (int64, error)                                                       = (*commitlog.Log)(nil).Append
	_ func(context.Context, int64) ([]byte, error)                                                       = (*commitlog.Log)(nil).Read
	_ func(context.Context) (int64, error)                                                               = (*commitlog.Log)(nil).Latest
	_ func(context.Context, ...dynamo.CreateTableOption) error                                           = (*commitlog.Committer)(nil).CreateTable
	_ func(context.Context, ...dynamo.CreateTableOption) error                                           = (*commitlog.Log)(nil).CreateTable
	_                                                                                                    = [...]error{commitlog.ErrExists, commitlog.ErrPreconditionFailed, commitlog.ErrNotExist}
	_ func() commitlog.Store                                                                             = commitlog.NewMemStore
	_ func(string) (commitlog.Store, error)                                                              = commitlog.NewDirStore
	_ func(*s3.Client, string) commitlog.Store                                                           = commitlog.NewS3Store
	_ func(time.Duration) commitlog.Option                                                               = commitlog.WithTimeout
	//lint:ignore SA1019 the contract pins the deprecated alias as well
	_ func(float64) commitlog.Option       = commitlog.WithMaxClockSkewRate
	_ func(time.Duration) commitlog.Option = commitlog.WithTTL

	_ func(testing.TB) *dynamodb.Client = dynamotest.Client
)

// storeMethods pins the Store interface's method set.
type storeMethods interface {
	Head(ctx context.Context, path string) (commitlog.ObjectInfo, error)
	Get(ctx context.Context, path string) ([]byte, commitlog.ObjectInfo, error)
	Put(ctx context.Context, path string, data []byte) (commitlog.ObjectInfo, error)
	Copy(ctx context.Context, src, dst string) (commitlog.ObjectInfo, error)
	Delete(ctx context.Context, path string) error
	List(ctx context.Context, prefix string) iter.Seq2[commitlog.ObjectInfo, error]
}

var (
	_ storeMethods    = commitlog.Store(nil)
	_ commitlog.Store = storeMethods(nil)
)
