package dynamo

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/ddbkit/dynamo/dynamotest"
)

// TestFakeAnswersAsDynamoDBLocal runs one script of raw requests —
// conditions, update expressions, transactions, queries with filters and
// paging, and requests DynamoDB refuses — against the fake and against
// DynamoDB Local, and compares the answers step by step. The fake evaluates
// expressions with the mapper's own parser (internal/condexpr): without this
// test a parser bug would pass both the mapper's tests and the fake's.
// Messages are not compared (the fake's are its own); error codes, items,
// counts and positions are.
func TestFakeAnswersAsDynamoDBLocal(t *testing.T) {
	ctx := t.Context()
	local := dynamotest.Client(t)
	name := fmt.Sprintf("Conform-%s", strings.ReplaceAll(t.Name(), "/", "-"))
	_, _ = local.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: &name})
	if _, err := local.CreateTable(ctx, conformTable(name)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = local.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &name}) })
	fake := &fakeDB{}
	if _, err := fake.CreateTable(ctx, conformTable(name)); err != nil {
		t.Fatal(err)
	}

	for i, st := range conformScript(name) {
		lo, lerr := st.do(ctx, namer{local})
		fo, ferr := st.do(ctx, namer{fake})
		if want, got := conformOutcome(lo, lerr), conformOutcome(fo, ferr); got != want {
			t.Errorf("step %d, %s:\nDynamoDB Local: %s\nfake:           %s\n(errors: %v; %v)", i+1, st.name, want, got, lerr, ferr)
		}
	}
}

func conformTable(name string) *dynamodb.CreateTableInput {
	s := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName:   &name,
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: s},
			{AttributeName: aws.String("sk"), AttributeType: s},
			{AttributeName: aws.String("status"), AttributeType: s},
		},
		KeySchema: ks("pk", "sk"),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			{IndexName: aws.String("byStatus"), KeySchema: ks("status", "sk"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}},
			{IndexName: aws.String("byStatusKeys"), KeySchema: ks("status", "sk"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
			{IndexName: aws.String("byStatusN"), KeySchema: ks("status", "sk"),
				Projection: &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{"n"}}},
		},
		LocalSecondaryIndexes: []types.LocalSecondaryIndex{
			{IndexName: aws.String("localStatusKeys"), KeySchema: ks("pk", "status"), Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}},
		},
	}
}

// conformNames are the attribute names the script's placeholders stand for
// (the fake, like the mapper, reads expressions with placeholders only).
var conformNames = map[string]string{"#pk": "pk", "#sk": "sk", "#s": "status", "#n": "n", "#t": "tags",
	"#m": "m", "#b": "b", "#l": "l", "#g": "gone"}

// namer fills each request's ExpressionAttributeNames with the placeholders
// its expressions use, as DynamoDB wants: no more, no fewer.
type namer struct{ Client }

func (c namer) PutItem(ctx context.Context, in *dynamodb.PutItemInput, o ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.PutItem(ctx, in, o...)
}

func (c namer) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, o ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.UpdateItem(ctx, in, o...)
}

func (c namer) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, o ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.DeleteItem(ctx, in, o...)
}

func (c namer) GetItem(ctx context.Context, in *dynamodb.GetItemInput, o ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.GetItem(ctx, in, o...)
}

func (c namer) Query(ctx context.Context, in *dynamodb.QueryInput, o ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.Query(ctx, in, o...)
}

func (c namer) Scan(ctx context.Context, in *dynamodb.ScanInput, o ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.Scan(ctx, in, o...)
}

func (c namer) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.TransactWriteItems(ctx, in, o...)
}

func (c namer) TransactGetItems(ctx context.Context, in *dynamodb.TransactGetItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactGetItemsOutput, error) {
	fillNames(reflect.ValueOf(in))
	return c.Client.TransactGetItems(ctx, in, o...)
}

var placeholder = regexp.MustCompile(`#\w+`)

// fillNames sets ExpressionAttributeNames in v and the structs it points to
// (a transaction's members) from the placeholders in their *Expression fields.
func fillNames(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillNames(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			fillNames(v.Index(i))
		}
	case reflect.Struct:
		names := map[string]string{}
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			if !sf.IsExported() {
				continue
			}
			if e, ok := f.Interface().(*string); ok && e != nil && strings.HasSuffix(sf.Name, "Expression") {
				for _, p := range placeholder.FindAllString(*e, -1) {
					names[p] = conformNames[p]
				}
			}
			fillNames(f)
		}
		if f := v.FieldByName("ExpressionAttributeNames"); f.IsValid() && len(names) > 0 {
			f.Set(reflect.ValueOf(names))
		}
	}
}

type conformStep struct {
	name string
	do   func(context.Context, Client) (any, error)
}

// conformScript is the script: each step sees the state the steps before it
// left.
func conformScript(table string) []conformStep {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
	key := func(pk, sk string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{"pk": s(pk), "sk": s(sk)}
	}
	item := func(pk, sk string, kv ...any) map[string]types.AttributeValue {
		it := key(pk, sk)
		for i := 0; i < len(kv); i += 2 {
			it[kv[i].(string)] = kv[i+1].(types.AttributeValue)
		}
		return it
	}
	tbl := &table
	put := func(name string, it map[string]types.AttributeValue, cond string, vals map[string]types.AttributeValue) conformStep {
		return conformStep{name, func(ctx context.Context, c Client) (any, error) {
			in := &dynamodb.PutItemInput{TableName: tbl, Item: it, ExpressionAttributeValues: vals,
				ReturnValues: types.ReturnValueAllOld, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
			if cond != "" {
				in.ConditionExpression = &cond
			}
			return c.PutItem(ctx, in)
		}}
	}
	update := func(name string, k map[string]types.AttributeValue, expr, cond string, names map[string]string, vals map[string]types.AttributeValue, rv types.ReturnValue) conformStep {
		return conformStep{name, func(ctx context.Context, c Client) (any, error) {
			in := &dynamodb.UpdateItemInput{TableName: tbl, Key: k, UpdateExpression: &expr,
				ExpressionAttributeNames: names, ExpressionAttributeValues: vals, ReturnValues: rv,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}
			if cond != "" {
				in.ConditionExpression = &cond
			}
			return c.UpdateItem(ctx, in)
		}}
	}
	query := func(name string, in dynamodb.QueryInput) conformStep {
		return conformStep{name, func(ctx context.Context, c Client) (any, error) {
			in := in
			in.TableName = tbl
			return c.Query(ctx, &in)
		}}
	}
	list := func(vs ...types.AttributeValue) types.AttributeValue { return &types.AttributeValueMemberL{Value: vs} }
	ss := func(vs ...string) types.AttributeValue { return &types.AttributeValueMemberSS{Value: vs} }

	return []conformStep{
		put("put new", item("a", "1", "status", s("open"), "n", n("1"), "tags", ss("x", "y"),
			"m", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"b": list(n("1"), n("2"))}}),
			"attribute_not_exists(#pk)", nil),
		put("put existing refused, old item back", item("a", "1"), "attribute_not_exists(#pk)", nil),
		put("put a/2", item("a", "2", "status", s("open"), "n", n("5")), "", nil),
		put("put a/3", item("a", "3", "status", s("closed"), "n", n("7.50")), "", nil),
		{"get a number stored with trailing zeros", func(ctx context.Context, c Client) (any, error) {
			return c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("a", "3"), ConsistentRead: aws.Bool(true)})
		}},
		put("put a/4 without status", item("a", "4", "n", n("-3")), "", nil),
		put("put b/1", item("b", "1", "status", s("open"), "n", n("2")), "", nil),
		put("put replaces, returns old", item("a", "2", "status", s("open"), "n", n("6")), "#n = :five",
			map[string]types.AttributeValue{":five": n("5")}),
		update("set, add, remove under a compound condition", key("a", "1"),
			"SET #n = #n + :one, #s = :closed REMOVE #m.#b[0] ADD #t :z",
			"#n = :one AND contains(#t, :x) AND size(#m.#b) = :two AND attribute_type(#n, :N)", nil,
			map[string]types.AttributeValue{":one": n("1"), ":closed": s("closed"), ":z": ss("z"), ":x": s("x"),
				":two": n("2"), ":N": s("N")}, types.ReturnValueAllNew),
		update("condition no longer holds", key("a", "1"), "SET #n = :one", "#n = :one", nil,
			map[string]types.AttributeValue{":one": n("1")}, types.ReturnValueAllNew),
		update("if_not_exists and list_append create an item", key("a", "9"),
			"SET #n = if_not_exists(#n, :zero) + :one, #l = list_append(if_not_exists(#l, :empty), :l)", "", nil,
			map[string]types.AttributeValue{":zero": n("0"), ":one": n("1"), ":empty": list(), ":l": list(s("p"))},
			types.ReturnValueAllNew),
		update("updated old", key("a", "9"), "SET #n = #n - :one, #l[0] = :q", "", nil,
			map[string]types.AttributeValue{":one": n("1"), ":q": s("q")}, types.ReturnValueUpdatedOld),
		update("updated new, arithmetic on decimals", key("a", "3"), "SET #n = #n + :d", "begins_with(#s, :c)", nil,
			map[string]types.AttributeValue{":d": n("0.25"), ":c": s("clo")}, types.ReturnValueUpdatedNew),
		update("updating a key attribute refused", key("a", "9"), "SET #sk = :v", "", nil,
			map[string]types.AttributeValue{":v": s("x")}, types.ReturnValueNone),
		update("an undefined value refused", key("a", "9"), "SET #n = :nope", "", nil,
			map[string]types.AttributeValue{":one": n("1")}, types.ReturnValueNone),
		{"delete under OR, BETWEEN and IN", func(ctx context.Context, c Client) (any, error) {
			return c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: key("a", "2"),
				ConditionExpression: aws.String("attribute_exists(#pk) AND (#n BETWEEN :lo AND :hi OR #s IN (:open, :closed)) AND NOT attribute_exists(#g)"), ReturnValues: types.ReturnValueAllOld,
				ExpressionAttributeValues: map[string]types.AttributeValue{":lo": n("100"), ":hi": n("200"),
					":open": s("open"), ":closed": s("closed")}})
		}},
		{"delete of a missing item under attribute_exists", func(ctx context.Context, c Client) (any, error) {
			return c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: tbl, Key: key("a", "7"),
				ConditionExpression:                 aws.String("attribute_exists(#pk)"),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld})
		}},
		{"get with a projection of nested paths", func(ctx context.Context, c Client) (any, error) {
			return c.GetItem(ctx, &dynamodb.GetItemInput{TableName: tbl, Key: key("a", "1"), ConsistentRead: aws.Bool(true),
				ProjectionExpression: aws.String("#pk, #m.#b[0], #t, #s")})
		}},
		query("query page 1 of 2", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a AND #sk BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":lo": s("1"), ":hi": s("8")},
			Limit:                     aws.Int32(2), ConsistentRead: aws.Bool(true)}),
		query("query page 2 from its start key", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a AND #sk BETWEEN :lo AND :hi"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":lo": s("1"), ":hi": s("8")},
			Limit:                     aws.Int32(2), ConsistentRead: aws.Bool(true), ExclusiveStartKey: key("a", "3")}),
		query("an empty key value refused (begins_with an empty prefix)", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a AND begins_with(#sk, :p)"),
			FilterExpression:          aws.String("#n > :z OR attribute_not_exists(#s)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":p": s(""), ":z": n("2")},
			ScanIndexForward:          aws.Bool(false), Limit: aws.Int32(3), ConsistentRead: aws.Bool(true)}),
		query("query descending with a filter after the limit, a prefix", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a AND begins_with(#sk, :p)"),
			FilterExpression:          aws.String("#n > :z OR attribute_not_exists(#s)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":p": s("3"), ":z": n("2")},
			ScanIndexForward:          aws.Bool(false), Limit: aws.Int32(3), ConsistentRead: aws.Bool(true)}),
		query("query count", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a AND #sk > :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":s": s("1")},
			Select:                    types.SelectCount, ConsistentRead: aws.Bool(true)}),
		query("query of a global index", dynamodb.QueryInput{IndexName: aws.String("byStatus"),
			KeyConditionExpression:    aws.String("#s = :c"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed")}}),
		query("a KEYS_ONLY global index answers the keys only", dynamodb.QueryInput{IndexName: aws.String("byStatusKeys"),
			KeyConditionExpression: aws.String("#s = :c"), ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed")}}),
		query("a KEYS_ONLY global index cannot fetch: refused", dynamodb.QueryInput{IndexName: aws.String("byStatusKeys"),
			KeyConditionExpression: aws.String("#s = :c"), ProjectionExpression: aws.String("#pk, #n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed")}}),
		query("a filter on what a KEYS_ONLY global index lacks refused", dynamodb.QueryInput{IndexName: aws.String("byStatusKeys"),
			KeyConditionExpression: aws.String("#s = :c"), FilterExpression: aws.String("attribute_exists(#n)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed")}}),
		query("a filter on what a KEYS_ONLY local index lacks refused", dynamodb.QueryInput{IndexName: aws.String("localStatusKeys"),
			KeyConditionExpression: aws.String("#pk = :b"), FilterExpression: aws.String("#n > :z"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": s("b"), ":z": n("0")}}),
		query("ALL_ATTRIBUTES of a KEYS_ONLY global index refused", dynamodb.QueryInput{IndexName: aws.String("byStatusKeys"),
			KeyConditionExpression: aws.String("#s = :c"), Select: types.SelectAllAttributes,
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed")}}),
		query("an INCLUDE global index answers its attributes, filters on them", dynamodb.QueryInput{IndexName: aws.String("byStatusN"),
			KeyConditionExpression: aws.String("#s = :c"), FilterExpression: aws.String("#n > :z"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed"), ":z": n("0")}}),
		query("a KEYS_ONLY local index answers the keys only", dynamodb.QueryInput{IndexName: aws.String("localStatusKeys"),
			KeyConditionExpression: aws.String("#pk = :b"), ExpressionAttributeValues: map[string]types.AttributeValue{":b": s("b")}}),
		query("ALL_ATTRIBUTES of a local index fetches the items", dynamodb.QueryInput{IndexName: aws.String("localStatusKeys"),
			KeyConditionExpression: aws.String("#pk = :b"), Select: types.SelectAllAttributes,
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": s("b")}}),
		query("a local index fetches what a projection names", dynamodb.QueryInput{IndexName: aws.String("localStatusKeys"),
			KeyConditionExpression: aws.String("#pk = :b AND #s = :o"), ProjectionExpression: aws.String("#sk, #n"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": s("b"), ":o": s("open")}}),
		query("ALL_PROJECTED_ATTRIBUTES of a table refused", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a"),
			Select: types.SelectAllProjectedAttributes, ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")}}),
		query("a filter on a global index's key attribute refused", dynamodb.QueryInput{IndexName: aws.String("byStatus"),
			KeyConditionExpression: aws.String("#s = :c"), FilterExpression: aws.String("#sk = :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed"), ":one": s("1")}}),
		query("a filter on the table's hash key in a global index query", dynamodb.QueryInput{IndexName: aws.String("byStatus"),
			KeyConditionExpression: aws.String("#s = :c"), FilterExpression: aws.String("#pk = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":c": s("closed"), ":a": s("a")}}),
		{"a scan of a KEYS_ONLY global index", func(ctx context.Context, c Client) (any, error) {
			return c.Scan(ctx, &dynamodb.ScanInput{TableName: tbl, IndexName: aws.String("byStatusKeys")})
		}},
		query("a filter on a key attribute refused", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a"),
			FilterExpression:          aws.String("#sk = :s"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a"), ":s": s("1")}}),
		query("a limit of 0 refused", dynamodb.QueryInput{KeyConditionExpression: aws.String("#pk = :a"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("a")}, Limit: aws.Int32(0)}),
		{"a transaction cancelled by its check", func(ctx context.Context, c Client) (any, error) {
			return c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: tbl, Item: item("c", "1", "n", n("1"))}},
				{ConditionCheck: &types.ConditionCheck{TableName: tbl, Key: key("a", "1"),
					ConditionExpression:                 aws.String("#n = :n"),
					ExpressionAttributeValues:           map[string]types.AttributeValue{":n": n("99")},
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
			}})
		}},
		{"a transaction applied", func(ctx context.Context, c Client) (any, error) {
			return c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: tbl, Item: item("c", "1", "n", n("1")), ConditionExpression: aws.String("attribute_not_exists(#pk)")}},
				{Update: &types.Update{TableName: tbl, Key: key("a", "1"), UpdateExpression: aws.String("ADD #n :one DELETE #t :x"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":x": ss("x")}}},
				{Delete: &types.Delete{TableName: tbl, Key: key("a", "4")}},
				{ConditionCheck: &types.ConditionCheck{TableName: tbl, Key: key("b", "1"), ConditionExpression: aws.String("#n < :n"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":n": n("3")}}},
			}})
		}},
		{"a transaction on one item twice refused", func(ctx context.Context, c Client) (any, error) {
			return c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Delete: &types.Delete{TableName: tbl, Key: key("c", "1")}},
				{Delete: &types.Delete{TableName: tbl, Key: key("c", "1")}},
			}})
		}},
		{"transactional reads", func(ctx context.Context, c Client) (any, error) {
			return c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
				{Get: &types.Get{TableName: tbl, Key: key("a", "1")}},
				{Get: &types.Get{TableName: tbl, Key: key("a", "4")}},
				{Get: &types.Get{TableName: tbl, Key: key("c", "1"), ProjectionExpression: aws.String("#n")}},
			}})
		}},
		{"a batch read of one key twice refused", func(ctx context.Context, c Client) (any, error) {
			return c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: []map[string]types.AttributeValue{key("a", "1"), key("a", "1")}}}})
		}},
		{"a batch read", func(ctx context.Context, c Client) (any, error) {
			return c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: []map[string]types.AttributeValue{key("a", "1"), key("a", "8"), key("b", "1")}, ConsistentRead: aws.Bool(true)}}})
		}},
		{"a scan with a filter", func(ctx context.Context, c Client) (any, error) {
			return c.Scan(ctx, &dynamodb.ScanInput{TableName: tbl, ConsistentRead: aws.Bool(true),
				FilterExpression:          aws.String("size(#l) >= :one OR #n >= :seven"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":one": n("1"), ":seven": n("7")}})
		}},
	}
}

// conformOutcome renders what a call answered in a form both servers must
// agree on: the error code (and the item a failed condition hands back, or
// a cancelled transaction's reasons), or the output's items, counts and
// position. A scan's items are sorted: its order is the server's own.
func conformOutcome(out any, err error) string {
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		var tce *types.TransactionCanceledException
		var api smithy.APIError
		switch {
		case errors.As(err, &ccf):
			return "ConditionalCheckFailed item=" + canonItem(ccf.Item)
		case errors.As(err, &tce):
			var rs []string
			for _, r := range tce.CancellationReasons {
				rs = append(rs, aws.ToString(r.Code)+" "+canonItem(r.Item))
			}
			return "TransactionCanceled [" + strings.Join(rs, ", ") + "]"
		case errors.As(err, &api):
			return "error " + api.ErrorCode()
		}
		return "error " + err.Error()
	}
	switch o := out.(type) {
	case *dynamodb.PutItemOutput:
		return "put old=" + canonItem(o.Attributes)
	case *dynamodb.UpdateItemOutput:
		return "update attributes=" + canonItem(o.Attributes)
	case *dynamodb.DeleteItemOutput:
		return "delete old=" + canonItem(o.Attributes)
	case *dynamodb.GetItemOutput:
		return "get " + canonItem(o.Item)
	case *dynamodb.QueryOutput:
		return fmt.Sprintf("query count=%d scanned=%d items=%s last=%s", o.Count, o.ScannedCount, canonItems(o.Items, false), canonItem(o.LastEvaluatedKey))
	case *dynamodb.ScanOutput:
		return fmt.Sprintf("scan count=%d scanned=%d items=%s last=%s", o.Count, o.ScannedCount, canonItems(o.Items, true), canonItem(o.LastEvaluatedKey))
	case *dynamodb.TransactWriteItemsOutput:
		return "transaction applied"
	case *dynamodb.TransactGetItemsOutput:
		var items []map[string]types.AttributeValue
		for _, r := range o.Responses {
			items = append(items, r.Item)
		}
		return "transactional reads " + canonItems(items, false)
	case *dynamodb.BatchGetItemOutput:
		var parts []string
		for table, items := range o.Responses {
			parts = append(parts, table+": "+canonItems(items, true))
		}
		slices.Sort(parts)
		return fmt.Sprintf("batch read %s unprocessed=%d", strings.Join(parts, "; "), len(o.UnprocessedKeys))
	}
	return fmt.Sprintf("%T", out)
}

func canonItems(items []map[string]types.AttributeValue, sorted bool) string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = canonItem(it)
	}
	if sorted {
		slices.Sort(out)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func canonItem(it map[string]types.AttributeValue) string {
	if it == nil {
		return "none"
	}
	return canonAV(&types.AttributeValueMemberM{Value: it})
}

// canonAV renders v with map keys and set members sorted (their order is
// the server's own); numbers are compared as the text the server returns.
func canonAV(v types.AttributeValue) string {
	num := func(s string) string { return "n" + s }
	set := func(tag string, vs []string, f func(string) string) string {
		out := make([]string, len(vs))
		for i, s := range vs {
			out[i] = f(s)
		}
		slices.Sort(out)
		return tag + "{" + strings.Join(out, ",") + "}"
	}
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return fmt.Sprintf("%q", v.Value)
	case *types.AttributeValueMemberN:
		return num(v.Value)
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("b%x", v.Value)
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprint(v.Value)
	case *types.AttributeValueMemberNULL:
		return "null"
	case *types.AttributeValueMemberSS:
		return set("ss", v.Value, func(s string) string { return fmt.Sprintf("%q", s) })
	case *types.AttributeValueMemberNS:
		return set("ns", v.Value, num)
	case *types.AttributeValueMemberBS:
		hex := make([]string, len(v.Value))
		for i, b := range v.Value {
			hex[i] = fmt.Sprintf("%x", b)
		}
		return set("bs", hex, func(s string) string { return s })
	case *types.AttributeValueMemberL:
		out := make([]string, len(v.Value))
		for i, e := range v.Value {
			out[i] = canonAV(e)
		}
		return "[" + strings.Join(out, ",") + "]"
	case *types.AttributeValueMemberM:
		keys := make([]string, 0, len(v.Value))
		for k := range v.Value {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]string, len(keys))
		for i, k := range keys {
			out[i] = k + ":" + canonAV(v.Value[k])
		}
		return "{" + strings.Join(out, ",") + "}"
	}
	return fmt.Sprintf("%T", v)
}
